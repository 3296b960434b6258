#include "gpu/stream_gate.h"

#include <atomic>

#include "common/cuda_check.h"
#include "gpu/kernels.h"

namespace strata::gpu {

StatusOr<std::unique_ptr<StreamGate>> StreamGate::create() {
  std::unique_ptr<StreamGate> g(new StreamGate());
  void* host = nullptr;
  STRATA_CUDA_CHECK(cudaHostAlloc(&host, sizeof(unsigned long long), cudaHostAllocMapped));
  g->counter_ = static_cast<volatile unsigned long long*>(host);
  *g->counter_ = 0;
  void* dev = nullptr;
  STRATA_CUDA_CHECK(cudaHostGetDevicePointer(&dev, host, 0));
  g->deviceCounter_ = static_cast<const volatile unsigned long long*>(dev);
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
    return waitCounter(deviceCounter_, seq, stream);
  }();
  if (!st.isOk()) {
    // A failed record or launch queued nothing: the call takes no place in the sequence.
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
