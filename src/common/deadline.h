// Deadlines: no wait in strata lasts longer than STRATA_TIMEOUT for its peers.
//
// A deadline belongs to a thread and a scope: the issuing thread (or the progress thread) opens
// a Scope for one collective, and every wait below it (the shm fabric's barrier, a polled MPI
// request, a bootstrap collective) asks Poll::expired() while it spins or yields. Like
// fabric::IdleHook, scopes nest and restore the previous one; an inner scope never extends an
// outer deadline (the earlier one wins), so a setup collective inside a call cannot outlive
// the call.
//
// A scope may also carry a cancel flag (the communicator's, set by strataCommAbort from
// another thread): a wait then ends as soon as it is set, without waiting for the clock.
//
// A scope's budget counts from the first time it is needed: the first check of a wait below it
// (or a scope opened inside it), not the scope's opening. A call that never waits long enough
// to check never reads the clock; one that does gets its whole budget for its waits.
//
// Cost: Poll reads the clock once every kClockEvery calls, so a waiter that spins pays a
// counter increment per spin; one that yields pays a clock read per yield (tens of ns).
#pragma once

#include <atomic>
#include <chrono>
#include <cstdint>
#include <string>

#include "common/status.h"

namespace strata::deadline {

using Clock = std::chrono::steady_clock;

// A cancel flag with its reason ("aborted (strataCommAbort)", "revoked (strataCommRevoke)",
// "rank 3 was lost: ..."): set from any thread, read by waits on others. The first reason stays:
// why_ is written once, before the release store of set_, and read only after an acquire load
// saw it set.
class Cancel {
 public:
  bool isSet() const { return set_.load(std::memory_order_relaxed); }
  // Sets the flag with `why` unless it is set already. Returns whether this call set it.
  bool set(const std::string& why);
  // The reason, or "" while unset.
  std::string why() const;

 private:
  std::atomic<bool> claimed_{false}, set_{false};
  std::string why_;
};

// STRATA_TIMEOUT in seconds (read once; a duration, common/units.h); 0 means no deadline. A
// malformed value fails communicator init (core/settings.cc); here, for the waits before a
// communicator exists, it logs a warning once and gives the default.
double configuredSeconds();

// What a thread's innermost scope holds (Scope saves and restores it whole).
struct ScopeState {
  bool has = false;    // a deadline is in force
  bool armed = false;  // `at` is set: the deadline started (deadline.cc: arm)
  Clock::time_point at;
  double seconds = 0;
  const char* source = "STRATA_TIMEOUT";
  const Cancel* cancel = nullptr;
};

class Scope {
 public:
  // seconds <= 0: no deadline of its own (an outer one still applies). cancel: optional.
  // source: where the budget was set, for messages (a string that outlives the scope).
  explicit Scope(double seconds, const Cancel* cancel = nullptr,
                 const char* source = "STRATA_TIMEOUT");
  ~Scope();
  Scope(const Scope&) = delete;
  Scope& operator=(const Scope&) = delete;

  // Whether this thread has a deadline (or a cancel flag) in force.
  static bool active();
  // Whether it has passed (or the cancel flag is set). Reads the clock.
  static bool expired();
  // Whether the cancel flag is set (the error then says aborted, not timed out).
  static bool cancelled();
  // The budget of the innermost scope with a deadline, in seconds, and where it was set (for
  // messages).
  static double seconds();
  static const char* source();

 private:
  ScopeState saved_;  // the enclosing scope's, restored on exit
};

// A Scope of STRATA_TIMEOUT when the thread has none in force (bootstrap collectives at
// init, outside any call); otherwise nothing.
class DefaultScope {
 public:
  DefaultScope() {
    if (!Scope::active()) scope_ = new (storage_) Scope(configuredSeconds());
  }
  ~DefaultScope() {
    if (scope_ != nullptr) scope_->~Scope();
  }
  DefaultScope(const DefaultScope&) = delete;
  DefaultScope& operator=(const DefaultScope&) = delete;

 private:
  alignas(Scope) unsigned char storage_[sizeof(Scope)];
  Scope* scope_ = nullptr;
};

// One waiter's checks: expired() reads the clock every kClockEvery calls only.
class Poll {
 public:
  static constexpr unsigned kClockEvery = 64;
  bool expired() {
    if (++calls_ % kClockEvery != 0) return false;
    return Scope::expired();
  }
  // Reads the clock now (after a yield, which costs more than the read).
  bool expiredNow() { return Scope::expired(); }

 private:
  unsigned calls_ = 0;
};

// The status of a wait that ended on the deadline (strataRemoteError): "timed out after 2 s
// (STRATA_TIMEOUT) <what>", the scope's source in the parentheses, or "<the cancel's reason>
// while <what>" when cancelled ("aborted (strataCommAbort) while ...").
Status expiredError(const std::string& what);

}  // namespace strata::deadline
