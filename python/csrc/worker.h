// The backend's threads. Every job runs on a thread of a JobThreads; the backend has:
//   - the completer (a Worker: one thread, jobs in the order posted), which waits for the
//     collectives' requests in issue order and completes their Works (wait() returns), so that
//     a Work completes while Python computes, without anyone calling wait();
//   - the sequencer (a Worker), which then completes the futures of the collectives issued
//     outside the callbacks, one at a time in issue order: their callbacks (DDP's hooks) run
//     there, at callback depth 1, in the same order on every rank (backend.h, "Callbacks");
//   - the point-to-point workers (Workers), which run strata's blocking sends and receives off
//     the caller's thread;
//   - the callback pool (a CallbackPool), where the other futures complete (those of the
//     collectives issued from callbacks, and of sends and receives) and their callbacks run:
//     every job gets an idle thread, a new one when none is idle.
// A callback may wait on a future of a collective it issued (PowerSGD's hook does, inside
// DDP's callback): that future completes on the pool, never behind the callback that waits.
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

// How deep the calling thread is in the backend's future callbacks: 0 on the user's threads
// (and inside callbacks that run where a future was already complete), 1 on the sequencer and
// in the callbacks of sends and receives, 2 in those of collectives issued at depth 1 or more.
// A collective issued at depth 0 passes the gate and completes on the sequencer; one issued
// deeper (from a callback) does neither (backend.h, "Callbacks").
int& callbackDepth();

// Sets the calling thread's callback depth for a scope.
class DepthScope {
 public:
  explicit DepthScope(int depth) : saved_(callbackDepth()) { callbackDepth() = depth; }
  ~DepthScope() { callbackDepth() = saved_; }
  DepthScope(const DepthScope&) = delete;
  DepthScope& operator=(const DepthScope&) = delete;

 private:
  int saved_;
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
