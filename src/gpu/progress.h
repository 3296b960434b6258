// The progress thread of a communicator's device calls (after Aluminum's host-transfer
// backend): the caller's thread enqueues and returns; this thread runs the collectives, which
// need the host (MPI stages, staging copies), in the order they were submitted.
//
// Protocol, for the i-th task (i = 1, 2, ...) submitted on a user stream S:
//   caller:  record event E_i on S; enqueue on S a one-thread kernel that waits until the
//            counter reaches i; push the task; return.
//   thread:  wait for E_i (the work queued on S before the call is done); run the task on the
//            communicator's own streams; wait for them; store i into the counter.
// The counter lives in mapped pinned host memory, so the GPU reads the host's store. Work
// queued on S after the call starts only once the counter reaches i: it sees the result.
// Invariants: tasks run one at a time and in submission order, so the counter only grows and
// a task's store releases every earlier waiter; the thread never calls a CUDA function that
// waits for the whole device (cudaFree, cudaDeviceSynchronize, a legacy-stream copy), because
// the waiting kernels would never finish and neither would it.
//
// A failed task still advances the counter (so no stream waits forever) and its error is kept:
// drain() and every later submit() return it.
#pragma once

#include <cuda_runtime.h>

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "common/status.h"

namespace strata::gpu {

class ProgressQueue {
 public:
  using Task = std::function<Status()>;

  // threaded: run tasks on a thread of our own (else submit runs them inline, see below),
  // with `device` current on it.
  static StatusOr<std::unique_ptr<ProgressQueue>> create(bool threaded, int device);
  ~ProgressQueue();  // stops the thread after the queued tasks ran
  ProgressQueue(const ProgressQueue&) = delete;
  ProgressQueue& operator=(const ProgressQueue&) = delete;

  bool threaded() const { return threaded_; }

  // Runs `task` after the work queued on `stream` so far; work queued on `stream` afterwards
  // waits for it. Threaded: returns once enqueued. Inline: waits for `stream`, runs the task
  // and returns its status (the result is in place at return).
  Status submit(cudaStream_t stream, Task task);

  // Waits until every submitted task ran; returns the first asynchronous error, if any.
  Status drain();

  // The first asynchronous error, without waiting.
  Status error() const;

 private:
  struct Item {
    uint64_t seq;
    cudaEvent_t ready;
    Task task;
  };

  ProgressQueue(bool threaded, int device) : threaded_(threaded), device_(device) {}
  void loop();
  void finish(uint64_t seq, cudaEvent_t ready, const Status& st);

  const bool threaded_;
  const int device_;
  volatile unsigned long long* counter_ = nullptr;     // host side of the mapped counter
  const volatile unsigned long long* deviceCounter_ = nullptr;
  mutable std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::deque<Item> items_;
  std::vector<cudaEvent_t> freeEvents_;  // reused: creating one per call costs microseconds
  uint64_t submitted_ = 0, completed_ = 0;
  bool stopping_ = false;
  Status error_ = Status::ok();
  std::thread thread_;
};

}  // namespace strata::gpu
