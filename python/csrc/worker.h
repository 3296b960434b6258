// The backend's threads. Every job runs on a thread of a JobThreads; the backend has:
//   - the completer (a Worker: one thread, jobs in the order posted), which waits for strata's
//     requests in issue order and hands their Work objects to the callback pool, so that a Work
//     completes while Python computes, without anyone calling wait();
//   - the point-to-point workers (Workers), which run strata's blocking sends and receives off
//     the caller's thread;
//   - the callback pool (a CallbackPool), where Works complete and their futures' callbacks
//     run: every job gets an idle thread, a new one when none is idle. A callback may itself
//     wait on another future of this backend (PowerSGD's hook waits, inside DDP's callback, on
//     an allreduce it just issued); that future is completed by another thread of the pool,
//     never by the one the callback holds, so no completion waits behind a blocked callback.
//     Threads that ran out of jobs stay idle for the next ones.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>
#include <vector>

namespace strata::torch_backend {

class JobThreads {
 public:
  ~JobThreads() { stop(); }
  // Runs the jobs still posted, then joins every thread. Idempotent; post() after it is an
  // error.
  void stop();
  JobThreads(const JobThreads&) = delete;
  JobThreads& operator=(const JobThreads&) = delete;

  // Queues `job` (which must not throw). The first thread starts on the first post.
  void post(std::function<void()> job);

 protected:
  // grow: a new thread whenever no thread is idle for a queued job; else one thread only.
  explicit JobThreads(bool grow) : grow_(grow) {}

 private:
  void loop();

  const bool grow_;
  std::mutex mutex_;
  std::condition_variable wake_;
  std::deque<std::function<void()>> jobs_;
  size_t idle_ = 0;  // threads waiting for a job
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

// One thread: jobs run one at a time, in the order they were posted.
class Worker : public JobThreads {
 public:
  Worker() : JobThreads(false) {}
};

// As many threads as jobs in flight need (see the top of this file).
class CallbackPool : public JobThreads {
 public:
  CallbackPool() : JobThreads(true) {}
};

}  // namespace strata::torch_backend
