#include "core/caller_check.h"

#include <sys/syscall.h>
#include <unistd.h>

#include <string>

namespace strata::core {
namespace {

// The kernel's id of this thread, as gdb, top -H and /proc show it.
int64_t thisThread() {
  thread_local const int64_t tid = static_cast<int64_t>(::syscall(SYS_gettid));
  return tid;
}

}  // namespace

Status CallerCheck::enter(const char* what, bool* owner) {
  *owner = false;
  const int64_t me = thisThread();
  int64_t inside = 0;
  if (thread_.compare_exchange_strong(inside, me, std::memory_order_acquire)) {
    what_.store(what, std::memory_order_relaxed);
    *owner = true;
    return Status::ok();
  }
  if (inside == me) return Status::ok();  // a compound call issuing its parts
  const char* theirs = what_.load(std::memory_order_relaxed);
  return invalidUsage(std::string(what) + " issued from thread " + std::to_string(me) +
                      " while thread " + std::to_string(inside) + " is inside " +
                      (theirs != nullptr ? theirs : "a call") +
                      " on this communicator; a communicator takes calls from one thread at a "
                      "time (use one communicator per thread, e.g. strataCommSplit)");
}

void CallerCheck::leave() {
  what_.store(nullptr, std::memory_order_relaxed);
  thread_.store(0, std::memory_order_release);
}

}  // namespace strata::core
