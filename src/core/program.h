// A prepared call's program: every step it will run, with the level (and so the group and its
// fabric) of each and the element ranges it moves, made by prepare() (core/prepare.cc) on the
// issuing thread. run() (core/dispatch.cc) only executes it: it decomposes nothing and plans
// nothing. This is the seam a per-step timeline instruments and a reordering pipeline reorders.
//
// Buffers are named by role, not by address, so that one program serves every call of its shape
// (a fusion pack's buffers are only known when it runs): a pass works on elements
// [offset, offset + count) of the call's buffers, and each step's ranges (plan::Step's offset,
// counts and displs) are relative to the pass's working buffer, as core/run_steps.h says.
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <utility>
#include <vector>

#include "common/collective.h"
#include "decompose/rooted.h"
#include "decompose/schedule.h"

namespace strata::core {

struct LevelGroup;
struct PlanExec;

// A schedule: shared, so a program keeps its steps however long it waits in the engine's
// queue, whatever the cache that made them evicts meanwhile.
using Schedule = std::shared_ptr<const std::vector<plan::Step>>;

// What a cached schedule is the schedule of: a collective of `count` elements (a broadcast or
// reduce also by its form and root). Every field that changes the steps is in the key.
struct ScheduleKey {
  Collective coll = Collective::kAllReduce;
  size_t count = 0;
  plan::RootedForm form = plan::RootedForm::kFlat;  // broadcast and reduce
  int root = 0;                                     // broadcast and reduce
  plan::BlockForm blocks = plan::BlockForm::kFlat;  // reduce-scatter and all-gather
  bool operator<(const ScheduleKey& o) const {
    return std::tie(coll, count, form, root, blocks) <
           std::tie(o.coll, o.count, o.form, o.root, o.blocks);
  }
};

// Schedules by key, so repeated calls of one size compute nothing new. Bounded (a training loop
// has few sizes): when full, it starts over; programs keep the schedules they hold. Shared by
// the issuing thread (prepare) and the runner (a fusion pack cut at run time plans its passes
// there, core/fusion_queue.h), hence the lock; a lookup is one uncontended lock.
class ScheduleCache {
 public:
  template <typename Make>
  Schedule get(const ScheduleKey& key, Make make) {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    if (cache_.size() >= kMaxEntries) cache_.clear();
    Schedule made = std::make_shared<const std::vector<plan::Step>>(make());
    cache_.emplace(key, made);
    return made;
  }

 private:
  static constexpr size_t kMaxEntries = 256;
  std::mutex mutex_;
  std::map<ScheduleKey, Schedule> cache_;
};

// One pass: a whole collective of `count` elements at element `offset` of the call's buffers
// (a reduce-scatter's or all-gather's: columns [offset, offset + count) of every rank's block).
struct ProgramPass {
  size_t offset = 0;
  size_t count = 0;
  Schedule steps;  // an allreduce pass's: those of one full pipeline piece
  // An allreduce pass: its plan (stage groups, wire types), its pipeline pieces (the last one
  // shorter, with its own steps) and whether the pieces overlap (core/run_steps.h). Decided
  // from what every rank knows alike: all members of a group run its collectives in one order.
  const PlanExec* exec = nullptr;
  size_t pieceElements = 0;
  Schedule lastPiece;
  bool overlap = false;
  plan::RootedForm form = plan::RootedForm::kFlat;  // a broadcast's or reduce's pass
};

struct Program {
  enum class Shape {
    kNothing,    // count 0: no step
    kCopy,       // one rank: recvbuff <- sendbuff, unless in place
    kAllReduce,  // passes, each pipelined under its plan
    kDirect,     // reduce-scatter or all-gather: one flat fabric call between the user's
                 // buffers, with passes[0].steps[0]'s counts and displacements
    kBlocks,     // reduce-scatter or all-gather through scratch: each pass gathers its columns
                 // of every rank's block (rank j's at blockOrder[j]), runs its steps there
    kRooted,     // broadcast or reduce passes on the hierarchy's own level groups
    kPeer,       // one send or receive on the flat group
  };
  Shape shape = Shape::kNothing;
  std::vector<ProgramPass> passes;
  std::shared_ptr<const std::vector<size_t>> blockOrder;  // kBlocks
};

// Programs are shared: one per call shape, reused by every call of that shape.
using ProgramRef = std::shared_ptr<const Program>;

// What a cached program is the program of: everything that changes it. The buffers only count
// through `inPlace` (a reduce-scatter in place runs through scratch); the type through its size.
struct ProgramKey {
  Collective coll = Collective::kAllReduce;
  size_t count = 0;
  size_t typeSize = 0;
  int root = 0;
  bool inPlace = false;
  bool operator<(const ProgramKey& o) const {
    return std::tie(coll, count, typeSize, root, inPlace) <
           std::tie(o.coll, o.count, o.typeSize, o.root, o.inPlace);
  }
};

// Programs by key, so a training loop's repeated calls prepare nothing new: one lookup. The
// issuing thread's only (PlanBook::programs); bounded like ScheduleCache, and programs already
// handed out stay alive with their calls.
class ProgramCache {
 public:
  ProgramRef find(const ProgramKey& key) const {
    auto it = cache_.find(key);
    return it == cache_.end() ? nullptr : it->second;
  }
  ProgramRef add(const ProgramKey& key, Program program) {
    if (cache_.size() >= kMaxEntries) cache_.clear();
    ProgramRef made = std::make_shared<const Program>(std::move(program));
    cache_[key] = made;
    return made;
  }

 private:
  static constexpr size_t kMaxEntries = 256;
  std::map<ProgramKey, ProgramRef> cache_;
};

}  // namespace strata::core
