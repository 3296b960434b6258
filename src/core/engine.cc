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
  } else {
    runUntil(submitted_);
  }
}

uint64_t Engine::submit(Work work) {
  std::lock_guard<std::mutex> lock(mutex_);
  const uint64_t ticket = ++submitted_;
  items_.push_back(Item{ticket, std::move(work)});
  if (threaded_) {
    if (!thread_.joinable()) thread_ = std::thread([this] { loop(); });
    wake_.notify_one();
  }
  return ticket;
}

Status Engine::statusOf(uint64_t ticket) const {
  return failedAt_ != 0 && ticket >= failedAt_ ? error_ : Status::ok();
}

void Engine::runItem(Item& item) {
  const Status earlier = error();
  Status st = item.work(earlier);
  std::lock_guard<std::mutex> lock(mutex_);
  if (!st.isOk() && failedAt_ == 0) {
    failedAt_ = item.ticket;
    error_ = st.withContext("asynchronous error in a queued call");
    STRATA_WARN(kSubsysColl, "%s", error_.message().c_str());
  }
  completed_ = item.ticket;
  done_.notify_all();
}

void Engine::loop() {
  for (;;) {
    Item item;
    {
      std::unique_lock<std::mutex> lock(mutex_);
      wake_.wait(lock, [&] { return stopping_ || !items_.empty(); });
      if (items_.empty()) return;  // stopping, and nothing left to run
      item = std::move(items_.front());
      items_.pop_front();
    }
    runItem(item);
  }
}

void Engine::runUntil(uint64_t ticket) {
  std::lock_guard<std::mutex> running(inlineMutex_);
  for (;;) {
    Item item;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (completed_ >= ticket || items_.empty()) return;
      item = std::move(items_.front());
      items_.pop_front();
    }
    runItem(item);
  }
}

bool Engine::test(uint64_t ticket, Status* st) {
  if (!threaded_) runUntil(ticket);
  std::lock_guard<std::mutex> lock(mutex_);
  if (completed_ < ticket) return false;
  *st = statusOf(ticket);
  return true;
}

Status Engine::wait(uint64_t ticket) {
  if (!threaded_) runUntil(ticket);
  std::unique_lock<std::mutex> lock(mutex_);
  done_.wait(lock, [&] { return completed_ >= ticket; });
  return statusOf(ticket);
}

Status Engine::drain() {
  uint64_t last = 0;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    last = submitted_;
  }
  Status st = wait(last);
  (void)st;
  return error();
}

Status Engine::error() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return error_;
}

uint64_t Engine::submitted() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return submitted_;
}

}  // namespace strata::core
