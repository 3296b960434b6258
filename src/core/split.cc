// strataCommSplit (Comm::split) and strataCommShrink (Comm::shrink): a communicator over some
// of this one's ranks, with the hierarchy of its members and this one's settings.
#include <algorithm>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "common/log.h"
#include "core/comm.h"
#include "core/describe.h"
#include "core/flight_signal.h"
#include "fabrics/registry.h"

namespace strata::core {
namespace {

// The ranks of this communicator that pass `color`, in the order the split gives them:
// (key, rank), as MPI_Comm_split orders them.
std::vector<int> membersOf(const std::vector<int>& colors, const std::vector<int>& keys,
                           int color) {
  std::vector<int> ranks;
  for (int r = 0; r < static_cast<int>(colors.size()); ++r) {
    if (colors[r] == color) ranks.push_back(r);
  }
  std::stable_sort(ranks.begin(), ranks.end(), [&](int a, int b) { return keys[a] < keys[b]; });
  return ranks;
}

constexpr int kInheritWire = -1;

// How long a shrink's members wait, once the new communicator is made, for news of a member
// lost while it was made: two periods of the control plane's watcher (tcp_world.h) and a
// margin for the notice.
constexpr int kLossNewsMs = 150;

// The members of one new communicator must agree on its compression, which changes what they
// exchange.
Status checkSameWire(const std::vector<int>& colors, const std::vector<int>& wires) {
  for (size_t a = 0; a < colors.size(); ++a) {
    for (size_t b = a + 1; b < colors.size(); ++b) {
      if (colors[a] >= 0 && colors[a] == colors[b] && wires[a] != wires[b]) {
        const auto name = [](int w) {
          return w == kInheritWire ? "NULL (inherit)" : wireTypeName(static_cast<WireType>(w));
        };
        return invalidUsage("strataCommSplit: ranks " + std::to_string(a) + " and " +
                            std::to_string(b) + " of color " + std::to_string(colors[a]) +
                            " pass different config->compress (" + name(wires[a]) + " and " +
                            name(wires[b]) + ")");
      }
    }
  }
  return Status::ok();
}

// The hash of a split's communicator: its lineage (the parent's hash, which split of the parent,
// the color), so every member computes it alone, and two children of one split differ.
uint64_t splitHash(uint64_t parent, uint64_t index, int color) {
  uint64_t x = 0xcbf29ce484222325ull;
  for (uint64_t v : {parent, index, static_cast<uint64_t>(static_cast<uint32_t>(color))}) {
    for (int i = 0; i < 8; ++i) x = (x ^ ((v >> (8 * i)) & 0xff)) * 0x100000001b3ull;
  }
  return x;
}

}  // namespace

StatusOr<std::unique_ptr<Comm>> Comm::split(int color, int key, const SplitOptions& opts) {
  CallerScope one(callerCheck_, "split");
  STRATA_RETURN_IF_ERROR(one.status());
  // The calls issued before the split run first, on every rank: the split is the next call.
  // A revoked communicator's calls ended (or failed) by the revoke, which is what it is for.
  const Status before = quiesce(issuing());
  if (!before.isOk() && !revoked()) return before;
  const auto start = std::chrono::steady_clock::now();
  const uint64_t splitIndex = ++splits_;  // every member counts every split, in the same order
  const int mine[3] = {color < 0 ? -1 : color, key,
                       opts.compress ? static_cast<int>(*opts.compress) : kInheritWire};
  std::vector<int> all(3 * static_cast<size_t>(size_));
  STRATA_RETURN_IF_ERROR(boot_->allGather(mine, all.data(), sizeof(mine)));
  std::vector<int> colors(size_), keys(size_), wires(size_);
  for (int r = 0; r < size_; ++r) {
    colors[r] = all[3 * r];
    keys[r] = all[3 * r + 1];
    wires[r] = all[3 * r + 2];
  }
  // Every rank sees every rank's request, so all return the same verdict.
  STRATA_RETURN_IF_ERROR(checkSameWire(colors, wires));
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<boot::Bootstrap> childBoot, boot_->split(mine[0], key));
  std::unique_ptr<Comm> child;
  Status made = Status::ok();
  if (childBoot) {
    StatusOr<topo::Hierarchy> h = hierarchy_.subset(membersOf(colors, keys, mine[0]));
    // Every member computed the same hierarchy; a failure here is everyone's.
    child.reset(new Comm());
    child->boot_ = std::move(childBoot);
    child->rank_ = child->boot_->rank();
    child->size_ = child->boot_->size();
    child->engine_ = std::make_shared<Engine>(false);
    child->hash_ = splitHash(hash_, splitIndex, mine[0]);
    logInitStart(*child, "split of commHash " + hashText(hash_) + " color " +
                             std::to_string(mine[0]) + " key " + std::to_string(key));
    made = boot::agree(*child->boot_, h.status());
    if (made.isOk()) made = child->initFrom(*this, h.take(), opts);
  }
  // Every rank of this communicator learns whether every split succeeded, so that no rank keeps
  // a communicator another group failed to make (its members freed theirs collectively).
  const Status all_ok = boot::agree(*boot_, made);
  if (!all_ok.isOk()) return all_ok;
  if (!child) return std::unique_ptr<Comm>();
  logInitComplete(
      *child,
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
  return child;
}

StatusOr<std::unique_ptr<Comm>> Comm::shrink(const std::vector<int>& exclude,
                                             const SplitOptions& opts, bool abortFirst) {
  CallerScope one(callerCheck_, "shrink");
  STRATA_RETURN_IF_ERROR(one.status());
  const auto start = std::chrono::steady_clock::now();
  if (abortFirst) {
    // STRATA_SHRINK_ABORT: a call in flight ends at its next wait, queued ones fail; the
    // communicator's own error (a lost rank's) stays its error.
    cancel_.set("ended by strataCommShrink (STRATA_SHRINK_ABORT)");
    engine_->abort(Status(Code::kRemoteError, "ended by strataCommShrink (STRATA_SHRINK_ABORT)"));
  }
  // STRATA_SHRINK_DEFAULT: the calls issued before run first; their errors were theirs.
  (void)quiesce(issuing());
  const uint64_t shrinkIndex = ++splits_;  // every survivor counts it, in the same order
  std::vector<bool> excluded(static_cast<size_t>(size_), false);
  for (int r : exclude) excluded[r] = true;
  // The agreement and the new communicator's setup wait for late survivors up to the timeout,
  // and not on this communicator's cancel flag (set by its lost member or a revoke).
  deadline::Scope scope(settings_.timeoutSeconds, nullptr, settings_.timeoutSource);
  for (int attempt = 0;; ++attempt) {
    for (const auto& l : lostMembers()) excluded[l.first] = true;
    STRATA_ASSIGN_OR_RETURN(boot::Bootstrap::Shrunk agreed, boot_->shrink(excluded));
    std::vector<int> members;
    std::string gone;
    for (int r = 0; r < size_; ++r) {
      if (!agreed.excluded[r]) {
        members.push_back(r);
      } else {
        gone += (gone.empty() ? "" : ", ") + std::to_string(r);
      }
    }
    StatusOr<std::unique_ptr<Comm>> child =
        makeShrunk(std::move(agreed.boot), members, opts, shrinkIndex, attempt, gone);
    if (child.isOk()) {
      std::unique_ptr<Comm> made = child.take();
      superseded_.store(true);
      logInitComplete(
          *made, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start)
                     .count());
      return made;
    }
    // A member lost while the new communicator was made: agree again, without it. Any other
    // failure is every member's (they agreed on it) and ends the shrink.
    bool lostMore = false;
    for (const auto& l : lostMembers()) lostMore = lostMore || !agreed.excluded[l.first];
    if (!lostMore) return child.status();
    STRATA_WARN(kSubsysInit, "commHash %s rank %d: strataCommShrink: %s; agreeing again",
                hashText(hash_).c_str(), rank_, child.status().message().c_str());
    excluded = agreed.excluded;
  }
}

StatusOr<std::unique_ptr<Comm>> Comm::makeShrunk(std::unique_ptr<boot::Bootstrap> childBoot,
                                                 const std::vector<int>& members,
                                                 const SplitOptions& opts, uint64_t shrinkIndex,
                                                 int attempt, const std::string& gone) {
  StatusOr<topo::Hierarchy> h = hierarchy_.subset(members);
  std::unique_ptr<Comm> child(new Comm());
  child->boot_ = std::move(childBoot);
  child->rank_ = child->boot_->rank();
  child->size_ = child->boot_->size();
  child->engine_ = std::make_shared<Engine>(false);
  child->hash_ = splitHash(hash_, shrinkIndex, -2 - attempt);
  child->watchMembers();  // before its first wait on a member
  logInitStart(*child, "shrink of commHash " + hashText(hash_) + " without rank(s) " +
                           (gone.empty() ? std::string("(none)") : gone));
  Status made;
  {
    // A member lost while it is made ends every wait at once (watchMembers in initFrom).
    deadline::Scope lost(0, child->cancelFlag());
    made = boot::agree(*child->boot_, h.status());
    if (made.isOk()) made = child->initFrom(*this, h.take(), opts);
    if (made.isOk()) child->hierarchySource_ = "shrink of " + hierarchySource_;
    // Every member learns whether every member made it.
    if (made.isOk()) made = boot::agree(*child->boot_, made);
    // A member lost during that last exchange may have failed some members and not others
    // (a ring passes on what it had): wait two watch periods for the news, and fail with it
    // too, so that every member agrees again. (A loss after this is the new communicator's.)
    if (made.isOk() && child->watch_) {
      std::this_thread::sleep_for(std::chrono::milliseconds(kLossNewsMs));
      made = child->lostError();
    }
  }
  if (!made.isOk()) {
    child->abandon();  // its peers may be anywhere: free only what is local
    return made;
  }
  return child;
}

Status Comm::initFrom(const Comm& parent, topo::Hierarchy hierarchy, const SplitOptions& opts) {
  const uint64_t lineage = hash_;  // split() set it; assignUid's nonce is not wanted here
  STRATA_RETURN_IF_ERROR(assignUid());
  hash_ = lineage;
  settings_ = parent.settings_;
  // Before anything reads them: the wire type shapes the fabrics' options and the plans.
  if (opts.compress) settings_.compress = *opts.compress;
  if (opts.timeoutSeconds) settings_.timeoutSeconds = *opts.timeoutSeconds;
  flight_ = std::make_unique<FlightRecorder>(settings_.flightCalls);
  STRATA_RETURN_IF_ERROR(watchDumpSignal(*this, settings_.dumpSignal));
  fabricOptions_ = parent.fabricOptions_;
  costParams_ = parent.costParams_;
  engine_ = std::make_shared<Engine>(parent.engine_->threaded());
  watchMembers();
  bindOwners();
  hierarchy_ = std::move(hierarchy);
  hierarchySource_ = "split of " + parent.hierarchySource_;
  const IssuingThread me = issuing();
  STRATA_RETURN_IF_ERROR(groups_.buildLevels(me));
  STRATA_RETURN_IF_ERROR(groups_.gatherHosts(me));
  // The parent's plan file, resolved against this hierarchy; a file that does not fit it (it
  // names levels the split dropped) leaves the choice to the planner.
  if (!settings_.planFile.empty()) {
    Status loaded = loadPlans();
    if (!loaded.isOk()) {
      if (rank_ == 0) {
        STRATA_WARN(kSubsysPlan, "split communicator: %s; its plans come from the planner",
                    loaded.message().c_str());
      }
      plans_.setRules({}, "planner (cost model)");
    }
  }
  return openTimeline();  // the parent's STRATA_TRACE: agreed when it was made
}

}  // namespace strata::core
