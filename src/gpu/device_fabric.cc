#include "gpu/device_fabric.h"

#include <climits>
#include <cstring>
#include <vector>

#if __has_include(<mpi-ext.h>)
#include <mpi-ext.h>
#endif

#include "common/datatype.h"
#include "common/log.h"
#include "common/mpi_check.h"
#include "core/init.h"
#include "fabrics/device_choice.h"
#include "fabrics/mpi/mpi_types.h"
#include "fabrics/nccl/nccl_fabric.h"
#include "gpu/cuda_check.h"
#include "gpu/device.h"
#include "gpu/staged_fabric.h"

namespace strata::gpu {
namespace {

// Whether Open MPI says, at run time, that it reads GPU memory.
bool mpiReportsCudaAware() {
#if defined(MPIX_CUDA_AWARE_SUPPORT)
  return MPIX_Query_cuda_support() == 1;
#else
  return false;
#endif
}

// Types whose reductions MPI runs with its own predefined ops. The others (fp16, bf16, int8,
// uint8) use strata's user ops, which read host memory: those reductions stay staged.
bool nativeReduction(strataDataType_t t) {
  return t == strataInt32 || t == strataUint32 || t == strataInt64 || t == strataUint64 ||
         t == strataFloat32 || t == strataFloat64;
}

// Device pointers straight to a CUDA-aware MPI. MPI returns once its buffers are done with;
// each call first waits for the work queued before it on the communicator's stream.
class CudaAwareMpiFabric final : public fabric::Fabric {
 public:
  CudaAwareMpiFabric(MPI_Comm comm, std::unique_ptr<fabric::Fabric> staged, cudaStream_t stream)
      : comm_(comm), staged_(std::move(staged)), stream_(stream), counts_(staged_->size()),
        displs_(staged_->size()) {}
  ~CudaAwareMpiFabric() override { fabric::releaseMpiOps(); }

  const char* name() const override { return "mpi-cuda"; }
  int size() const override { return staged_->size(); }
  int rank() const override { return staged_->rank(); }

  Status allReduce(const void* in, void* out, size_t count, strataDataType_t type,
                   strataRedOp_t op) override {
    if (!nativeReduction(type) || count > INT_MAX) return staged_->allReduce(in, out, count, type, op);
    STRATA_CUDA_CHECK(cudaStreamSynchronize(stream_));
    STRATA_MPI_CHECK(MPI_Allreduce(in == out ? MPI_IN_PLACE : in, out, static_cast<int>(count),
                                   fabric::mpiDatatype(type), fabric::mpiOp(type, op), comm_));
    return Status::ok();
  }

  // In place, MPI leaves the block at the start of the range, and moving it on the GPU could
  // overlap: in-place calls stay staged.
  Status reduceScatter(const void* in, void* out, const size_t* counts, const size_t* displs,
                       strataDataType_t type, strataRedOp_t op) override {
    const bool inPlace = out == static_cast<const char*>(in) + displs[rank()] * dataTypeSize(type);
    if (!nativeReduction(type) || inPlace || !intLayout(counts, displs)) {
      return staged_->reduceScatter(in, out, counts, displs, type, op);
    }
    STRATA_CUDA_CHECK(cudaStreamSynchronize(stream_));
    STRATA_MPI_CHECK(MPI_Reduce_scatter(in, out, counts_.data(), fabric::mpiDatatype(type),
                                        fabric::mpiOp(type, op), comm_));
    return Status::ok();
  }

  Status allGather(const void* in, void* out, const size_t* counts, const size_t* displs,
                   strataDataType_t type) override {
    if (!intLayout(counts, displs)) return staged_->allGather(in, out, counts, displs, type);
    STRATA_CUDA_CHECK(cudaStreamSynchronize(stream_));
    const MPI_Datatype dt = fabric::mpiDatatype(type);
    const bool inPlace = in == static_cast<const char*>(out) + displs[rank()] * dataTypeSize(type);
    STRATA_MPI_CHECK(MPI_Allgatherv(inPlace ? MPI_IN_PLACE : in, counts_[rank()], dt, out,
                                    counts_.data(), displs_.data(), dt, comm_));
    return Status::ok();
  }

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

  MPI_Comm comm_;
  std::unique_ptr<fabric::Fabric> staged_;  // types and layouts MPI cannot take on the GPU
  cudaStream_t stream_;
  std::vector<int> counts_, displs_;
};

// A group of one member: every collective is a copy on the communicator's stream (or nothing,
// in place), done before returning.
class LocalFabric final : public fabric::Fabric {
 public:
  explicit LocalFabric(cudaStream_t stream) : stream_(stream) {}
  const char* name() const override { return "local"; }
  int size() const override { return 1; }
  int rank() const override { return 0; }

  Status allReduce(const void* in, void* out, size_t count, strataDataType_t type,
                   strataRedOp_t) override {
    return copy(out, in, count * dataTypeSize(type));
  }
  Status reduceScatter(const void* in, void* out, const size_t* counts, const size_t* displs,
                       strataDataType_t type, strataRedOp_t) override {
    const size_t ts = dataTypeSize(type);
    return copy(out, static_cast<const char*>(in) + displs[0] * ts, counts[0] * ts);
  }
  Status allGather(const void* in, void* out, const size_t* counts, const size_t* displs,
                   strataDataType_t type) override {
    const size_t ts = dataTypeSize(type);
    return copy(static_cast<char*>(out) + displs[0] * ts, in, counts[0] * ts);
  }

 private:
  Status copy(void* dst, const void* src, size_t bytes) {
    if (dst != src && bytes > 0) {
      STRATA_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, stream_));
    }
    STRATA_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return Status::ok();
  }
  cudaStream_t stream_;
};

}  // namespace

StatusOr<std::unique_ptr<fabric::Fabric>> createDeviceFabric(MPI_Comm group,
                                                             fabric::Fabric* host,
                                                             const DeviceFabricOptions& o) {
  fabric::MemberIdentity me{};
  me.hostHash = fabric::hostHash(o.host);
  StatusOr<DeviceUuid> uuid = deviceUuid(o.device);
  if (uuid.isOk()) std::memcpy(me.uuid, uuid.value().data(), 16);
  me.cudaAware = o.cudaAware < 0 ? (mpiReportsCudaAware() ? 1 : 0) : o.cudaAware;
  STRATA_RETURN_IF_ERROR(core::agree(group, uuid.status()));
  std::vector<fabric::MemberIdentity> all(host->size());
  STRATA_MPI_CHECK(MPI_Allgather(&me, sizeof(me), MPI_BYTE, all.data(), sizeof(me), MPI_BYTE,
                                 group));
  const fabric::DeviceChoice choice = fabric::chooseDeviceFabric(all, o.pinnedToMpi);
  StatusOr<std::unique_ptr<fabric::Fabric>> made = [&]() -> StatusOr<std::unique_ptr<fabric::Fabric>> {
    if (choice == fabric::DeviceChoice::kLocal) {
      return std::unique_ptr<fabric::Fabric>(std::make_unique<LocalFabric>(o.stream));
    }
    if (choice == fabric::DeviceChoice::kNccl) return fabric::createNcclFabric(group, o.stream);
    STRATA_ASSIGN_OR_RETURN(std::unique_ptr<fabric::Fabric> staged,
                            createStagedFabric(host, o.stagingBytes, o.stream));
    if (choice == fabric::DeviceChoice::kStaged) return staged;
    STRATA_RETURN_IF_ERROR(fabric::acquireMpiOps());
    return std::unique_ptr<fabric::Fabric>(
        std::make_unique<CudaAwareMpiFabric>(group, std::move(staged), o.stream));
  }();
  // nccl agrees on its own failures; the others are local and agreed on here.
  if (choice != fabric::DeviceChoice::kNccl) {
    STRATA_RETURN_IF_ERROR(core::agree(group, made.status()));
  }
  if (!made.isOk()) return made.status();
  STRATA_INFO(kSubsysFabric, "device fabric of a group of %d: %s", host->size(),
              fabric::deviceChoiceName(choice));
  return made;
}

}  // namespace strata::gpu
