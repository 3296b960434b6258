// strata-perf --device on CUDA: the GPU this rank uses, one non-blocking stream for every
// strata call, device buffers, and the copies that feed and read back the checks.
#include "perf_device.h"

#include <cuda_runtime.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <utility>
#include <vector>

namespace strata::tools {
namespace {

Status cudaStatus(cudaError_t err, const std::string& what) {
  if (err == cudaSuccess) return Status::ok();
  return Status(Code::kCudaError, what + " failed: " + cudaGetErrorString(err));
}

// OMPI_COMM_WORLD_LOCAL_RANK, as mpirun sets it; 0 without mpirun or when it does not parse.
int localRank() {
  const char* v = std::getenv("OMPI_COMM_WORLD_LOCAL_RANK");
  if (v == nullptr || *v == '\0') return 0;
  char* end = nullptr;
  const long r = std::strtol(v, &end, 10);
  return *end == '\0' && r >= 0 && r < (1 << 20) ? static_cast<int>(r) : 0;
}

class CudaPerfDevice final : public PerfDevice {
 public:
  CudaPerfDevice(int device, int count, std::string name, std::string rankLine)
      : device_(device), count_(count), name_(std::move(name)), rankLine_(std::move(rankLine)) {}

  ~CudaPerfDevice() override {
    // Errors are ignored here: the process is on its way out and has nothing left to report to.
    if (stream_ != nullptr) {
      cudaStreamSynchronize(stream_);
      cudaStreamDestroy(stream_);
    }
    for (void* p : buffers_) cudaFree(p);
  }
  CudaPerfDevice(const CudaPerfDevice&) = delete;
  CudaPerfDevice& operator=(const CudaPerfDevice&) = delete;

  Status makeStream() {
    return cudaStatus(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking),
                      "cudaStreamCreateWithFlags on GPU " + std::to_string(device_));
  }

  std::string describe() const override {
    return "GPU " + std::to_string(device_) + " of " + std::to_string(count_) + " (" + name_ + ")";
  }

  std::string rankLineDevice() const override { return rankLine_; }

  strataStream_t stream() const override { return stream_; }

  StatusOr<unsigned char*> alloc(size_t bytes) override {
    void* p = nullptr;
    STRATA_RETURN_IF_ERROR(
        cudaStatus(cudaMalloc(&p, bytes),
                   "cudaMalloc of " + std::to_string(bytes) + " bytes on " + describe()));
    buffers_.push_back(p);
    return static_cast<unsigned char*>(p);
  }

  // On the stream, then synchronised: a plain cudaMemcpy runs on the legacy stream, which a
  // non-blocking stream does not wait for.
  Status toDevice(void* dst, const void* src, size_t bytes) override {
    STRATA_RETURN_IF_ERROR(cudaStatus(
        cudaMemcpyAsync(dst, src, bytes, cudaMemcpyHostToDevice, stream_), "cudaMemcpyAsync H2D"));
    return sync();
  }

  Status toHost(void* dst, const void* src, size_t bytes) override {
    STRATA_RETURN_IF_ERROR(cudaStatus(
        cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToHost, stream_), "cudaMemcpyAsync D2H"));
    return sync();
  }

  Status sync() override {
    return cudaStatus(cudaStreamSynchronize(stream_), "cudaStreamSynchronize");
  }

 private:
  int device_, count_;
  std::string name_, rankLine_;
  cudaStream_t stream_ = nullptr;
  std::vector<void*> buffers_;
};

}  // namespace

StatusOr<std::unique_ptr<PerfDevice>> openPerfDevice(bool* noGpu) {
  *noGpu = false;
  int count = 0;
  const cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess || count == 0) {
    *noGpu = true;
    return Status(
        Code::kCudaError,
        std::string("no CUDA GPU visible (") +
            (err != cudaSuccess ? cudaGetErrorString(err) : "cudaGetDeviceCount returned 0") + ")");
  }
  const int device = localRank() % count;
  STRATA_RETURN_IF_ERROR(
      cudaStatus(cudaSetDevice(device), "cudaSetDevice(" + std::to_string(device) + ")"));
  cudaDeviceProp prop{};
  STRATA_RETURN_IF_ERROR(cudaStatus(cudaGetDeviceProperties(&prop, device),
                                    "cudaGetDeviceProperties(" + std::to_string(device) + ")"));
  char rankLine[320];
  std::snprintf(rankLine, sizeof(rankLine), "%2d [%04x:%02x:%02x] %s", device, prop.pciDomainID,
                prop.pciBusID, prop.pciDeviceID, prop.name);
  auto d = std::make_unique<CudaPerfDevice>(device, count, prop.name, rankLine);
  STRATA_RETURN_IF_ERROR(d->makeStream());
  return StatusOr<std::unique_ptr<PerfDevice>>(std::unique_ptr<PerfDevice>(std::move(d)));
}

}  // namespace strata::tools
