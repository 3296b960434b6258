// A thread that runs jobs one at a time, in the order they were posted. The backend has two:
// the completer, which waits for strata's requests in issue order and completes their Work
// objects (so a Work completes while Python computes, without anyone calling wait()), and the
// point-to-point worker, which runs strata's blocking sends and receives off the caller's
// thread.
#pragma once

#include <condition_variable>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

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
