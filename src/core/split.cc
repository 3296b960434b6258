// strataCommSplit (Comm::split): a communicator over some of this one's ranks, with the
// hierarchy of its members and this one's settings.
#include <algorithm>
#include <chrono>
#include <string>
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
  STRATA_RETURN_IF_ERROR(quiesce(issuing()));
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
