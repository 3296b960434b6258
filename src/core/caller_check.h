// One thread issues calls on a communicator at a time (docs/api.md, "Threads"). Two at once
// would change its setup state under each other and cross their calls on the wire, corrupting
// results silently; catching it costs one atomic exchange per call. A thread that is inside a
// call may issue again (a compound call issues its parts); another thread gets
// strataInvalidUsage naming both calls and both threads, and nothing of its call happens.
#pragma once

#include <atomic>
#include <cstdint>

#include "common/status.h"

namespace strata::core {

class CallerCheck {
 public:
  // Enters `what` (a string literal: "allreduce", "split", ...) from this thread. On success,
  // *owner says whether this entry must leave() (false when this thread was already inside).
  Status enter(const char* what, bool* owner);
  void leave();

 private:
  std::atomic<int64_t> thread_{0};  // the Linux thread id inside a call; 0: none
  std::atomic<const char*> what_{nullptr};
};

// enter() and, when it owns the entry, leave() at scope end.
class CallerScope {
 public:
  CallerScope(CallerCheck& check, const char* what) : check_(check) {
    status_ = check.enter(what, &owner_);
  }
  ~CallerScope() {
    if (owner_) check_.leave();
  }
  CallerScope(const CallerScope&) = delete;
  CallerScope& operator=(const CallerScope&) = delete;
  const Status& status() const { return status_; }

 private:
  CallerCheck& check_;
  bool owner_ = false;
  Status status_ = Status::ok();
};

}  // namespace strata::core
