// A communicator's side of recovery (docs/recovery.md): members known lost, strataCommRevoke,
// and what a call on a revoked communicator gets. strataCommShrink is core/split.cc.
//
// Invariants: a lost member sets the communicator's cancel flag once, with an error that names
// the member (in this communicator's numbering) and why it is known lost: a call in flight ends
// at its next wait, so no survivor waits for STRATA_TIMEOUT on a process that is gone; the next
// call (IssueScope) or strataCommGetAsyncError starts the error state with it. memberLost runs on
// the control plane's watcher, so it only records and signals: it never talks to peers and never
// waits.
#include <chrono>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include "common/log.h"
#include "core/comm.h"
#include "core/names.h"

namespace strata::core {

Status IssueScope::revokedError() {
  return invalidUsage(
      "the communicator was revoked (strataCommRevoke): it accepts only strataCommDestroy, "
      "strataCommAbort, strataCommSplit and strataCommShrink");
}

void Comm::watchMembers() {
  if (watch_) return;  // a shrink watches before initFrom
  // The hash as it is now, not read later from the watcher's thread (setup may rewrite it).
  watch_ = boot_->watchMembers(
      [this, hash = hash_](int member, const std::string& why) { memberLost(member, hash, why); });
}

void Comm::memberLost(int member, uint64_t hash, const std::string& why) {
  {
    std::lock_guard<std::mutex> lock(lostMu_);
    for (const auto& l : lost_) {
      if (l.first == member) return;
    }
    lost_.emplace_back(member, why);
  }
  const std::string what =
      "rank " + std::to_string(member) + " of commHash " + hashText(hash) + " was lost: " + why;
  STRATA_WARN(kSubsysInit, "rank %d: %s", rank_, what.c_str());
  // Not the engine: setup may still replace it. The calls in flight or queued fail at their
  // next wait; later ones at the door (IssueScope), strataCommGetAsyncError reports it.
  cancel_.set(what);
}

Status Comm::lostError() const {
  std::lock_guard<std::mutex> lock(lostMu_);
  if (lost_.empty()) return Status::ok();
  return Status(Code::kRemoteError, "rank " + std::to_string(lost_.front().first) +
                                        " of commHash " + hashText(hash_) +
                                        " was lost: " + lost_.front().second);
}

void Comm::attributeLoss(Status& st) const {
  // A fabric may see a lost process first (a UCX endpoint error: "Endpoint timeout",
  // "Connection reset", "Shared memory error") and fail as a system error naming a member of
  // one level's group. The watcher hears of it within its period or two: give it a second,
  // and if it names a lost rank, the call's error says so, as every other survivor's does.
  // Only for control planes that watch (not MPI) and only for system errors (a timeout
  // already waited; an agreement's failure is not a loss).
  if (!watch_ || st.code() != Code::kSystemError) return;
  const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(1);
  Status lost = lostError();
  while (lost.isOk() && std::chrono::steady_clock::now() < until) {
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
    lost = lostError();
  }
  if (lost.isOk()) return;
  Status named(Code::kRemoteError, st.message() + "; " + lost.message());
  if (st.wasLogged()) named.markLogged();
  st = named;
}

std::vector<std::pair<int, std::string>> Comm::lostMembers() const {
  std::lock_guard<std::mutex> lock(lostMu_);
  return lost_;
}

void Comm::revoke() {
  if (revoked_.exchange(true, std::memory_order_acq_rel)) return;
  STRATA_INFO(kSubsysInit, "commHash %s rank %d: revoked (strataCommRevoke)",
              hashText(hash_).c_str(), rank_);
  // A call in flight ends at its next wait; queued ones fail instead of running. A lost
  // member's error, when there is one, stays the communicator's error.
  cancel_.set("revoked (strataCommRevoke)");
  engine_->abort(IssueScope::revokedError());
}

}  // namespace strata::core
