#include "fabrics/mpi_cuda/mpi_cuda_fabric.h"

#include <cuda_runtime.h>
#include <mpi.h>

#include <climits>
#include <vector>

#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

#include "bootstrap/mpi_bootstrap.h"
#include "common/cuda_check.h"
#include "common/datatype.h"
#include "common/mpi_check.h"
#include "fabrics/mpi/mpi_types.h"
#include "fabrics/staged/staged_fabric.h"

namespace strata::fabric {
namespace {

// Types whose reductions MPI runs with its own predefined ops. The others (fp16, bf16, int8,
// uint8) use strata's user ops, which read host memory: those reductions stay staged.
bool nativeReduction(strataDataType_t t) {
  return t == strataInt32 || t == strataUint32 || t == strataInt64 || t == strataUint64 ||
         t == strataFloat32 || t == strataFloat64;
}

// MPI returns once its buffers are done with; each call first waits for the work queued before
// it on the communicator's stream.
class MpiCudaFabric final : public Fabric {
 public:
  MpiCudaFabric(MPI_Comm comm, std::unique_ptr<Fabric> staged, cudaStream_t stream)
      : comm_(comm),
        staged_(std::move(staged)),
        stream_(stream),
        counts_(staged_->size()),
        displs_(staged_->size()) {}
  ~MpiCudaFabric() override { releaseMpiOps(); }

  const char* name() const override { return "mpi-cuda"; }
  void abandon() override { staged_->abandon(); }
  void retire() override { staged_->retire(); }
  int size() const override { return staged_->size(); }
  int rank() const override { return staged_->rank(); }

  Status allReduce(const void* in, void* out, size_t count, strataDataType_t type,
                   strataRedOp_t op) override {
    if (!nativeReduction(type) || count > INT_MAX) {
      return staged_->allReduce(in, out, count, type, op);
    }
    STRATA_CUDA_CHECK(cudaStreamSynchronize(stream_));
    STRATA_MPI_CHECK(MPI_Allreduce(in == out ? MPI_IN_PLACE : in, out, static_cast<int>(count),
                                   mpiDatatype(type), mpiOp(type, op), comm_));
    return Status::ok();
  }

  Status reduceScatter(const void* in, void* out, const size_t* counts, const size_t* displs,
                       strataDataType_t type, strataRedOp_t op) override {
    const bool inPlace = out == static_cast<const char*>(in) + displs[rank()] * dataTypeSize(type);
    if (!nativeReduction(type) || inPlace || !intLayout(counts, displs)) {
      return staged_->reduceScatter(in, out, counts, displs, type, op);
    }
    STRATA_CUDA_CHECK(cudaStreamSynchronize(stream_));
    STRATA_MPI_CHECK(
        MPI_Reduce_scatter(in, out, counts_.data(), mpiDatatype(type), mpiOp(type, op), comm_));
    return Status::ok();
  }

  Status allGather(const void* in, void* out, const size_t* counts, const size_t* displs,
                   strataDataType_t type) override {
    if (!intLayout(counts, displs)) return staged_->allGather(in, out, counts, displs, type);
    STRATA_CUDA_CHECK(cudaStreamSynchronize(stream_));
    const MPI_Datatype dt = mpiDatatype(type);
    const bool inPlace = in == static_cast<const char*>(out) + displs[rank()] * dataTypeSize(type);
    STRATA_MPI_CHECK(MPI_Allgatherv(inPlace ? MPI_IN_PLACE : in, counts_[rank()], dt, out,
                                    counts_.data(), displs_.data(), dt, comm_));
    return Status::ok();
  }

  // The rooted operations and point-to-point are rare next to the allreduce path: they go
  // through the staged fabric, which handles every type and layout.
  Status broadcast(const void* in, void* out, size_t count, strataDataType_t type,
                   int root) override {
    return staged_->broadcast(in, out, count, type, root);
  }
  Status reduce(const void* in, void* out, size_t count, strataDataType_t type, strataRedOp_t op,
                int root) override {
    return staged_->reduce(in, out, count, type, op, root);
  }
  Status scatter(const void* in, void* out, const size_t* counts, const size_t* displs,
                 strataDataType_t type, int root) override {
    return staged_->scatter(in, out, counts, displs, type, root);
  }
  Status gather(const void* in, void* out, const size_t* counts, const size_t* displs,
                strataDataType_t type, int root) override {
    return staged_->gather(in, out, counts, displs, type, root);
  }
  Status exchange(const PeerOp* ops, size_t n) override { return staged_->exchange(ops, n); }

 private:
  // MPI's int counts, or false when one does not fit.
  bool intLayout(const size_t* counts, const size_t* displs) {
    for (int j = 0; j < size(); ++j) {
      if (counts[j] > INT_MAX || displs[j] > INT_MAX) return false;
      counts_[j] = static_cast<int>(counts[j]);
      displs_[j] = static_cast<int>(displs[j]);
    }
    return true;
  }

  MPI_Comm comm_;                   // the group's bootstrap's
  std::unique_ptr<Fabric> staged_;  // types and layouts MPI cannot take on the GPU
  cudaStream_t stream_;
  std::vector<int> counts_, displs_;
};

}  // namespace

bool mpiReportsCudaAware() {
#if defined(MPIX_CUDA_AWARE_SUPPORT)
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

FabricTraits mpiCudaTraits() {
  FabricTraits t;
  t.name = "mpi-cuda";
  t.memory = MemoryKind::kDevice;
  t.wrapsHost = true;
  return t;
}

StatusOr<std::unique_ptr<Fabric>> createMpiCudaFabric(boot::Bootstrap& group, Fabric* host,
                                                      const FabricOptions& options) {
  const MPI_Comm comm = boot::mpiCommOf(group);
  if (comm == MPI_COMM_NULL) return invalidArgument("fabric mpi-cuda needs an MPI control plane");
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<Fabric> staged, createStagedFabric(group, host, options));
  STRATA_RETURN_IF_ERROR(acquireMpiOps());
  return std::unique_ptr<Fabric>(std::make_unique<MpiCudaFabric>(
      comm, std::move(staged), static_cast<cudaStream_t>(options.stream)));
}

}  // namespace strata::fabric
