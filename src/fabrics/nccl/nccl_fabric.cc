#include "fabrics/nccl/nccl_fabric.h"

#include <cuda_runtime.h>
#include <nccl.h>

#include "common/buffer.h"
#include "common/cuda_check.h"
#include "common/datatype.h"
#include "common/env.h"
#include "common/log.h"
#include "fabrics/nccl/nccl_check.h"
#include "fabrics/nccl/nccl_lib.h"

namespace strata::fabric {
namespace {

// strata's enums carry NCCL's values (include/strata/strata.h), so a cast converts them.
static_assert(int(strataInt8) == int(ncclInt8) && int(strataUint8) == int(ncclUint8) &&
                  int(strataInt32) == int(ncclInt32) && int(strataUint32) == int(ncclUint32) &&
                  int(strataInt64) == int(ncclInt64) && int(strataUint64) == int(ncclUint64) &&
                  int(strataFloat16) == int(ncclFloat16) &&
                  int(strataFloat32) == int(ncclFloat32) &&
                  int(strataFloat64) == int(ncclFloat64) &&
                  int(strataBfloat16) == int(ncclBfloat16),
              "strataDataType_t values must equal ncclDataType_t's");
static_assert(int(strataSum) == int(ncclSum) && int(strataProd) == int(ncclProd) &&
                  int(strataMax) == int(ncclMax) && int(strataMin) == int(ncclMin) &&
                  int(strataAvg) == int(ncclAvg),
              "strataRedOp_t values must equal ncclRedOp_t's");

// The real NCCL; loaded (createNcclFabric made sure) before any fabric exists.
const nccl_lib::Api& nccl() { return *nccl_lib::loaded(); }

ncclDataType_t toNccl(strataDataType_t t) { return static_cast<ncclDataType_t>(t); }
ncclRedOp_t toNccl(strataRedOp_t op) { return static_cast<ncclRedOp_t>(op); }

class NcclFabric final : public Fabric {
 public:
  NcclFabric(ncclComm_t comm, cudaStream_t stream, int rank, int size)
      : comm_(comm), stream_(stream), current_(stream), rank_(rank), size_(size) {}

  // Never throws. A healthy fabric drains the communicator's stream and destroys the NCCL
  // communicator (ncclCommDestroy finishes what is still queued on other streams). After a
  // failure a peer may never reach its side of a collective still queued here, so waiting could
  // hang: abort instead (ncclCommAbort stops the kernels and frees the local resources).
  ~NcclFabric() override {
    if (healthy_) {
      const cudaError_t synced = cudaStreamSynchronize(stream_);
      if (synced == cudaSuccess) {
        const ncclResult_t rc = nccl().ncclCommDestroy(comm_);
        if (rc != ncclSuccess) {
          STRATA_WARN(kSubsysFabric, "ncclCommDestroy failed: %s", nccl().ncclGetErrorString(rc));
        }
        return;
      }
      STRATA_WARN(kSubsysFabric, "nccl fabric: cudaStreamSynchronize failed at destruction: %s",
                  cudaGetErrorString(synced));
    }
    const ncclResult_t rc = nccl().ncclCommAbort(comm_);
    if (rc != ncclSuccess) {
      STRATA_WARN(kSubsysFabric, "ncclCommAbort failed: %s", nccl().ncclGetErrorString(rc));
    }
  }

  // An abandoned communicator is aborted, not destroyed: ncclCommDestroy may wait for peers.
  void abandon() override { healthy_ = false; }

  NcclFabric(const NcclFabric&) = delete;
  NcclFabric& operator=(const NcclFabric&) = delete;

  const char* name() const override { return "nccl"; }
  bool streamOrdered() const override { return true; }
  void useStream(void* stream) override { current_ = static_cast<cudaStream_t>(stream); }
  int size() const override { return size_; }
  int rank() const override { return rank_; }

  Status reduceScatter(const void* in, void* out, const size_t* counts, const size_t* displs,
                       strataDataType_t type, strataRedOp_t op) override {
    const size_t ts = dataTypeSize(type);
    if (evenBlocks(counts, displs)) {
      if (counts[0] == 0) return Status::ok();
      // NCCL is in place exactly when out == in + rank * count, which is strata's condition.
      return finish(STRATA_NCCL_STATUS(
          nccl().ncclReduceScatter(in, out, counts[0], toNccl(type), toNccl(op), comm_, current_), comm_));
    }
    // Uneven blocks. ncclReduceScatter takes one count for every member; Horovod, facing the
    // same problem, reduce-scatters the evenly divisible part and treats the remainder as a
    // separate step. One ncclReduce per member j (root j, the block at displs[j]), all in one
    // NCCL group, handles any counts in a single launch, with no padding or staging copies.
    // Only root j writes its `out` (NCCL ignores recvbuff elsewhere). In place, root j's
    // recvbuff is its sendbuff, which ncclReduce allows; the other reduces read other blocks.
    return finish(grouped("ncclReduce", counts, [&](int j) {
      return nccl().ncclReduce(at(in, displs[j], ts), out, counts[j], toNccl(type), toNccl(op), j, comm_,
                        current_);
    }));
  }

  Status allGather(const void* in, void* out, const size_t* counts, const size_t* displs,
                   strataDataType_t type) override {
    const size_t ts = dataTypeSize(type);
    if (evenBlocks(counts, displs)) {
      if (counts[0] == 0) return Status::ok();
      // In place exactly when in == out + rank * count, as for strata.
      return finish(STRATA_NCCL_STATUS(
          nccl().ncclAllGather(in, out, counts[0], toNccl(type), comm_, current_), comm_));
    }
    // Uneven blocks: one broadcast per member from its own block (sendbuff is read on the root
    // only). In place, the root's sendbuff is its recvbuff, which ncclBroadcast allows.
    return finish(grouped("ncclBroadcast", counts, [&](int j) {
      return nccl().ncclBroadcast(in, at(out, displs[j], ts), counts[j], toNccl(type), j, comm_, current_);
    }));
  }

  Status allReduce(const void* in, void* out, size_t count, strataDataType_t type,
                   strataRedOp_t op) override {
    if (count == 0) return Status::ok();
    return finish(enqueueAllReduce(in, out, count, type, op));
  }

  // Enqueues, as every operation here; the stream runs it while the caller's thread does other
  // fabrics' work.
  Status allReduceStart(const void* in, void* out, size_t count, strataDataType_t type,
                        strataRedOp_t op) override {
    if (count == 0) return Status::ok();
    Status st = enqueueAllReduce(in, out, count, type, op);
    if (!st.isOk()) healthy_ = false;
    return st;
  }

  void progress() override {}  // the GPU advances the collective on its own

  // The stream orders whatever the caller enqueues next after it: nothing to wait for here.
  Status allReduceWait() override { return finish(Status::ok()); }

  Status broadcast(const void* in, void* out, size_t count, strataDataType_t type,
                   int root) override {
    if (count == 0) return Status::ok();
    return finish(STRATA_NCCL_STATUS(
        nccl().ncclBroadcast(in, out, count, toNccl(type), root, comm_, current_), comm_));
  }

  Status reduce(const void* in, void* out, size_t count, strataDataType_t type, strataRedOp_t op,
                int root) override {
    if (count == 0) return Status::ok();
    return finish(STRATA_NCCL_STATUS(
        nccl().ncclReduce(in, out, count, toNccl(type), toNccl(op), root, comm_, current_), comm_));
  }

  // NCCL has no scatter or gather: point-to-point from (to) the root, in one NCCL group, the
  // root's own block copied on the stream.
  Status scatter(const void* in, void* out, const size_t* counts, const size_t* displs,
                 strataDataType_t type, int root) override {
    const size_t ts = dataTypeSize(type);
    if (rank_ != root) {
      if (counts[rank_] == 0) return Status::ok();
      return finish(STRATA_NCCL_STATUS(
          nccl().ncclRecv(out, counts[rank_], toNccl(type), root, comm_, current_), comm_));
    }
    STRATA_RETURN_IF_ERROR(copyOwn(out, at(in, displs[root], ts), counts[root] * ts));
    return finish(grouped("ncclSend", counts, [&](int j) {
      return j == root
                 ? ncclSuccess
                 : nccl().ncclSend(at(in, displs[j], ts), counts[j], toNccl(type), j, comm_, current_);
    }));
  }

  Status gather(const void* in, void* out, const size_t* counts, const size_t* displs,
                strataDataType_t type, int root) override {
    const size_t ts = dataTypeSize(type);
    if (rank_ != root) {
      if (counts[rank_] == 0) return Status::ok();
      return finish(STRATA_NCCL_STATUS(
          nccl().ncclSend(in, counts[rank_], toNccl(type), root, comm_, current_), comm_));
    }
    STRATA_RETURN_IF_ERROR(copyOwn(at(out, displs[root], ts), in, counts[root] * ts));
    return finish(grouped("ncclRecv", counts, [&](int j) {
      return j == root
                 ? ncclSuccess
                 : nccl().ncclRecv(at(out, displs[j], ts), counts[j], toNccl(type), j, comm_, current_);
    }));
  }

  Status exchange(const PeerOp* ops, size_t n) override {
    for (size_t i = 0; i < n;) {
      STRATA_NCCL_CHECK(nccl().ncclGroupStart(), comm_);
      ncclResult_t failed = ncclSuccess;
      for (int k = 0; i < n && k < kMaxGroupOps && failed == ncclSuccess; ++i) {
        const PeerOp& op = ops[i];
        if (op.count == 0) continue;
        ++k;
        failed = op.send ? nccl().ncclSend(op.buf, op.count, toNccl(op.type), op.peer, comm_, current_)
                         : nccl().ncclRecv(op.buf, op.count, toNccl(op.type), op.peer, comm_, current_);
      }
      if (failed != ncclSuccess) {
        Status st = ncclFailure("ncclSend/ncclRecv", failed, comm_, __FILE__, __LINE__);
        (void)nccl().ncclGroupEnd();
        healthy_ = false;
        return st;
      }
      STRATA_NCCL_CHECK(nccl().ncclGroupEnd(), comm_);
    }
    return finish(Status::ok());
  }

 private:
  // The root's own block of a scatter or gather, on the stream (nothing in place).
  Status copyOwn(void* dst, const void* src, size_t bytes) {
    if (dst == src || bytes == 0) return Status::ok();
    STRATA_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, current_));
    return Status::ok();
  }

  // NCCL allows at most this many operations between ncclGroupStart and ncclGroupEnd.
  static constexpr int kMaxGroupOps = 2048;

  Status enqueueAllReduce(const void* in, void* out, size_t count, strataDataType_t type,
                          strataRedOp_t op) {
    // In place when in == out; NCCL handles it.
    return STRATA_NCCL_STATUS(
        nccl().ncclAllReduce(in, out, count, toNccl(type), toNccl(op), comm_, current_), comm_);
  }

  // True when every block has the same count c and block j starts at j * c: the layout NCCL's
  // reduce-scatter and all-gather take.
  bool evenBlocks(const size_t* counts, const size_t* displs) const {
    for (int j = 0; j < size_; ++j) {
      if (counts[j] != counts[0] || displs[j] != static_cast<size_t>(j) * counts[0]) return false;
    }
    return true;
  }

  // Issues issue(j) for every member j with counts[j] > 0, grouped so that NCCL launches them
  // together. Every member issues the same sequence (the counts are the same everywhere), which
  // is how NCCL pairs the per-root collectives up. Groups past kMaxGroupOps are split; each
  // group still holds whole collectives, so the split changes nothing for the peers.
  template <typename Issue>
  Status grouped(const char* call, const size_t* counts, Issue issue) {
    int j = 0;
    while (j < size_) {
      STRATA_NCCL_CHECK(nccl().ncclGroupStart(), comm_);
      ncclResult_t failed = ncclSuccess;
      for (int ops = 0; j < size_ && ops < kMaxGroupOps && failed == ncclSuccess; ++j) {
        if (counts[j] == 0) continue;
        ++ops;
        failed = issue(j);
      }
      if (failed != ncclSuccess) {
        Status st = ncclFailure(call, failed, comm_, __FILE__, __LINE__);
        (void)nccl().ncclGroupEnd();  // closes the group; its error is the one just logged
        return st;
      }
      STRATA_NCCL_CHECK(nccl().ncclGroupEnd(), comm_);
    }
    return Status::ok();
  }

  // Enqueued: NCCL's operations only enqueue (the caller orders or waits for the stream). An
  // error NCCL already knows of (reported asynchronously, e.g. by a peer or the network) is
  // asked for without waiting. A failure marks the fabric unhealthy, so the destructor aborts
  // the communicator instead of waiting on it.
  Status finish(Status enqueued) {
    Status st = enqueued.isOk() ? asyncError() : enqueued;
    if (!st.isOk()) healthy_ = false;
    return st;
  }

  Status asyncError() {
    ncclResult_t async = ncclSuccess;
    STRATA_NCCL_CHECK(nccl().ncclCommGetAsyncError(comm_, &async), comm_);
    if (async != ncclSuccess) {
      return ncclFailure("nccl communicator (asynchronous error)", async, comm_, __FILE__,
                         __LINE__);
    }
    return Status::ok();
  }

  ncclComm_t comm_;       // owned
  cudaStream_t stream_;   // the communicator's (owned by the caller): drained at destruction
  cudaStream_t current_;  // where operations enqueue (useStream)
  int rank_, size_;
  bool healthy_ = true;  // false after any failed operation
};

// The id member 0 makes, with whether making it worked: member 0 takes part in the broadcast
// even when ncclGetUniqueId failed, so that the others learn it instead of waiting forever in
// ncclCommInitRank.
struct UniqueIdMessage {
  ncclUniqueId id;
  int ok;
};

}  // namespace

FabricTraits ncclTraits() {
  FabricTraits t;
  t.name = "nccl";
  t.memory = MemoryKind::kDevice;
  t.sameHost = true;
  t.async = true;
  return t;
}

StatusOr<std::unique_ptr<Fabric>> createNcclFabric(boot::Bootstrap& group, Fabric*,
                                                   const FabricOptions& options) {
  const int rank = group.rank(), size = group.size();
  // Every member loads NCCL, and all agree on whether it worked before any of them calls it.
  std::string why;
  const std::string preferred = env::get(env::var::STRATA_NCCL_REAL_LIB);
  const bool found = nccl_lib::load(preferred.c_str(), &why) != nullptr;
  STRATA_RETURN_IF_ERROR(boot::agree(
      group, found ? Status::ok() : Status(Code::kSystemError, "nccl fabric: " + why)));
  if (rank == 0) STRATA_INFO(kSubsysFabric, "nccl fabric: NCCL from %s", nccl().path.c_str());
  UniqueIdMessage boot{};
  Status made = Status::ok();
  if (rank == 0) {
    made = STRATA_NCCL_STATUS(nccl().ncclGetUniqueId(&boot.id), nullptr);
    boot.ok = made.isOk() ? 1 : 0;
  }
  STRATA_RETURN_IF_ERROR(group.broadcast(&boot, sizeof(boot), 0));
  if (boot.ok == 0) {
    if (rank == 0) return made;
    return Status(Code::kRemoteError,
                  "nccl fabric: member 0 of the group could not create "
                  "the nccl unique id");
  }

  ncclComm_t comm = nullptr;
  const Status init = STRATA_NCCL_STATUS(nccl().ncclCommInitRank(&comm, size, boot.id, rank), nullptr);
  // Every member's init must have worked, or none keeps its communicator: the fabric is used
  // collectively, so a member without one would leave the others waiting in their first call.
  // NCCL frees a communicator whose init failed; only the successful ones need aborting.
  const Status all = boot::agree(group, init);
  if (!all.isOk()) {
    if (init.isOk()) (void)nccl().ncclCommAbort(comm);
    return all;
  }
  STRATA_INFO(kSubsysFabric, "nccl fabric: member %d of %d ready", rank, size);
  return std::unique_ptr<Fabric>(
      std::make_unique<NcclFabric>(comm, static_cast<cudaStream_t>(options.stream), rank, size));
}

}  // namespace strata::fabric
