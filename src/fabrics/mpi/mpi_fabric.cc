#include "fabrics/mpi/mpi_fabric.h"

#include <climits>
#include <cstring>
#include <vector>

#include "bootstrap/mpi_bootstrap.h"
#include "common/datatype.h"
#include "common/mpi_check.h"
#include "common/mpi_wait.h"
#include "fabrics/mpi/mpi_p2p.h"
#include "fabrics/mpi/mpi_ring.h"
#include "fabrics/mpi/mpi_small.h"
#include "fabrics/mpi/mpi_types.h"

namespace strata::fabric {
namespace {

// From this size on, an allreduce runs the point-to-point ring (mpi_ring.h); below, recursive
// doubling (blocking) or MPI_Iallreduce (started). mpiTraits tells the cost model.
constexpr size_t kMpiRingMinBytes = 64 << 10;

class MpiFabric final : public Fabric {
 public:
  MpiFabric(MPI_Comm comm, int rank, int size)
      : comm_(comm),
        rank_(rank),
        size_(size),
        counts_(size),
        displs_(size),
        ring_(comm, rank, size),
        p2p_(comm) {}

  ~MpiFabric() override {
    if (abandoned_) {
      keepUntilExit(ring_.takeScratch());
      keepUntilExit(std::move(smallScratch_));
    }
    releaseMpiOps();
  }
  // Requests in flight are abandoned (common/mpi_wait.h): the receive buffers they may name
  // outlive this fabric.
  void abandon() override { abandoned_ = true; }

  const char* name() const override { return "mpi"; }
  int size() const override { return size_; }
  int rank() const override { return rank_; }

  // Every collective is posted nonblocking and polled (common/mpi_wait.h): a peer that stalls
  // fails the call within the thread's deadline instead of holding it in MPI for ever.
  Status reduceScatter(const void* in, void* out, const size_t* counts, const size_t* displs,
                       strataDataType_t type, strataRedOp_t op) override {
    STRATA_RETURN_IF_ERROR(toIntCounts(counts, displs));
    const size_t ts = dataTypeSize(type);
    const bool inPlace = out == static_cast<const char*>(in) + displs[rank_] * ts;
    MPI_Request r = MPI_REQUEST_NULL;
    if (inPlace) {
      // MPI_IN_PLACE leaves the block at the start of the range; move it to its own place.
      // The bytes this overwrites belong to other members' blocks, which the contract allows.
      void* buf = const_cast<void*>(in);
      STRATA_RETURN_IF_ERROR(
          posted("MPI_Ireduce_scatter",
                 MPI_Ireduce_scatter(MPI_IN_PLACE, buf, counts_.data(), mpiDatatype(type),
                                     mpiOp(type, op), comm_, &r)));
      STRATA_RETURN_IF_ERROR(waitOne(r, "MPI_Ireduce_scatter", counts[rank_], type));
      if (displs[rank_] != 0) std::memmove(out, buf, counts[rank_] * ts);
      return Status::ok();
    }
    STRATA_RETURN_IF_ERROR(posted("MPI_Ireduce_scatter",
                                  MPI_Ireduce_scatter(in, out, counts_.data(), mpiDatatype(type),
                                                      mpiOp(type, op), comm_, &r)));
    return waitOne(r, "MPI_Ireduce_scatter", counts[rank_], type);
  }

  Status allGather(const void* in, void* out, const size_t* counts, const size_t* displs,
                   strataDataType_t type) override {
    STRATA_RETURN_IF_ERROR(toIntCounts(counts, displs));
    const size_t ts = dataTypeSize(type);
    const MPI_Datatype dt = mpiDatatype(type);
    MPI_Request r = MPI_REQUEST_NULL;
    const int rc = in == static_cast<const char*>(out) + displs[rank_] * ts
                       ? MPI_Iallgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out, counts_.data(),
                                         displs_.data(), dt, comm_, &r)
                       : MPI_Iallgatherv(in, counts_[rank_], dt, out, counts_.data(),
                                         displs_.data(), dt, comm_, &r);
    STRATA_RETURN_IF_ERROR(posted("MPI_Iallgatherv", rc));
    return waitOne(r, "MPI_Iallgatherv", counts[rank_], type);
  }

  // Large calls run the point-to-point ring (as allReduceStart does; mpi_ring.h), small ones
  // recursive doubling (mpi_small.h: as fast as MPI_Allreduce, unlike a polled
  // MPI_Iallreduce). The ring serves a blocking call only when no started one holds it.
  Status allReduce(const void* in, void* out, size_t count, strataDataType_t type,
                   strataRedOp_t op) override {
    if (count * dataTypeSize(type) >= kRingMinBytes && size_ > 1 && !ring_.active()) {
      STRATA_RETURN_IF_ERROR(ring_.start(in, out, count, type, op));
      Busy busy(this);  // the ring is this call's own now: progress() must not advance it
      return ring_.wait(&IdleHook::idle);
    }
    if (count > static_cast<size_t>(INT_MAX)) return tooLarge(count);
    return smallAllReduce(comm_, rank_, size_, in, out, count, type, op, smallScratch_);
  }

  Status broadcast(const void* in, void* out, size_t count, strataDataType_t type,
                   int root) override {
    if (count > static_cast<size_t>(INT_MAX)) return tooLarge(count);
    if (rank_ == root && in != out) std::memcpy(out, in, count * dataTypeSize(type));
    MPI_Request r = MPI_REQUEST_NULL;
    STRATA_RETURN_IF_ERROR(posted("MPI_Ibcast", MPI_Ibcast(out, static_cast<int>(count),
                                                           mpiDatatype(type), root, comm_, &r)));
    return waitOne(r, "MPI_Ibcast", count, type);
  }

  Status reduce(const void* in, void* out, size_t count, strataDataType_t type, strataRedOp_t op,
                int root) override {
    if (count > static_cast<size_t>(INT_MAX)) return tooLarge(count);
    const bool inPlace = rank_ == root && in == out;
    MPI_Request r = MPI_REQUEST_NULL;
    STRATA_RETURN_IF_ERROR(posted(
        "MPI_Ireduce",
        MPI_Ireduce(inPlace ? MPI_IN_PLACE : in, rank_ == root ? out : nullptr,
                    static_cast<int>(count), mpiDatatype(type), mpiOp(type, op), root, comm_, &r)));
    return waitOne(r, "MPI_Ireduce", count, type);
  }

  Status scatter(const void* in, void* out, const size_t* counts, const size_t* displs,
                 strataDataType_t type, int root) override {
    STRATA_RETURN_IF_ERROR(toIntCounts(counts, displs));
    const MPI_Datatype dt = mpiDatatype(type);
    const bool inPlace =
        rank_ == root && out == static_cast<const char*>(in) + displs[rank_] * dataTypeSize(type);
    MPI_Request r = MPI_REQUEST_NULL;
    STRATA_RETURN_IF_ERROR(
        posted("MPI_Iscatterv",
               MPI_Iscatterv(in, counts_.data(), displs_.data(), dt, inPlace ? MPI_IN_PLACE : out,
                             counts_[rank_], dt, root, comm_, &r)));
    return waitOne(r, "MPI_Iscatterv", counts[rank_], type);
  }

  Status gather(const void* in, void* out, const size_t* counts, const size_t* displs,
                strataDataType_t type, int root) override {
    STRATA_RETURN_IF_ERROR(toIntCounts(counts, displs));
    const MPI_Datatype dt = mpiDatatype(type);
    const bool inPlace =
        rank_ == root && in == static_cast<const char*>(out) + displs[rank_] * dataTypeSize(type);
    MPI_Request r = MPI_REQUEST_NULL;
    STRATA_RETURN_IF_ERROR(
        posted("MPI_Igatherv", MPI_Igatherv(inPlace ? MPI_IN_PLACE : in, counts_[rank_], dt, out,
                                            counts_.data(), displs_.data(), dt, root, comm_, &r)));
    return waitOne(r, "MPI_Igatherv", counts[rank_], type);
  }

  Status exchange(const PeerOp* ops, size_t n) override { return p2p_.run(ops, n, rank_, size_); }
  Status probe(int peer, bool* found, int* source, size_t* bytes) override {
    return p2p_.probe(peer, found, source, bytes);
  }

  // Large calls run the point-to-point ring (mpi_ring.h: both link directions busy at once);
  // small ones MPI_Iallreduce, whose latency-bound algorithms suit them.
  Status allReduceStart(const void* in, void* out, size_t count, strataDataType_t type,
                        strataRedOp_t op) override {
    if (count * dataTypeSize(type) >= kRingMinBytes && size_ > 1) {
      return ring_.start(in, out, count, type, op);
    }
    if (count > static_cast<size_t>(INT_MAX)) return tooLarge(count);
    const void* send = in == out ? MPI_IN_PLACE : in;
    startedCount_ = count;
    startedType_ = type;
    return posted("MPI_Iallreduce",
                  MPI_Iallreduce(send, out, static_cast<int>(count), mpiDatatype(type),
                                 mpiOp(type, op), comm_, &request_));
  }

  // A failure here is kept and returned by allReduceWait.
  void progress() override {
    // Re-entered from this fabric's own waits (the pipeline's IdleHook may name this fabric
    // while it waits for the very allreduce it would test): the waiter advances it itself.
    if (busy_ || !testError_.isOk()) return;
    if (ring_.active()) {
      testError_ = ring_.test();
    } else if (request_ != MPI_REQUEST_NULL) {
      int done = 0;
      const int rc = MPI_Test(&request_, &done, MPI_STATUS_IGNORE);
      if (rc != MPI_SUCCESS) {
        request_ = MPI_REQUEST_NULL;  // abandoned: never waited on again
        testError_ = mpiRequestError("MPI_Iallreduce (mpi fabric)", rc);
      }
    }
  }

  // Within the thread's deadline; after a failure nothing is left to wait on (abandoned).
  Status allReduceWait() override {
    Busy busy(this);
    Status failed = testError_;
    testError_ = Status::ok();
    Status ring = ring_.wait(&IdleHook::idle);
    if (request_ != MPI_REQUEST_NULL) {
      Status st = waitOne(request_, "MPI_Iallreduce", startedCount_, startedType_);
      if (failed.isOk()) failed = st;
    }
    if (!failed.isOk()) return failed;
    return ring;
  }

 private:
  // MPI counts and displacements are ints. The dispatcher keeps each pass below
  // STRATA_CHUNK_BYTES (at most 1 GiB), so this only fails on a broken invariant.
  Status toIntCounts(const size_t* counts, const size_t* displs) {
    for (int j = 0; j < size_; ++j) {
      if (counts[j] > static_cast<size_t>(INT_MAX) || displs[j] > static_cast<size_t>(INT_MAX)) {
        return tooLarge(counts[j] > displs[j] ? counts[j] : displs[j]);
      }
      counts_[j] = static_cast<int>(counts[j]);
      displs_[j] = static_cast<int>(displs[j]);
    }
    return Status::ok();
  }

  // While set, progress() does nothing (see there).
  struct Busy {
    explicit Busy(MpiFabric* fabric) : f(fabric), saved(fabric->busy_) { f->busy_ = true; }
    ~Busy() { f->busy_ = saved; }
    MpiFabric* f;
    bool saved;
  };

  // A collective request, polled within the thread's deadline.
  Status waitOne(MPI_Request& r, const char* call, size_t count, strataDataType_t type) {
    MpiWhat what;
    what.call = call;
    what.count = count;
    what.type = dataTypeName(type);
    what.owner = "mpi fabric";
    what.rank = rank_;
    what.size = size_;
    return mpiWaitAll(1, &r, MPI_STATUSES_IGNORE, MpiRequestKind::kCollective, what,
                      &IdleHook::idle);
  }
  static Status posted(const char* call, int rc) {
    return rc == MPI_SUCCESS ? Status::ok() : mpiRequestError(call, rc);
  }

  static Status tooLarge(size_t n) {
    return internalError("mpi fabric: " + std::to_string(n) + " elements exceed an MPI count");
  }

  MPI_Comm comm_;  // the group's bootstrap's
  int rank_, size_;
  std::vector<int> counts_, displs_;  // reused int copies, so no allocation per call
  static constexpr size_t kRingMinBytes = kMpiRingMinBytes;
  MPI_Request request_ = MPI_REQUEST_NULL;  // a small allreduce in flight (allReduceStart)
  size_t startedCount_ = 0;                 // ... its count and type, for messages
  strataDataType_t startedType_ = strataFloat32;
  RingAllReduce ring_;               // a large one
  std::vector<char> smallScratch_;   // smallAllReduce's receive buffer
  PeerExchange p2p_;                 // exchange()
  Status testError_ = Status::ok();  // a failed test of either, for allReduceWait
  bool busy_ = false;                // in allReduceWait or a blocking ring allreduce
  bool abandoned_ = false;           // strataCommAbort, or the error state: see abandon()
};

}  // namespace

FabricTraits mpiTraits() {
  FabricTraits t;
  t.name = "mpi";
  t.memory = MemoryKind::kHost;
  t.async = true;
  t.cost = CostStyle::kMessages;
  t.sharedMemoryBandwidthDivisor = 3;
  t.sharedMemoryLatencyFactor = 2;
  t.smallAllReduce = SmallAllReduce::kRecursiveDoubling;  // allReduce: smallAllReduce, else ring_
  t.smallAllReduceBytes = static_cast<double>(kMpiRingMinBytes);
  return t;
}

StatusOr<std::unique_ptr<Fabric>> createMpiFabric(boot::Bootstrap& group, Fabric*,
                                                  const FabricOptions&) {
  const MPI_Comm comm = boot::mpiCommOf(group);
  if (comm == MPI_COMM_NULL) return invalidArgument("fabric mpi needs an MPI control plane");
  STRATA_RETURN_IF_ERROR(acquireMpiOps());
  return std::unique_ptr<Fabric>(std::make_unique<MpiFabric>(comm, group.rank(), group.size()));
}

}  // namespace strata::fabric
