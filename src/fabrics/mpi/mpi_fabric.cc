#include "fabrics/mpi/mpi_fabric.h"

#include <climits>
#include <cstring>
#include <vector>

#include "common/datatype.h"
#include "common/mpi_check.h"
#include "fabrics/mpi/mpi_types.h"

namespace strata::fabric {
namespace {

class MpiFabric final : public Fabric {
 public:
  MpiFabric(MPI_Comm comm, int rank, int size)
      : comm_(comm), rank_(rank), size_(size), counts_(size), displs_(size) {}

  ~MpiFabric() override { releaseMpiOps(); }

  const char* name() const override { return "mpi"; }
  int size() const override { return size_; }
  int rank() const override { return rank_; }

  Status reduceScatter(const void* in, void* out, const size_t* counts, const size_t* displs,
                       strataDataType_t type, strataRedOp_t op) override {
    STRATA_RETURN_IF_ERROR(toIntCounts(counts, displs));
    const size_t ts = dataTypeSize(type);
    const bool inPlace = out == static_cast<const char*>(in) + displs[rank_] * ts;
    if (inPlace) {
      // MPI_IN_PLACE leaves the block at the start of the range; move it to its own place.
      // The bytes this overwrites belong to other members' blocks, which the contract allows.
      void* buf = const_cast<void*>(in);
      STRATA_MPI_CHECK(MPI_Reduce_scatter(MPI_IN_PLACE, buf, counts_.data(), mpiDatatype(type),
                                          mpiOp(type, op), comm_));
      if (displs[rank_] != 0) std::memmove(out, buf, counts[rank_] * ts);
      return Status::ok();
    }
    STRATA_MPI_CHECK(MPI_Reduce_scatter(in, out, counts_.data(), mpiDatatype(type),
                                        mpiOp(type, op), comm_));
    return Status::ok();
  }

  Status allGather(const void* in, void* out, const size_t* counts, const size_t* displs,
                   strataDataType_t type) override {
    STRATA_RETURN_IF_ERROR(toIntCounts(counts, displs));
    const size_t ts = dataTypeSize(type);
    const MPI_Datatype dt = mpiDatatype(type);
    if (in == static_cast<const char*>(out) + displs[rank_] * ts) {
      STRATA_MPI_CHECK(MPI_Allgatherv(MPI_IN_PLACE, 0, MPI_DATATYPE_NULL, out, counts_.data(),
                                      displs_.data(), dt, comm_));
      return Status::ok();
    }
    STRATA_MPI_CHECK(MPI_Allgatherv(in, counts_[rank_], dt, out, counts_.data(), displs_.data(),
                                    dt, comm_));
    return Status::ok();
  }

  Status allReduce(const void* in, void* out, size_t count, strataDataType_t type,
                   strataRedOp_t op) override {
    if (count > static_cast<size_t>(INT_MAX)) return tooLarge(count);
    const void* send = in == out ? MPI_IN_PLACE : in;
    STRATA_MPI_CHECK(MPI_Allreduce(send, out, static_cast<int>(count), mpiDatatype(type),
                                   mpiOp(type, op), comm_));
    return Status::ok();
  }

  Status allReduceStart(const void* in, void* out, size_t count, strataDataType_t type,
                        strataRedOp_t op) override {
    if (count > static_cast<size_t>(INT_MAX)) return tooLarge(count);
    const void* send = in == out ? MPI_IN_PLACE : in;
    STRATA_MPI_CHECK(MPI_Iallreduce(send, out, static_cast<int>(count), mpiDatatype(type),
                                    mpiOp(type, op), comm_, &request_));
    return Status::ok();
  }

  // A failure here is kept and returned by allReduceWait.
  void progress() override {
    if (request_ == MPI_REQUEST_NULL || testError_ != MPI_SUCCESS) return;
    int done = 0;
    testError_ = MPI_Test(&request_, &done, MPI_STATUS_IGNORE);
  }

  Status allReduceWait() override {
    const int failed = testError_;
    testError_ = MPI_SUCCESS;
    if (failed != MPI_SUCCESS) {
      if (request_ != MPI_REQUEST_NULL) MPI_Wait(&request_, MPI_STATUS_IGNORE);
      return mpiError("MPI_Test", failed, __FILE__, __LINE__);
    }
    if (request_ != MPI_REQUEST_NULL) STRATA_MPI_CHECK(MPI_Wait(&request_, MPI_STATUS_IGNORE));
    return Status::ok();
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

  static Status tooLarge(size_t n) {
    return internalError("mpi fabric: " + std::to_string(n) + " elements exceed an MPI count");
  }

  MPI_Comm comm_;  // owned by the caller
  int rank_, size_;
  std::vector<int> counts_, displs_;  // reused int copies, so no allocation per call
  MPI_Request request_ = MPI_REQUEST_NULL;  // the allreduce in flight (allReduceStart)
  int testError_ = MPI_SUCCESS;             // a failed MPI_Test of it, for allReduceWait
};

}  // namespace

StatusOr<std::unique_ptr<Fabric>> createMpiFabric(MPI_Comm group) {
  int rank = 0, size = 0;
  STRATA_MPI_CHECK(MPI_Comm_rank(group, &rank));
  STRATA_MPI_CHECK(MPI_Comm_size(group, &size));
  STRATA_RETURN_IF_ERROR(acquireMpiOps());
  return std::unique_ptr<Fabric>(std::make_unique<MpiFabric>(group, rank, size));
}

}  // namespace strata::fabric
