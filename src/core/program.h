// A prepared call's program (core/instr.h's instructions) and the caches that keep programs and
// schedules, so that a training loop's repeated calls prepare nothing new.
//
// Buffers are named by role, not by address, so that one program serves every call of its shape
// (a fusion pack's buffers are only known when it runs).
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <utility>
#include <vector>

#include "common/collective.h"
#include "core/instr.h"
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

// A program is a flat list of typed instructions (core/instr.h), made entirely by prepare() on
// the issuing thread and run by one executor loop (core/run.h: execute). Everything a call's
// run could decide is decided here: which fabric (group) each step runs on and in which wire
// type, where the pipeline starts and waits for its allreduce, the copies in and out of
// scratch, the average's division, a fusion pack's pack and unpack. The run decides nothing.
struct Program {
  // What kind of program, for traces and for groupsOf; the executor never reads it.
  enum class Shape {
    kNothing,    // count 0: no instruction
    kCopy,       // one rank: recvbuff <- sendbuff, unless in place
    kAllReduce,  // passes, each pipelined under its plan
    kDirect,     // reduce-scatter or all-gather: one flat fabric call between the user's buffers
    kBlocks,     // reduce-scatter or all-gather through scratch, pass by pass over the columns
    kRooted,     // broadcast or reduce passes on the hierarchy's own level groups
    kPeer,       // one send or receive on the flat group
  };
  Shape shape = Shape::kNothing;
  std::vector<Instr> code;
  // Scratch the code uses (Buf::kScratch), in bytes: the executor provides it before the loop.
  size_t scratchBytes = 0;
  // The plans the code runs under (an allreduce's passes), for traces and groupsOf.
  std::vector<const PlanExec*> plans;
  // The schedules the instructions' steps point into, kept alive with the program.
  std::vector<Schedule> keep;
  // Device programs: who runs which instructions (core/route.h), decided by prepare() once the
  // program's device fabrics exist. Host programs: kHost, no segments (the whole code runs on
  // whichever thread runs the call).
  enum class Route : uint8_t {
    kHost,    // host memory
    kStream,  // every instruction enqueued on the caller's stream: no host thread involved
    kJoined,  // host stages run by a host thread, joined to the stream by the stream gate
  };
  struct Segment {
    size_t begin = 0, end = 0;  // code[begin, end)
    bool host = false;          // a host stage (else enqueued on the caller's stream)
  };
  Route route = Route::kHost;
  std::vector<Segment> segments;
};

// Programs are shared: one per call shape, reused by every call of that shape.
using ProgramRef = std::shared_ptr<const Program>;

// What a cached program is the program of: everything that changes it. The buffers only count
// through `inPlace` (a reduce-scatter in place runs through scratch, an allreduce or a
// broadcast's root skips its copy) and `device` (device memory: device fabrics, no wire types).
// The type and op count because the code holds them: the wire type of each step and the
// average's divisions.
struct ProgramKey {
  Collective coll = Collective::kAllReduce;
  size_t count = 0;
  int type = 0;
  int op = 0;
  int root = 0;
  bool inPlace = false;
  bool device = false;
  bool pack = false;  // a fusion pack's allreduce, in the fusion buffer
  bool operator<(const ProgramKey& o) const {
    return std::tie(coll, count, type, op, root, inPlace, device, pack) <
           std::tie(o.coll, o.count, o.type, o.op, o.root, o.inPlace, o.device, o.pack);
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
