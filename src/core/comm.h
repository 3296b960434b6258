// The communicator: its identity, settings and engine, and the owners of its state:
//   groups()  its stage groups and fabrics (core/group_table.h)        setup state
//   plans()   its plans, forms and schedules (core/plan_book.h)        setup state
//   issued()  its call numbering and fusion queue (below)              setup state
//   memory()  its working memory (core/run_memory.h)                   run state (RunningCall)
//   device()  its GPU side (core/device_side.h)                        made by setup, used by runs
// Which thread may touch which is said in types (core/threads.h): setup takes an IssuingThread,
// which outside Comm only an IssueScope hands out, and quiesce() is the one place that runs the
// queued calls first. No fabric sends data over a control plane that setup uses:
// the whole communicator's data goes over the flat group, never over its own bootstrap.
#pragma once

#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "common/deadline.h"
#include "core/caller_check.h"
#include "core/check.h"
#include "core/engine.h"
#include "core/flight_recorder.h"
#include "core/group_table.h"
#include "core/plan_book.h"
#include "core/run_memory.h"
#include "core/settings.h"
#include "core/threads.h"
#include "core/timeline.h"
#include "decompose/cost_model.h"
#include "fabrics/fabric.h"
#include "topology/hierarchy.h"

namespace strata::core {

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

// What the issuing thread keeps between calls: the numbering of its calls (core/check.h:
// Call::seq, named by every message and check) and the queue of fusable nonblocking allreduces
// (core/fusion_queue.h), made on first use.
class IssueState {
 public:
  CallSequence& sequence() { return sequence_; }
  FusionQueue& fusionQueue();
  // Anything but a fusable call was issued: the fusion queue's current run ends.
  void cutFusion();
  // strataCommNoteNextCall: the note the next call issued takes (and clears).
  void noteNextCall(std::string note) { nextNote_ = std::move(note); }
  std::string takeNote() { return std::move(nextNote_); }

 private:
  std::string nextNote_;
  CallSequence sequence_;
  std::unique_ptr<FusionQueue, FusionQueueDeleter> fusionQueue_;
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
                                                bool threadMultiple, const CreateOptions& opts);
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
  // strataCommShrink (core/split.cc): collective over the ranks not excluded. They agree on
  // the excluded set (the union of every caller's `exclude` and of the ranks any of them knows
  // lost) and make a communicator of the others, in rank order, with their hierarchy. Null and
  // strataInvalidUsage for a caller the agreement excludes. `abortFirst`: end the calls in
  // flight first (STRATA_SHRINK_ABORT) instead of waiting for them.
  StatusOr<std::unique_ptr<Comm>> shrink(const std::vector<int>& exclude, const SplitOptions& opts,
                                         bool abortFirst);
  // strataCommRevoke: calls in flight end at their next wait, queued and later ones fail with
  // strataInvalidUsage; only destroy, abort, split and shrink remain. Local; any thread.
  void revoke();
  bool revoked() const { return revoked_.load(std::memory_order_acquire); }
  // The ranks of this communicator known lost (their process is gone), with why, in the order
  // they were learned (core/recover.cc). Any thread.
  std::vector<std::pair<int, std::string>> lostMembers() const;
  // The first lost member's error (strataRemoteError naming it), or ok.
  Status lostError() const;
  // A call's failure that a lost member caused, seen first by a fabric: named so
  // (core/recover.cc).
  void attributeLoss(Status& st) const;
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
  // Set by abandon(), revoke() and a lost member; waits under a deadline scope that carries it
  // end at once, with its reason.
  const deadline::Cancel* cancelFlag() const { return &cancel_; }

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
  const plan::CostParams& costParams() const { return costParams_; }
  const fabric::FabricOptions& fabricOptions() const { return fabricOptions_; }
  Engine& engine() { return *engine_; }
  std::shared_ptr<Engine> sharedEngine() { return engine_; }  // for requests

  // Runs the calls queued so far (Engine::drain) and returns the first error of one: the one
  // place that drains, before a blocking host call (calls run in issue order) and before any
  // setup that talks to peers (a peer may be waiting in a queued call for this rank).
  Status quiesce(IssuingThread);
  // Refuses a second thread issuing while one is (core/caller_check.h): every entry takes it.
  CallerCheck& callerCheck() { return callerCheck_; }
  // The last calls, for dumps after a hang or failure (core/flight_recorder.h).
  FlightRecorder& flightRecorder() { return *flight_; }
  const FlightRecorder& flightRecorder() const { return *flight_; }
  // Dumps the flight recorder once per communicator: at the first failure while running or
  // setting up (the error state begins), or at strataCommAbort, whichever comes first.
  // `reasonLogged`: the reason was just logged at WARN; the log's summary points to it.
  void dumpOnce(const std::string& reason, bool reasonLogged = false);
  // A call failed while running or setting up: the error state begins. Logs `st` once at WARN
  // (the engine and the C boundary then do not), marks it logged, fails the engine and dumps.
  void failHere(Status& st);
  // The timeline (core/timeline.h); null when STRATA_TRACE is unset.
  Timeline* timeline() { return timeline_.get(); }

  // --- The owners. ---
  GroupTable& groups() { return groups_; }
  const GroupTable& groups() const { return groups_; }
  PlanBook& plans() { return plans_; }
  const PlanBook& plans() const { return plans_; }
  IssueState& issued(IssuingThread) { return issued_; }
  RunMemory& memory(RunningCall) { return memory_; }
  DeviceState* device() { return device_.get(); }
  void setDevice(std::unique_ptr<DeviceState, DeviceStateDeleter> d) { device_ = std::move(d); }

 private:
  friend class IssueScope;
  // The capability to set up (core/threads.h), for init, split and destruction, and for
  // IssueScope. Never from inside a running call: asserted.
  IssuingThread issuing() const;

  Comm() = default;
  Status init(bool threadMultiple, const CreateOptions& opts);
  // Agrees on uid_ and hash_ (hash_ from rank 0's nonce; a split overrides it). Collective.
  Status assignUid();
  // A shrink's new communicator over the agreed `members` (core/split.cc). Collective over
  // them; on failure it is freed locally.
  StatusOr<std::unique_ptr<Comm>> makeShrunk(std::unique_ptr<boot::Bootstrap> childBoot,
                                             const std::vector<int>& members,
                                             const SplitOptions& opts, uint64_t shrinkIndex,
                                             int attempt, const std::string& gone);
  // A split's init: the hierarchy and settings come from the parent.
  Status initFrom(const Comm& parent, topo::Hierarchy hierarchy, const SplitOptions& opts);
  Status buildHierarchy();
  // Counts this communicator's ranks on this machine; when they outnumber its cores, every
  // wait yields at once (common/spin.h). Collective.
  Status noteOversubscription();
  // STRATA_PLAN_FILE into plans_. Collective.
  Status loadPlans();
  // STRATA_TRACE's timeline, when set. Collective.
  Status openTimeline();
  Status checkSameSetting(const char* name, const std::string& value, bool onlyWhetherSet = false);
  // Hands the owners what they read of this communicator (core/setup_context.h), once its
  // identity, settings, options and engine exist.
  void bindOwners();
  // What the owners and the timeline read of this communicator (core/setup_context.h).
  SetupContext setupContext();

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
  plan::CostParams costParams_;
  // The owners, declared in the order they are made: groups outlive the plans that point to
  // them (the destructor frees them explicitly, device fabrics before the device state).
  GroupTable groups_;
  PlanBook plans_{groups_};
  RunMemory memory_;
  IssueState issued_;
  std::unique_ptr<DeviceState, DeviceStateDeleter> device_;
  std::atomic<bool> aborted_{false};
  std::atomic<bool> revoked_{false};
  // A shrink made a communicator of this one's survivors: its teardown is local, and it
  // retires its fabrics (Fabric::retire) instead of keeping what an abort keeps.
  std::atomic<bool> superseded_{false};
  deadline::Cancel cancel_;
  // Lost members (core/recover.cc): written by the control plane's watcher.
  mutable std::mutex lostMu_;
  std::vector<std::pair<int, std::string>> lost_;
  // A member's process is gone (the bootstrap's watcher, any thread): the error state begins
  // with an error naming it, and calls in flight end at their next wait.
  void memberLost(int member, uint64_t hash, const std::string& why);
  // Subscribes memberLost to the bootstrap (once boot_ and engine_ exist); undone first thing
  // in the destructor.
  void watchMembers();
  std::unique_ptr<boot::Bootstrap::Watch> watch_;  // reset first by the destructor
  CallerCheck callerCheck_;
  std::unique_ptr<FlightRecorder> flight_ = std::make_unique<FlightRecorder>(0);  // init sizes it
  std::atomic<bool> dumped_{false};
  std::unique_ptr<Timeline> timeline_;  // outlives the engine, whose calls record into it
  // Declared last, stopped first: it runs the queued calls, which use everything above.
  // Shared with the requests of nonblocking calls, which may outlive the communicator.
  std::shared_ptr<Engine> engine_;
};

// An entry's hold on a communicator (CallerScope: one issuing thread at a time) and, once held,
// the capability to set up that the issue path threads through prepare (core/threads.h). The
// only way code outside Comm gets an IssuingThread.
class IssueScope {
 public:
  IssueScope(Comm& c, const char* what) : c_(c), scope_(c.callerCheck(), what) {
    if (!scope_.status().isOk()) return;
    if (c.revoked()) {
      status_ = revokedError();
    } else if (c.cancelFlag()->isSet()) {
      // A lost member: the error state begins here for a communicator that was idle.
      status_ = c.lostError();
      if (!status_.isOk()) c.engine().fail(status_);
    }
  }
  // Not ok: another thread is inside a call on the communicator, or it was revoked (thread()
  // must not be asked then).
  const Status& status() const { return scope_.status().isOk() ? status_ : scope_.status(); }
  // What a call on a revoked communicator gets (strataInvalidUsage).
  static Status revokedError();
  IssuingThread thread() const { return c_.issuing(); }

 private:
  Comm& c_;
  CallerScope scope_;
  Status status_ = Status::ok();
};

}  // namespace strata::core
