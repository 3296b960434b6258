#include "gpu/progress.h"

#include <atomic>

#include "common/log.h"
#include "gpu/cuda_check.h"
#include "gpu/kernels.h"

namespace strata::gpu {

StatusOr<std::unique_ptr<ProgressQueue>> ProgressQueue::create(bool threaded, int device) {
  std::unique_ptr<ProgressQueue> q(new ProgressQueue(threaded, device));
  if (!threaded) return q;
  void* host = nullptr;
  STRATA_CUDA_CHECK(cudaHostAlloc(&host, sizeof(unsigned long long), cudaHostAllocMapped));
  q->counter_ = static_cast<volatile unsigned long long*>(host);
  *q->counter_ = 0;
  void* dev = nullptr;
  STRATA_CUDA_CHECK(cudaHostGetDevicePointer(&dev, host, 0));
  q->deviceCounter_ = static_cast<const volatile unsigned long long*>(dev);
  q->thread_ = std::thread([p = q.get()] { p->loop(); });
  return q;
}

ProgressQueue::~ProgressQueue() {
  if (thread_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  for (cudaEvent_t e : freeEvents_) (void)cudaEventDestroy(e);
  // Nothing waits on the counter any more: every task advanced it before the thread stopped.
  if (counter_ != nullptr) (void)cudaFreeHost(const_cast<unsigned long long*>(counter_));
}

Status ProgressQueue::submit(cudaStream_t stream, Task task) {
  if (!threaded_) {
    // Inline: the stream's earlier work first, then the call, done before we return.
    STRATA_CUDA_CHECK(cudaStreamSynchronize(stream));
    return task();
  }
  cudaEvent_t ready = nullptr;
  uint64_t seq = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    STRATA_RETURN_IF_ERROR(error_);
    if (!freeEvents_.empty()) {
      ready = freeEvents_.back();
      freeEvents_.pop_back();
    }
    seq = submitted_ + 1;
  }
  if (ready == nullptr) STRATA_CUDA_CHECK(cudaEventCreateWithFlags(&ready, cudaEventDisableTiming));
  Status st = [&]() -> Status {
    STRATA_CUDA_CHECK(cudaEventRecord(ready, stream));
    return waitCounter(deviceCounter_, seq, stream);
  }();
  std::lock_guard<std::mutex> lock(mutex_);
  if (!st.isOk()) {
    // A failed record or launch queued nothing: the call takes no place in the sequence.
    freeEvents_.push_back(ready);
    return st;
  }
  submitted_ = seq;
  items_.push_back(Item{seq, ready, std::move(task)});
  wake_.notify_one();
  return Status::ok();
}

void ProgressQueue::loop() {
  const cudaError_t set = cudaSetDevice(device_);
  for (;;) {
    Item item;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !items_.empty(); });
      if (items_.empty()) return;  // stopping, and nothing left to run
      item = std::move(items_.front());
      items_.pop_front();
    }
    Status st = Status::ok();
    if (set != cudaSuccess) {
      st = cudaFailure("cudaSetDevice", set, __FILE__, __LINE__);
    } else if (!error().isOk()) {
      st = error();  // after a failure the communicator runs nothing more
    } else {
      const cudaError_t rc = cudaEventSynchronize(item.ready);
      st = rc == cudaSuccess ? item.task() : cudaFailure("cudaEventSynchronize", rc, __FILE__, __LINE__);
    }
    finish(item.seq, item.ready, st);
  }
}

void ProgressQueue::finish(uint64_t seq, cudaEvent_t ready, const Status& st) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    if (!st.isOk() && error_.isOk()) {
      error_ = st.withContext("asynchronous error in a device call");
      STRATA_WARN(kSubsysColl, "%s", error_.message().c_str());
    }
    freeEvents_.push_back(ready);
    completed_ = seq;
  }
  // The task's device writes were waited for by the task; publish them, then release the GPU.
  std::atomic_thread_fence(std::memory_order_seq_cst);
  *counter_ = seq;
  done_.notify_all();
}

Status ProgressQueue::drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [&] { return completed_ == submitted_; });
  return error_;
}

Status ProgressQueue::error() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return error_;
}

}  // namespace strata::gpu
