// The communicator: its ranks and control plane, the hierarchy, one stage group (control plane
// plus fabric) per level and per plan stage, the plans, and the engine its calls run on.
//
// Threads. Setup (making groups, fabrics and plans, collectively over control planes) happens
// only on the thread that issues calls, before a call is queued; running calls (on the engine,
// core/engine.h) only read what setup made, through the pointers a prepared call holds, and
// move data over fabrics. No fabric sends data over a control plane that setup uses: the whole
// communicator's data goes over the flat group, never over the communicator's own bootstrap.
#pragma once

#include <atomic>
#include <cstddef>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "core/check.h"
#include "core/engine.h"
#include "core/settings.h"
#include "decompose/cost_model.h"
#include "decompose/plan.h"
#include "decompose/plan_file.h"
#include "decompose/rooted.h"
#include "decompose/schedule.h"
#include "fabrics/fabric.h"
#include "topology/hierarchy.h"

namespace strata::core {

// This rank's group at one level of a (possibly derived) hierarchy, when it is a member.
struct LevelGroup {
  std::unique_ptr<boot::Bootstrap> boot;   // the group's control plane; null: not a member
  std::unique_ptr<fabric::Fabric> fabric;  // host buffers
  // The same group on device buffers, made by the first device call that needs it (it may
  // wrap `fabric`, so it is declared after it and destroyed before it).
  std::unique_ptr<fabric::Fabric> deviceFabric;
  std::string fabricName;  // the level's fabric, as the hierarchy names it
  int index = -1;          // this rank's position in the group
  int size = 0;
};

// What a cached schedule is the schedule of: a collective of `count` elements (a broadcast or
// reduce also by its form and root). Every field that changes the steps is in the key.
struct ScheduleKey {
  Collective coll = Collective::kAllReduce;
  size_t count = 0;
  plan::RootedForm form = plan::RootedForm::kFlat;  // broadcast and reduce
  int root = 0;                                     // broadcast and reduce
  bool operator<(const ScheduleKey& o) const {
    return std::tie(coll, count, form, root) < std::tie(o.coll, o.count, o.form, o.root);
  }
  bool operator==(const ScheduleKey& o) const { return !(*this < o) && !(o < *this); }
};

// Schedules by key, so repeated calls of one size compute nothing new.
// Bounded (a training loop has few sizes): when full, an entry is evicted, never the one the
// previous get() returned, so the references of the last two calls stay valid (the pipeline
// holds a full piece's schedule and the last piece's).
class ScheduleCache {
 public:
  template <typename Make>
  const std::vector<plan::Step>& get(const ScheduleKey& key, Make make) {
    auto it = cache_.find(key);
    if (it == cache_.end()) {
      if (cache_.size() >= kMaxEntries) {
        auto victim = cache_.begin();
        if (victim->first == last_) ++victim;
        cache_.erase(victim);
      }
      it = cache_.emplace(key, make()).first;
    }
    last_ = key;
    return it->second;
  }

 private:
  static constexpr size_t kMaxEntries = 256;
  std::map<ScheduleKey, std::vector<plan::Step>> cache_;
  ScheduleKey last_{Collective::kGather, 0, plan::RootedForm::kFlat, -1};  // matches no key
};

// A plan ready to run: its derived hierarchy (one level per stage), the group of each stage,
// and its schedules by count.
struct PlanExec {
  plan::Plan plan;
  topo::Hierarchy derived;          // unused for passthrough
  std::vector<LevelGroup*> groups;  // per derived level; owned by the Comm
  std::string description;          // describePlan()
  ScheduleCache schedules;          // this plan's allreduce steps by count (run-time only)
  // Per derived level: the type float32 sums travel in over that stage (core/wire_steps.h).
  // The same on every rank: from the plan and agreed settings and hosts only.
  std::vector<WireType> wire;
};

// Working memory reused across calls, so the steady state allocates nothing.
class Scratch {
 public:
  void* get(size_t bytes) {
    if (bytes > buf_.size()) buf_.resize(bytes);
    return buf_.data();
  }
  // Its buffers (get()'s and the wire copies), handed over when an aborted communicator goes
  // (common/mpi_wait.h: keepUntilExit): abandoned MPI sends and receives may still name them.
  std::vector<std::vector<char>> take() {
    std::vector<std::vector<char>> all;
    all.push_back(std::move(buf_));
    for (std::vector<char>& w : wire_) all.push_back(std::move(w));
    return all;
  }
  // The wire-type copies of compressed steps (core/wire_steps.h), apart from get()'s buffer,
  // which may hold a call's working range: slot 0 for a step that runs to completion, slot 1
  // for the pipeline's allreduce in flight meanwhile.
  void* wire(int slot, size_t bytes) {
    std::vector<char>& b = wire_[slot == 0 ? 0 : 1];
    if (bytes > b.size()) b.resize(bytes);
    return b.data();
  }

 private:
  std::vector<char> buf_;
  std::vector<char> wire_[2];
};

// The GPU side of a communicator (core/device_side.h): its stream, device scratch, stream gate
// and identity. Null until the first device call.
struct DeviceState;
struct DeviceStateDeleter {
  void operator()(DeviceState* d) const;
};

// Nonblocking allreduces waiting to be fused (core/fusion_queue.h). Null until the first one.
class FusionQueue;
struct FusionQueueDeleter {
  void operator()(FusionQueue* q) const;
};

class Comm {
 public:
  // Collective over the members of `boot`: detects the hierarchy (or loads STRATA_TOPO_FILE),
  // makes the groups of its levels, loads the plans. On failure every rank returns an error
  // with the same code. `threadMultiple`: the control plane's threads allow a progress thread.
  // `origin` says in the init log line where the communicator comes from; `timeoutSeconds`,
  // when set, replaces STRATA_TIMEOUT for it (strataCommInitRankConfig's config->timeoutMs).
  struct CreateOptions {
    std::string origin = "from MPI";
    std::optional<double> timeoutSeconds;
  };
  static StatusOr<std::unique_ptr<Comm>> create(std::unique_ptr<boot::Bootstrap> boot,
                                                bool threadMultiple,
                                                const CreateOptions& opts);
  // strataCommSplit: collective over this communicator's ranks, after the calls queued on it.
  // The members passing the same color >= 0 form a communicator ordered by (key, rank); one
  // passing a negative color gets null. The new communicator's hierarchy is this one's,
  // restricted to its members; its settings are this one's, except what `opts` sets (every
  // member must set the same compression). On failure every rank returns the same error.
  struct SplitOptions {
    std::optional<WireType> compress;
    std::optional<double> timeoutSeconds;
  };
  StatusOr<std::unique_ptr<Comm>> split(int color, int key, const SplitOptions& opts = {});
  ~Comm();  // collective, unless abandon() was called; runs the calls still queued first
  Comm(const Comm&) = delete;
  Comm& operator=(const Comm&) = delete;

  // strataCommAbort: the destructor will then free only local resources. Callable from any
  // thread: a call running on the progress thread sees the cancel flag in its next wait and
  // fails at once (common/deadline.h), so the abort waits on no peer.
  void abandon();

  // The error state: after a call failed while running (a timeout, a peer's disagreement, an
  // MPI failure), every later call fails fast with that first error, strataCommGetAsyncError
  // reports it, and destroying the communicator frees it locally as strataCommAbort does (its
  // peers may be anywhere). Kept by the engine (Engine::fail and queued calls' failures).
  Status error() const { return engine_->error(); }
  // Set by abandon(); waits under a deadline scope that carries it end at once.
  const std::atomic<bool>* cancelFlag() const { return &aborted_; }

  int rank() const { return rank_; }
  int size() const { return size_; }
  // An id the same on every member, and different for any two communicators a rank holds
  // (both come from one process-wide sequence, agreed at creation as the members' maximum): the
  // order in which a group issues its communicators on every rank.
  uint64_t uid() const { return uid_; }
  // Names the communicator in logs ("commHash 0x..."), the same on every member, as NCCL's
  // commId: from rank 0's random nonce for a communicator made from MPI, from the parent's hash,
  // its split count and the color for a split. Unlike uid(), it differs between jobs and
  // between the communicators of different groups of ranks.
  uint64_t hash() const { return hash_; }
  const topo::Hierarchy& hierarchy() const { return hierarchy_; }
  const std::string& hierarchySource() const { return hierarchySource_; }
  const Settings& settings() const { return settings_; }
  boot::Bootstrap& bootstrap() { return *boot_; }
  const std::vector<plan::PlanRule>& planRules() const { return planRules_; }
  const std::string& planSource() const { return planSource_; }
  const plan::CostParams& costParams() const { return costParams_; }
  const fabric::FabricOptions& fabricOptions() const { return fabricOptions_; }

  // --- Setup: collective on first use, on the issuing thread only (see the top). ---
  // The group of this rank at `level` of `h` (the hierarchy or a plan's derived one). Every
  // rank must call it with the same h and level, in the same order.
  StatusOr<LevelGroup*> ensureGroup(const topo::Hierarchy& h, int level);
  // The plan for an allreduce of `bytes`: the plan file's rule, or the planner's choice for the
  // size bucket.
  StatusOr<PlanExec*> planForBytes(size_t bytes);
  // Makes the plans of every size up to `maxBytes` (each size bucket, or each plan-file rule,
  // that holds one), once, for packs cut on the runner thread (core/fusion_queue.h), which may
  // not set anything up. Collective like every setup; later calls return at once.
  Status prepareFusionPlans(size_t maxBytes);
  // The plan for `bytes` (at most prepareFusionPlans's maxBytes) among those: read-only, so the
  // runner may ask while the issuing thread makes other plans.
  PlanExec* fusionPlanFor(size_t bytes) const;
  // A given plan, ready to run (tools and tests that compare plans).
  StatusOr<PlanExec*> execForPlan(const plan::Plan& p);
  // The form of a broadcast or reduce of `bytes`: the planner's choice for the size bucket.
  plan::RootedForm rootedForm(Collective coll, size_t bytes);

  // --- What running calls use. ---
  LevelGroup& flat() { return *flat_; }  // the whole communicator, for its data
  const std::vector<LevelGroup*>& levels() const { return levels_; }  // the hierarchy's own
  ScheduleCache& schedules() { return schedules_; }  // reduce-scatter and all-gather steps
  Scratch& scratch() { return scratch_; }
  // Where fusion packs are packed (core/fusion.h): two, so that the next pack is packed while
  // one is on the wire (dispatch.cc); each at most STRATA_FUSION_BYTES, made on first use and
  // reused.
  Scratch& fusionBuffer(int slot) { return fusionBuffers_[slot == 0 ? 0 : 1]; }
  // Issuing thread only: the queue of fusable nonblocking allreduces (made on first use), and
  // the end of its current run when anything else is issued (core/fusion_queue.h).
  FusionQueue& fusionQueue();
  void cutFusion();
  Engine& engine() { return *engine_; }
  std::shared_ptr<Engine> sharedEngine() { return engine_; }  // for requests
  // Numbers its calls (core/check.h: Call::seq, named by every message and check); issuing
  // thread only.
  CallSequence& callSequence() { return callSequence_; }
  DeviceState* device() { return device_.get(); }
  void setDevice(std::unique_ptr<DeviceState, DeviceStateDeleter> d) { device_ = std::move(d); }

 private:
  Comm() = default;
  Status init(bool threadMultiple, const CreateOptions& opts);
  // Agrees on uid_ and hash_ (hash_ from rank 0's nonce; a split overrides it). Collective.
  Status assignUid();
  // A split's init: the hierarchy and settings come from the parent.
  Status initFrom(const Comm& parent, topo::Hierarchy hierarchy, const SplitOptions& opts);
  Status buildHierarchy();
  Status buildLevels();
  Status loadPlans();
  // With STRATA_COMPRESS on: every rank's host (hostOf_), so that plans know which stages
  // cross hosts. Collective.
  Status gatherHosts();
  // The wire type of each stage of a plan's derived hierarchy (PlanExec::wire).
  std::vector<WireType> wireOf(const plan::Plan& p, const topo::Hierarchy& derived) const;
  void dumpPlans() const;
  Status checkSameSetting(const char* name, const std::string& value, bool onlyWhetherSet = false);
  StatusOr<std::unique_ptr<PlanExec>> makeExec(const plan::Plan& chosen);
  // The key of plans_ for an allreduce of `bytes`: its size bucket, or its plan-file rule.
  int planSlot(size_t bytes) const;
  // Before a setup that talks to other ranks: runs the queued calls first. Without a progress
  // thread they run only when waited for, and ranks may wait at different points: one could
  // enter the setup's collective while a peer waits in a queued call for it. Every rank makes
  // the same setups at the same point of its call sequence, so all drain there.
  Status beginSetup() { return engine_->drain(); }

  // Declared first, destroyed last: everything below may use the control plane.
  std::unique_ptr<boot::Bootstrap> boot_;
  int rank_ = 0, size_ = 0;
  uint64_t uid_ = 0;
  uint64_t hash_ = 0;
  uint64_t splits_ = 0;  // splits made from this communicator: the same count on every member
  Settings settings_;
  topo::Hierarchy hierarchy_;
  std::string hierarchySource_;  // "topology file X", "detected: ...", ...
  fabric::FabricOptions fabricOptions_;
  // Every stage group made so far, by a signature of its membership (so plans that share a
  // group share it).
  std::map<uint64_t, std::unique_ptr<LevelGroup>> groups_;
  std::unique_ptr<LevelGroup> flat_;
  std::vector<LevelGroup*> levels_;
  std::vector<int> hostOf_;  // by rank, dense host ids; empty unless STRATA_COMPRESS is on
  std::vector<plan::PlanRule> planRules_;  // empty: no plan file
  std::string planSource_;
  plan::CostParams costParams_;
  std::map<int, std::unique_ptr<PlanExec>> plans_;                // by bucket or rule index
  std::vector<PlanExec*> fusionPlans_;  // by bucket or rule index, up to the fusion limit
  std::map<std::string, std::unique_ptr<PlanExec>> forcedPlans_;  // by description
  std::map<std::pair<int, int>, plan::RootedForm> rootedForms_;   // by (collective, bucket)
  ScheduleCache schedules_;
  Scratch scratch_;
  Scratch fusionBuffers_[2];
  std::unique_ptr<FusionQueue, FusionQueueDeleter> fusionQueue_;
  CallSequence callSequence_;
  std::unique_ptr<DeviceState, DeviceStateDeleter> device_;
  std::atomic<bool> aborted_{false};
  // Declared last, stopped first: it runs the queued calls, which use everything above.
  // Shared with the requests of nonblocking calls, which may outlive the communicator.
  std::shared_ptr<Engine> engine_;
};

}  // namespace strata::core
