// strataCommSplit (Comm::split): a communicator over some of this one's ranks, with the
// hierarchy of its members and this one's settings.
#include <algorithm>
#include <vector>

#include "common/log.h"
#include "core/comm.h"
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

}  // namespace

StatusOr<std::unique_ptr<Comm>> Comm::split(int color, int key, const SplitOptions& opts) {
  // The calls issued before the split run first, on every rank: the split is the next call.
  STRATA_RETURN_IF_ERROR(engine_->drain());
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
    made = boot::agree(*child->boot_, h.status());
    if (made.isOk()) made = child->initFrom(*this, h.take(), opts);
  }
  // Every rank of this communicator learns whether every split succeeded, so that no rank keeps
  // a communicator another group failed to make (its members freed theirs collectively).
  const Status all_ok = boot::agree(*boot_, made);
  if (!all_ok.isOk()) return all_ok;
  if (!child) return std::unique_ptr<Comm>();
  STRATA_INFO(kSubsysInit, "comm %p split from %p: color %d key %d, rank %d of %d, hierarchy %s",
              static_cast<void*>(child.get()), static_cast<void*>(this), color, key, child->rank_,
              child->size_, child->hierarchy_.describe().c_str());
  return child;
}

Status Comm::initFrom(const Comm& parent, topo::Hierarchy hierarchy, const SplitOptions& opts) {
  STRATA_RETURN_IF_ERROR(assignUid());
  settings_ = parent.settings_;
  // Before anything reads them: the wire type shapes the fabrics' options and the plans.
  if (opts.compress) settings_.compress = *opts.compress;
  if (opts.timeoutSeconds) settings_.timeoutSeconds = *opts.timeoutSeconds;
  fabricOptions_ = parent.fabricOptions_;
  costParams_ = parent.costParams_;
  engine_ = std::make_shared<Engine>(parent.engine_->threaded());
  hierarchy_ = std::move(hierarchy);
  hierarchySource_ = "split of " + parent.hierarchySource_;
  STRATA_RETURN_IF_ERROR(buildLevels());
  STRATA_RETURN_IF_ERROR(gatherHosts());
  // The parent's plan file, resolved against this hierarchy; a file that does not fit it (it
  // names levels the split dropped) leaves the choice to the planner.
  if (!settings_.planFile.empty()) {
    Status loaded = loadPlans();
    if (!loaded.isOk()) {
      if (rank_ == 0) {
        STRATA_WARN(kSubsysPlan, "split communicator: %s; its plans come from the planner",
                    loaded.message().c_str());
      }
      planRules_.clear();
      planSource_ = "planner (cost model)";
    }
  } else {
    planSource_ = "planner (cost model)";
  }
  return Status::ok();
}

}  // namespace strata::core
