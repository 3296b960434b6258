#include "common/deadline.h"

#include <cstdio>

#include "common/env.h"
#include "common/log.h"

namespace strata::deadline {
namespace {

constexpr double kDefaultSeconds = 600;

// The innermost scope in force on this thread.
thread_local bool tHas = false;
thread_local Clock::time_point tAt;
thread_local double tSeconds = 0;
thread_local const char* tSource = "STRATA_TIMEOUT";
thread_local const std::atomic<bool>* tCancel = nullptr;

}  // namespace

double configuredSeconds() {
  static std::atomic<bool> warned{false};
  StatusOr<double> v = env::get(env::var::STRATA_TIMEOUT);
  if (v.isOk()) return v.value();
  // Communicator init refuses the value (core/settings.cc); the waits before there is a
  // communicator (the unique-id rendezvous) still need a budget, and the default is the safe one.
  if (!warned.exchange(true)) {
    STRATA_WARN(kSubsysEnv, "%s; waits outside a communicator use the default %g s",
                v.status().message().c_str(), kDefaultSeconds);
  }
  return kDefaultSeconds;
}

Scope::Scope(double seconds, const std::atomic<bool>* cancel, const char* source)
    : savedAt_(tAt),
      savedSeconds_(tSeconds),
      savedSource_(tSource),
      savedHas_(tHas),
      savedCancel_(tCancel) {
  if (cancel != nullptr) tCancel = cancel;
  if (seconds > 0) {
    // Far-off values (years) saturate instead of overflowing the clock's representation.
    const double capped = seconds < 1e9 ? seconds : 1e9;
    const Clock::time_point at = Clock::now() + std::chrono::duration_cast<Clock::duration>(
                                                    std::chrono::duration<double>(capped));
    if (!tHas || at < tAt) {  // the earlier deadline wins
      tAt = at;
      tSeconds = seconds;
      tSource = source;
      tHas = true;
    }
  }
}

Scope::~Scope() {
  tAt = savedAt_;
  tSeconds = savedSeconds_;
  tSource = savedSource_;
  tHas = savedHas_;
  tCancel = savedCancel_;
}

bool Scope::active() { return tHas || tCancel != nullptr; }

bool Scope::cancelled() { return tCancel != nullptr && tCancel->load(std::memory_order_relaxed); }

bool Scope::expired() { return cancelled() || (tHas && Clock::now() >= tAt); }

double Scope::seconds() { return tHas ? tSeconds : 0; }

const char* Scope::source() { return tSource; }

Status expiredError(const std::string& what) {
  if (Scope::cancelled()) {
    return Status(Code::kRemoteError, "aborted (strataCommAbort) while " + what);
  }
  char budget[64];
  std::snprintf(budget, sizeof(budget), "%g", Scope::seconds());
  return Status(Code::kRemoteError,
                std::string("timed out after ") + budget + " s (" + Scope::source() + ") " + what);
}

}  // namespace strata::deadline
