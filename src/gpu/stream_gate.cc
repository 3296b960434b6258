#include "gpu/stream_gate.h"

#include <cuda.h>

#include <atomic>

#include "common/cuda_check.h"
#include "gpu/kernels.h"

namespace strata::gpu {

namespace {

using WaitValueFn = CUresult (*)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);
using WriteValueFn = CUresult (*)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);

// The driver's function `name` as of CUDA 12.0 (the _v2 stream memory operations), or null.
void* driverEntry(const char* name, std::string* why) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult found = cudaDriverEntryPointSymbolNotFound;
  const cudaError_t rc =
      cudaGetDriverEntryPointByVersion(name, &fn, 12000, cudaEnableDefault, &found);
  if (rc != cudaSuccess || found != cudaDriverEntryPointSuccess || fn == nullptr) {
    (void)cudaGetLastError();
    *why = std::string("the driver has no ") + name +
           (rc != cudaSuccess ? std::string(" (") + cudaGetErrorName(rc) + ")" : "");
    return nullptr;
  }
  return fn;
}

std::string driverError(const char* what, CUresult rc) {
  return std::string(what) + " returned CUresult " + std::to_string(static_cast<int>(rc)) +
         (rc == CUDA_ERROR_NOT_SUPPORTED ? " (CUDA_ERROR_NOT_SUPPORTED)" : "");
}

}  // namespace

bool StreamGate::probeMemOps(cudaStream_t probe, std::string* why) {
  waitValue_ = driverEntry("cuStreamWaitValue32", why);
  writeValue_ = waitValue_ != nullptr ? driverEntry("cuStreamWriteValue32", why) : nullptr;
  if (writeValue_ == nullptr) return false;
  // A write of the counter's current value and a wait that it holds: both must be accepted and
  // pass, on the caller's stream.
  const auto dev = reinterpret_cast<CUdeviceptr>(deviceCounter_);
  const auto s = reinterpret_cast<CUstream>(probe);
  CUresult rc = reinterpret_cast<WriteValueFn>(writeValue_)(s, dev, 0, 0);
  if (rc != CUDA_SUCCESS) {
    *why = driverError("cuStreamWriteValue32", rc);
    return false;
  }
  rc = reinterpret_cast<WaitValueFn>(waitValue_)(s, dev, 0, CU_STREAM_WAIT_VALUE_GEQ);
  if (rc != CUDA_SUCCESS) {
    *why = driverError("cuStreamWaitValue32", rc);
    return false;
  }
  const cudaError_t synced = cudaStreamSynchronize(probe);
  if (synced != cudaSuccess) {
    *why = std::string("the check's stream failed: ") + cudaGetErrorString(synced);
    return false;
  }
  return true;
}

StatusOr<std::unique_ptr<StreamGate>> StreamGate::create(const std::string& want,
                                                         cudaStream_t probe) {
  std::unique_ptr<StreamGate> g(new StreamGate());
  void* host = nullptr;
  STRATA_CUDA_CHECK(cudaHostAlloc(&host, sizeof(unsigned long long), cudaHostAllocMapped));
  g->counter_ = static_cast<volatile unsigned long long*>(host);
  *g->counter_ = 0;
  void* dev = nullptr;
  STRATA_CUDA_CHECK(cudaHostGetDevicePointer(&dev, host, 0));
  g->deviceCounter_ = static_cast<const volatile unsigned long long*>(dev);
  std::string why;
  if (want != "kernel" && g->probeMemOps(probe, &why)) {
    g->mode_ = Mode::kMemOps;
    g->describe_ = "stream memory operations (cuStreamWaitValue32): no SM held";
    return g;
  }
  if (want == "memops") {
    return Status(Code::kSystemError,
                  "STRATA_GPU_GATE=memops, but stream memory operations are unavailable: " + why);
  }
  g->mode_ = Mode::kKernel;
  g->describe_ = want == "kernel" ? "a one-thread wait kernel (STRATA_GPU_GATE=kernel)"
                                  : "a one-thread wait kernel (no stream memory operations: " +
                                        why + ")";
  // The kernel is loaded before the first gate: none may load lazily while one spins.
  STRATA_RETURN_IF_ERROR(preloadKernels());
  return g;
}

StreamGate::~StreamGate() {
  for (cudaEvent_t e : freeEvents_) (void)cudaEventDestroy(e);
  // Nothing waits on the counter any more: every ticket was released.
  if (counter_ != nullptr) (void)cudaFreeHost(const_cast<unsigned long long*>(counter_));
}

StatusOr<StreamGate::Ticket> StreamGate::hold(cudaStream_t stream, uint64_t seq) {
  Ticket t;
  t.seq = seq;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!freeEvents_.empty()) {
      t.ready = freeEvents_.back();
      freeEvents_.pop_back();
    }
  }
  if (t.ready == nullptr) {
    STRATA_CUDA_CHECK(cudaEventCreateWithFlags(&t.ready, cudaEventDisableTiming));
  }
  Status st = [&]() -> Status {
    STRATA_CUDA_CHECK(cudaEventRecord(t.ready, stream));
    if (mode_ == Mode::kKernel) return waitCounter(deviceCounter_, seq, stream);
    // The counter's low 32 bits (little-endian), compared cyclically: (int32_t)(low - seq) >= 0.
    const CUresult rc = reinterpret_cast<WaitValueFn>(waitValue_)(
        reinterpret_cast<CUstream>(stream), reinterpret_cast<CUdeviceptr>(deviceCounter_),
        static_cast<cuuint32_t>(seq), CU_STREAM_WAIT_VALUE_GEQ);
    if (rc != CUDA_SUCCESS) return Status(Code::kSystemError, driverError("cuStreamWaitValue32", rc));
    return Status::ok();
  }();
  if (!st.isOk()) {
    // A failed record or wait queued nothing: the call takes no place in the sequence.
    std::lock_guard<std::mutex> lock(mutex_);
    freeEvents_.push_back(t.ready);
    return st;
  }
  return t;
}

Status StreamGate::waitReady(const Ticket& t) {
  STRATA_CUDA_CHECK(cudaEventSynchronize(t.ready));
  return Status::ok();
}

void StreamGate::release(const Ticket& t) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    freeEvents_.push_back(t.ready);
  }
  // The call's device writes were waited for by the runner; publish them, then release.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  *counter_ = t.seq;
}

}  // namespace strata::gpu
