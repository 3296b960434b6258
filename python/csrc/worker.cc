#include "worker.h"

namespace strata::torch_backend {

int& callbackDepth() {
  thread_local int depth = 0;
  return depth;
}

void JobThreads::stop() {
  std::vector<std::thread> threads;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
    threads.swap(threads_);
  }
  wake_.notify_all();
  for (std::thread& t : threads) t.join();
}

void JobThreads::post(std::function<void()> job) {
  std::lock_guard<std::mutex> lock(mutex_);
  jobs_.push_back(std::move(job));
  // A growing pool needs an idle thread per queued job: a thread woken for an earlier job may
  // not have taken it yet, so jobs are counted against idle threads, not one notify per job.
  const bool spawn = grow_ ? idle_ < jobs_.size() : threads_.empty();
  if (spawn) {
    threads_.emplace_back([this] { loop(); });
  } else {
    wake_.notify_one();
  }
}

void JobThreads::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    ++idle_;
    wake_.wait(lock, [&] { return stopping_ || !jobs_.empty(); });
    --idle_;
    if (jobs_.empty()) return;  // stopping, and nothing left
    std::function<void()> job = std::move(jobs_.front());
    jobs_.pop_front();
    lock.unlock();
    job();
    lock.lock();
  }
}

}  // namespace strata::torch_backend
