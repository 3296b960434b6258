#include "common/deadline.h"

#include <cstdio>
#include <string>

#include "common/env.h"
#include "common/log.h"

namespace strata::deadline {
namespace {

constexpr double kDefaultSeconds = 600;

// The innermost scope in force on this thread. One thread_local, so that a function reaches it
// with one TLS lookup (in a shared library each thread_local costs a __tls_get_addr call, and
// every call of the API opens two scopes).
thread_local ScopeState tState;

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

namespace {

// Starts the deadline of a scope that has not read the clock yet: it counts from the first
// moment anyone asks (a wait's first check, or a nested scope), not from the scope's opening.
// Most calls never wait long enough to check, so most scopes never read the clock (two reads
// per call were a tenth of a small allreduce's cost on a VM's clock).
void arm(ScopeState& t) {
  // Far-off values (years) saturate instead of overflowing the clock's representation.
  const double capped = t.seconds < 1e9 ? t.seconds : 1e9;
  t.at = Clock::now() +
         std::chrono::duration_cast<Clock::duration>(std::chrono::duration<double>(capped));
  t.armed = true;
}

}  // namespace

Scope::Scope(double seconds, const Cancel* cancel, const char* source) {
  ScopeState& t = tState;
  // An enclosing deadline starts now at the latest: this scope's wait must not restart it when
  // it restores the enclosing state.
  if (t.has && !t.armed) arm(t);
  saved_ = t;
  if (cancel != nullptr) t.cancel = cancel;
  if (seconds <= 0) return;
  if (!t.has) {
    t.has = true;
    t.armed = false;
    t.seconds = seconds;
    t.source = source;
    return;
  }
  ScopeState mine = t;
  mine.seconds = seconds;
  arm(mine);
  if (mine.at < t.at) {  // the earlier deadline wins
    t.at = mine.at;
    t.seconds = seconds;
    t.source = source;
  }
}

Scope::~Scope() { tState = saved_; }

bool Scope::active() {
  const ScopeState& t = tState;
  return t.has || t.cancel != nullptr;
}

bool Cancel::set(const std::string& why) {
  if (claimed_.exchange(true, std::memory_order_acq_rel)) return false;
  why_ = why;
  set_.store(true, std::memory_order_release);
  return true;
}

std::string Cancel::why() const {
  if (!set_.load(std::memory_order_acquire)) return "";
  return why_;
}

bool Scope::cancelled() {
  const Cancel* cancel = tState.cancel;
  return cancel != nullptr && cancel->isSet();
}

bool Scope::expired() {
  ScopeState& t = tState;
  if (t.cancel != nullptr && t.cancel->isSet()) return true;
  if (!t.has) return false;
  if (!t.armed) {
    arm(t);
    return false;
  }
  return Clock::now() >= t.at;
}

double Scope::seconds() {
  const ScopeState& t = tState;
  return t.has ? t.seconds : 0;
}

const char* Scope::source() { return tState.source; }

Status expiredError(const std::string& what) {
  if (Scope::cancelled()) {
    std::string why = tState.cancel->why();
    if (why.empty()) why = "cancelled";  // set, but its reason not yet published
    return Status(Code::kRemoteError, why + " while " + what);
  }
  char budget[64];
  std::snprintf(budget, sizeof(budget), "%g", Scope::seconds());
  return Status(Code::kRemoteError,
                std::string("timed out after ") + budget + " s (" + Scope::source() + ") " + what);
}

}  // namespace strata::deadline
