// A thread that runs jobs one at a time, in the order they were posted. The backend has two:
// the completer, which waits for strata's requests in issue order and hands their Work objects
// to the CallbackPool below (so a Work completes while Python computes, without anyone calling
// wait()), and the point-to-point worker, which runs strata's blocking sends and receives off
// the caller's thread.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace strata::torch_backend {

class Worker {
 public:
  Worker() = default;
  ~Worker() { stop(); }
  // Runs the jobs still posted, then joins the thread. Idempotent; post() after it is an error.
  void stop();
  Worker(const Worker&) = delete;
  Worker& operator=(const Worker&) = delete;

  // Queues `job`; the thread starts on the first post. A job must not throw.
  void post(std::function<void()> job);

 private:
  void loop();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace strata::torch_backend

namespace strata::torch_backend {

// Where Work objects complete and their futures' callbacks run: a pool that runs every job on
// an idle thread and starts a new thread when none is idle. A callback may itself wait on
// another future of this backend (PowerSGD's hook waits, inside DDP's callback, on an
// allreduce it just issued); that future is completed by another of the pool's threads, never
// by the one the callback holds, so no completion ever waits behind a blocked callback. Threads
// that ran out of jobs stay, idle, for the next ones (a steady job stream reuses them).
class CallbackPool {
 public:
  CallbackPool() = default;
  ~CallbackPool() { stop(); }
  // Runs the jobs still posted, then joins every thread. Idempotent.
  void stop();
  CallbackPool(const CallbackPool&) = delete;
  CallbackPool& operator=(const CallbackPool&) = delete;

  // Queues `job` (which must not throw) for an idle thread, or a new one.
  void post(std::function<void()> job);

 private:
  void loop();

  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;
  int idle_ = 0;  // threads waiting for a job
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

}  // namespace strata::torch_backend
