// ProcessGroupStrata: torch.distributed's backend "strata", over strata's public C API.
//
// Threads and order. Every call on the group's strata communicators is issued under issue_
// (strata allows one issuing thread per communicator; DDP issues from autograd threads, the
// user from the main thread). Collectives are issued as strata's nonblocking calls, so they
// run on strata's progress thread in issue order on every rank; the completer thread waits for
// their requests in that same order (strataWaitLazy, which does not end a fusion pack's wait
// for company) and completes each Work (worker.h).
//
// Callbacks. A collective's future completes on the sequencer, one at a time in issue order,
// so its callbacks (DDP's hooks) run there in the same order on every rank. A callback may
// issue collectives of its own (PowerSGD issues two per bucket and waits for each): those are
// nested (issued at callback depth 1 or more); their futures complete on the callback pool,
// never behind the callback that waits for them, and they pass no gate. So that they reach
// strata at the same place among the other collectives on every rank, a collective issued
// from any other thread first waits (the gate) until the futures that Python asked for
// (work.get_future(), where a hook hangs its callbacks) of the earlier collectives have
// completed on the sequencer, their callbacks and nested collectives included. A callback
// that runs where it is attached, because its future was already complete, issues its
// collectives before the next gated one too. So comm_ receives, on every rank: W1, what W1's
// callbacks issue, W2, ... Works whose futures Python did not ask for (DDP's own allreduce
// asks from C++, plain async_op calls never ask) hold no gate and keep strata's queue full. A
// gate that waits past the group's timeout raises, naming the work whose callbacks it waits
// for. Sends and receives are blocking in
// strata's API, so they run on worker threads ("lanes") of their own, each with a communicator
// of its own, whose messages never mix with the collectives': sends to higher ranks and
// receives from lower ranks on one lane, the opposite direction on another (so that two ranks
// that each send to the other and then receive, as Gloo users do, do not wait for each other
// forever), and alltoall's pairwise exchanges on a third.
//
// Timeouts: the group's timeout becomes its communicators' deadline (strataConfig_t.timeoutMs):
// a call whose peers do not come fails on every rank within it, with strata's message, and the
// group is then unusable, as with NCCL's async error handling.
#pragma once

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "strata/strata.h"
#include "torch_api.h"
#include "work.h"
#include "worker.h"

namespace strata::torch_backend {

// strata's description of `result` and the last error of `comm` (or of this thread).
std::string strataMessage(strataComm_t comm, strataResult_t result);

class ProcessGroupStrata : public BackendBase {
 public:
  // A group from a unique id (strataCommInitRank): the bytes of a strataUniqueId that the
  // group's rank 0 made and passed through the group's c10d store. No MPI is involved.
  // Collective over the members.
  ProcessGroupStrata(int rank, int size, const std::string& uniqueId,
                     std::chrono::milliseconds timeout);
  // A group over `base`, a communicator of this process (a shrink's new one), whose rank and
  // size it has; takes it over. Collective over its members.
  ProcessGroupStrata(strataComm_t base, int rank, int size, std::chrono::milliseconds timeout);
  ~ProcessGroupStrata() override;

  const std::string getBackendName() const override { return "strata"; }
#ifdef STRATA_TORCH_BACKEND_SHUTDOWN
  // PyTorch 2's destroy_process_group() (c10d::Backend::shutdown, where the headers declare
  // it): releases the group's communicators now, as the destructor would, rather than when
  // the last reference goes (a DDP model may keep the group alive to the interpreter's exit).
  // Every later call on the group raises "... on a process group that was shut down".
  void shutdown() override;
#endif

  c10::intrusive_ptr<c10d::Work> broadcast(std::vector<at::Tensor>& tensors,
                                           const c10d::BroadcastOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce(std::vector<at::Tensor>& tensors,
                                           const c10d::AllreduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allreduce_coalesced(
      std::vector<at::Tensor>& tensors, const c10d::AllreduceCoalescedOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce(std::vector<at::Tensor>& tensors,
                                        const c10d::ReduceOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                           std::vector<at::Tensor>& inputs,
                                           const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _allgather_base(at::Tensor& output, at::Tensor& input,
                                                 const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter(std::vector<at::Tensor>& outputs,
                                                std::vector<std::vector<at::Tensor>>& inputs,
                                                const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> _reduce_scatter_base(
      at::Tensor& output, at::Tensor& input, const c10d::ReduceScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall_base(at::Tensor& output, at::Tensor& input,
                                               std::vector<int64_t>& outputSplits,
                                               std::vector<int64_t>& inputSplits,
                                               const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> alltoall(std::vector<at::Tensor>& outputs,
                                          std::vector<at::Tensor>& inputs,
                                          const c10d::AllToAllOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> allgather_coalesced(
      std::vector<std::vector<at::Tensor>>& outputLists, std::vector<at::Tensor>& inputs,
      const c10d::AllgatherOptions& opts) override;
#if STRATA_TORCH_AT_LEAST(2, 1)
  // PyTorch 2's coalesced all_gather_into_tensor and reduce_scatter_tensor (coalesced.cc).
  c10::intrusive_ptr<c10d::Work> allgather_into_tensor_coalesced(
      std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
      const c10d::AllgatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> reduce_scatter_tensor_coalesced(
      std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs,
      const c10d::ReduceScatterOptions& opts) override;
#endif
  c10::intrusive_ptr<c10d::Work> gather(std::vector<std::vector<at::Tensor>>& outputs,
                                        std::vector<at::Tensor>& inputs,
                                        const c10d::GatherOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> scatter(std::vector<at::Tensor>& outputs,
                                         std::vector<std::vector<at::Tensor>>& inputs,
                                         const c10d::ScatterOptions& opts) override;
  c10::intrusive_ptr<c10d::Work> barrier(const c10d::BarrierOptions& opts) override;
  // strataIprobe on the lanes that carry messages to this rank, then strataRecv (any_source.cc).
  c10::intrusive_ptr<c10d::Work> recvAnysource(std::vector<at::Tensor>& tensors,
                                               int tag) override;
  // Sequence numbers (_get_sequence_number_for_group): the operations this group has issued,
  // counted alike on every member, since all issue the same operations in the same order.
  // set restarts the count at 0 (collectively, as Gloo's and NCCL's).
  void setSequenceNumberForGroup() override { seq_ = 0; }
  uint64_t getSequenceNumberForGroup() override { return seq_; }
  c10::intrusive_ptr<c10d::Work> send(std::vector<at::Tensor>& tensors, int dstRank,
                                      int tag) override;
  c10::intrusive_ptr<c10d::Work> recv(std::vector<at::Tensor>& tensors, int srcRank,
                                      int tag) override;

  // Recovery from a lost rank (recovery.cc, docs/recovery.md).
#ifdef STRATA_TORCH_BACKEND_SHRINK
  // PyTorch 2's torch.distributed.shrink_group (c10d::Backend::shrink, where the headers
  // declare it): every communicator of this group is revoked (SHRINK_ABORT: their calls in
  // flight end; SHRINK_DEFAULT: they are waited for first), strataCommShrink makes the
  // members' new communicator without `ranksToExclude` (the survivors agree on them), and a
  // new group is built on it. Collective over the remaining members. This group is then freed
  // locally (torch destroys it next).
  bool supportsShrinking() const override { return true; }
  c10::intrusive_ptr<c10d::Backend> shrink(
      const std::vector<int64_t>& ranksToExclude, int shrinkFlags,
      const c10::intrusive_ptr<Options>& optsOverride) override;
#endif
  // The ranks of this group (in its numbering) that strata reports lost, ascending: what
  // shrink_group's ranks_to_exclude should be after an operation failed because a rank died.
  // Local; empty while strata knows of none.
  std::vector<int64_t> lostRanks();

  // strata's extensions, for strata_torch.hooks.
  // An allreduce on a communicator of this group whose inter-host stages carry `wire` ("fp16"
  // or "bf16"; made on first use, collectively: every member must call it in the same order).
  c10::intrusive_ptr<c10d::Work> allreduceCompressed(at::Tensor& tensor, c10d::ReduceOp op,
                                                     const std::string& wire);
  // CSC (strataCscAllReduce) on `tensor` in place, with the residual of slot `key` (one per
  // DDP bucket), made on first use for this tensor's size and type, and made anew (a zero
  // residual) when the slot's size or type changes.
  c10::intrusive_ptr<c10d::Work> cscAllreduce(at::Tensor& tensor, int64_t key, double density,
                                              int64_t chunkElems, c10d::ReduceOp op);
  // strataCommDescribe of the group's communicator.
  std::string describe();
  // Every live group, in creation order: the interpreter's exit frees them (strata_torch's
  // atexit), since torch.distributed does not destroy its groups at exit.
  static void shutdownAll();

 private:
  // Runs `issue` (a nonblocking strata call that sets a request) under issue_, refusing once the
  // group is shut down and throwing strata's message (of `comm`, comm_ when null) if it fails;
  // then hands the request to the completer, which completes `work` (running `after` first)
  // when it has completed. `comm` names the communicator `issue` uses when it is not comm_
  // (one of wireComms_, which live exactly as long as comm_).
  c10::intrusive_ptr<c10d::Work> track(c10::intrusive_ptr<StrataWork> work, const char* op,
                                       const std::function<strataResult_t(strataRequest_t*)>& issue,
                                       std::function<void()> after = {},
                                       strataComm_t comm = nullptr);
  // The same for a group of nonblocking calls (one request each).
  c10::intrusive_ptr<c10d::Work> trackGroup(
      c10::intrusive_ptr<StrataWork> work, const char* op,
      const std::vector<std::function<strataResult_t(strataRequest_t*)>>& issues,
      std::function<void()> after = {}, strataComm_t comm = nullptr);
  // CUDA tensors (on `device`): runs `issues` (strata's stream-ordered calls, on comm_; several
  // make one strata group) under issue_ on the current CUDA stream of `device`, then `after`
  // (copies out of temporaries, stream-ordered behind them) on that stream, and returns a
  // Work that completes when the stream passes them (cuda_ops.cc). `keep`: tensors held by the
  // Work. Refused in a build without CUDA.
  c10::intrusive_ptr<c10d::Work> onStream(
      c10d::OpType type, const char* op, const at::Device& device,
      std::vector<at::Tensor> outputs, std::vector<at::Tensor> keep,
      const std::vector<std::function<strataResult_t(strataStream_t)>>& issues,
      const std::function<void()>& after = {});
  // allreduce of a sparse COO tensor (SUM, as Gloo's): sparse.cc.
  c10::intrusive_ptr<c10d::Work> sparseAllreduce(at::Tensor& tensor,
                                                 const c10d::AllreduceOptions& opts);
  // The config of every communicator split for this group: its timeout as the deadline.
  strataConfig_t groupConfig() const;
  // The communicators of the operations, split from base_ (collective); registers the group.
  void splitForUse(int rank);
  struct Lane {
    strataComm_t comm = nullptr;
    Worker worker;
  };
  // Runs `body` (blocking strata calls on lane.comm) on the lane's thread; completes `work`.
  c10::intrusive_ptr<c10d::Work> onLane(Lane& lane, c10::intrusive_ptr<StrataWork> work,
                                        const char* op,
                                        std::function<strataResult_t(strataComm_t)> body,
                                        std::function<void()> after = {});
  void completeWhenDone(c10::intrusive_ptr<StrataWork> work, const char* op,
                        std::vector<strataRequest_t> requests, std::function<void()> after);
  // The gate (see "Callbacks" at the top): outside the backend's callbacks, waits until no
  // earlier collective whose future Python asked for is unresolved; raises past the group's
  // timeout, `op` naming the caller.
  void waitForCallbacks(const char* op);
  // Completes the future of `work` (settled) on the callback pool at callback depth `depth`.
  void resolveOnPool(c10::intrusive_ptr<StrataWork> work, int depth);
  // Stops the threads and frees the communicators: destroyed (collective) when `collective`,
  // else aborted (local). Idempotent.
  void close(bool collective);
  // close(), collectively while the group is healthy (every member tears it down alike), else
  // locally: one in its error state may have lost its peers.
  void release();

  // Every communicator of the group (base_ last), for revoking and querying them all.
  std::vector<strataComm_t> comms() const;

  std::chrono::milliseconds timeout_;
  // Shrunk (recovery.cc): release() then frees every communicator locally, as the ranks the
  // shrink excluded take no part in a collective destroy.
  std::atomic<bool> retired_{false};
  // Ranks a shrink's agreement excluded beyond the caller's list (lostRanks reports them).
  std::vector<int64_t> agreedLost_;
  std::atomic<uint64_t> seq_{0};  // operations issued (getSequenceNumberForGroup)
  strataComm_t base_ = nullptr;  // the members' communicator; the others are split from it
  strataComm_t comm_ = nullptr;  // collectives
  std::map<std::string, strataComm_t> wireComms_;  // allreduceCompressed's, by wire type
  struct Csc {
    strataCsc_t handle;
    int64_t numel;
    at::ScalarType dtype;
  };
  std::map<int64_t, Csc> csc_;
  std::mutex issue_;  // every call that issues on base_, comm_ or wireComms_
  // The CUDA device of this group's device calls, -1 before the first: strata binds a
  // communicator to the GPU current at its first device call (docs/gpu.md). Under issue_.
  int cudaDevice_ = -1;
  Lane up_, down_, a2a_;  // sends up and receives from below; the reverse; alltoall
  Worker completer_;        // waits for strata's requests in issue order, settles the Works
  Worker sequencer_;        // resolves the top-level Works' futures in issue order (depth 1)
  CallbackPool callbacks_;  // resolves the other futures (worker.h)
  // The top-level Works not yet resolved, in issue order, with their issue numbers (seq_);
  // the sequencer pops each once its callbacks have run. Guarded by orderMutex_.
  std::mutex orderMutex_;
  std::condition_variable resolved_;
  std::deque<std::pair<uint64_t, c10::intrusive_ptr<StrataWork>>> unresolved_;
};

}  // namespace strata::torch_backend
