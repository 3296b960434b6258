#include "core/engine.h"

#include "common/log.h"

namespace strata::core {

void Engine::stop() {
  if (thread_.joinable()) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    wake_.notify_all();
    thread_.join();
  }
  std::unique_lock<std::mutex> lock(mutex_);
  waitFor(lock, submitted_);  // what the thread left (or, without one, everything)
}

uint64_t Engine::submit(Work work) {
  std::lock_guard<std::mutex> lock(mutex_);
  const uint64_t ticket = ++submitted_;
  items_.push_back(Item{ticket, std::move(work)});
  if (threaded_ && !stopping_) {
    if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
    wake_.notify_one();
  }
  return ticket;
}

Status Engine::statusOf(uint64_t ticket) const {
  return failedAt_ != 0 && ticket >= failedAt_ ? error_ : Status::ok();
}

namespace {
// The engine whose queued call this thread is running, if any (Engine::insideCall).
thread_local const Engine* tl_insideCall = nullptr;
}  // namespace

bool Engine::insideCall() const { return tl_insideCall == this; }

void Engine::runNext(std::unique_lock<std::mutex>& lock) {
  running_ = true;
  Item item = std::move(items_.front());
  items_.pop_front();
  const Status earlier = error_;
  lock.unlock();
  tl_insideCall = this;
  Status st = item.work(earlier);
  tl_insideCall = nullptr;
  lock.lock();
  // The first failure stands; one that comes before an abort's point (the call that was
  // running when abort() came) moves the point back to it.
  if (!st.isOk() && (failedAt_ == 0 || item.ticket < failedAt_)) {
    failedAt_ = item.ticket;
    error_ = st.withContext("asynchronous error in a queued call");
    // A call's failure was logged where it began (Comm::failHere); others are logged here.
    if (!error_.wasLogged()) STRATA_WARN(kSubsysColl, "%s", error_.message().c_str());
  }
  completed_ = item.ticket;
  running_ = false;
  // Waiters learn of the call; the progress thread of a call still queued (a waiter may have
  // run this one and stopped at its own ticket).
  done_.notify_all();
  if (!items_.empty()) wake_.notify_one();
}

void Engine::markUrgent(uint64_t ticket) {
  uint64_t seen = urgent_.load(std::memory_order_relaxed);
  while (seen < ticket && !urgent_.compare_exchange_weak(seen, ticket, std::memory_order_release)) {
  }
}

void Engine::waitFor(std::unique_lock<std::mutex>& lock, uint64_t ticket) {
  markUrgent(ticket);
  while (completed_ < ticket) {
    if (!running_ && !items_.empty()) {
      runNext(lock);
    } else {
      done_.wait(lock);
    }
  }
}

void Engine::loop() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    wake_.wait(lock, [&] { return stopping_ || (!running_ && !items_.empty()); });
    if (!running_ && !items_.empty()) {
      runNext(lock);
    } else if (stopping_) {
      return;  // stop() runs whatever a waiter left, after joining
    }
  }
}

bool Engine::test(uint64_t ticket, Status* st) {
  markUrgent(ticket);
  std::unique_lock<std::mutex> lock(mutex_);
  if (!threaded_) waitFor(lock, ticket);
  if (completed_ < ticket) return false;
  *st = statusOf(ticket);
  return true;
}

Status Engine::wait(uint64_t ticket) {
  std::unique_lock<std::mutex> lock(mutex_);
  waitFor(lock, ticket);
  return statusOf(ticket);
}

Status Engine::waitLazy(uint64_t ticket) {
  if (!threaded_) return wait(ticket);
  std::unique_lock<std::mutex> lock(mutex_);
  // The progress thread was woken by submit() and runs every queued call in turn.
  done_.wait(lock, [&] { return completed_ >= ticket; });
  return statusOf(ticket);
}

Status Engine::drain() {
  std::unique_lock<std::mutex> lock(mutex_);
  waitFor(lock, submitted_);
  return error_;
}

void Engine::abort(const Status& why) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (failedAt_ != 0) return;  // already failing: the first error stays
  failedAt_ = completed_ + (running_ ? 2 : 1);
  error_ = why;
}

void Engine::fail(const Status& why) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (failedAt_ != 0 || why.isOk()) return;
  failedAt_ = submitted_ + 1;  // every call queued from now on
  error_ = why;                // logged by the C boundary, which returns it
}

Status Engine::error() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return error_;
}

bool Engine::idle() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return items_.empty() && !running_;
}

uint64_t Engine::submitted() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return submitted_;
}

}  // namespace strata::core
