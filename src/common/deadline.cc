#include "common/deadline.h"

#include <cmath>
#include <cstdio>
#include <cstdlib>

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

bool parseSeconds(const std::string& text, double* out) {
  if (text.empty()) return false;
  for (char ch : text) {
    // Plain decimals only: no sign, exponent, hex, inf or nan (strtod would take them all).
    if (!(ch == '.' || (ch >= '0' && ch <= '9'))) return false;
  }
  char* end = nullptr;
  const double v = std::strtod(text.c_str(), &end);
  if (end != text.c_str() + text.size() || !std::isfinite(v) || v < 0) return false;
  *out = v;
  return true;
}

double configuredSeconds() {
  static std::atomic<bool> warned{false};
  const std::string text = env::getString("STRATA_TIMEOUT");
  double v = kDefaultSeconds;
  if (!text.empty() && !parseSeconds(text, &v)) {
    v = kDefaultSeconds;
    if (!warned.exchange(true)) {
      STRATA_WARN(kSubsysEnv, "STRATA_TIMEOUT=%s is not a number of seconds; using the default %g",
                  text.c_str(), kDefaultSeconds);
    }
  }
  return v;
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
