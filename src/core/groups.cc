#include "core/groups.h"

#include <algorithm>

#include "common/log.h"
#include "common/mpi_check.h"
#include "core/init.h"
#include "decompose/planner.h"

namespace strata::core {
namespace {

// FNV-1a over every rank's (member, color, index) at `level` and the fabric name: equal on all
// ranks, and equal for two hierarchies only when they split the ranks into the same groups in
// the same member order.
uint64_t signature(const topo::Hierarchy& h, int level) {
  uint64_t x = 1469598103934665603ull;
  auto mix = [&](uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      x ^= (v >> (8 * i)) & 0xff;
      x *= 1099511628211ull;
    }
  };
  for (int r = 0; r < h.numRanks(); ++r) {
    const topo::StageGroup g = topo::stageGroup(h, level, r);
    mix(g.member ? 1 : 0);
    mix(static_cast<uint64_t>(g.color + 1));
    mix(static_cast<uint64_t>(g.index + 1));
  }
  for (char ch : h.level(level).fabric) mix(static_cast<unsigned char>(ch));
  return x;
}

}  // namespace

StatusOr<LevelGroup*> ensureGroup(strataComm& c, const topo::Hierarchy& h, int level) {
  const uint64_t key = signature(h, level);
  auto it = c.groups.find(key);
  if (it != c.groups.end()) return it->second.get();
  const topo::StageGroup g = topo::stageGroup(h, level, c.rank);
  auto lg = std::make_unique<LevelGroup>();
  STRATA_MPI_CHECK(MPI_Comm_split(c.mpi, g.member ? g.color : MPI_UNDEFINED, g.index, &lg->comm));
  Status st = Status::ok();
  if (g.member) {
    lg->index = g.index;
    lg->size = g.size;
    StatusOr<std::unique_ptr<fabric::Fabric>> f =
        fabric::createFabric(h.level(level).fabric, lg->comm, c.fabricOptions);
    if (f.isOk()) {
      lg->fabric = f.take();
    } else {
      st = f.status().withContext("level '" + h.level(level).name + "'");
    }
  }
  STRATA_RETURN_IF_ERROR(agree(c.mpi, st));
  STRATA_TRACE(kSubsysFabric, "group for level '%s': member %d index %d of %d",
               h.level(level).name.c_str(), g.member ? 1 : 0, g.index, g.size);
  LevelGroup* out = lg.get();
  c.groups.emplace(key, std::move(lg));
  return out;
}

// Builds a plan's exec: its derived hierarchy and stage groups. Collective.
StatusOr<std::unique_ptr<PlanExec>> makeExec(strataComm& c, const plan::Plan& chosen) {
  auto exec = std::make_unique<PlanExec>();
  exec->plan = chosen;
  exec->description = plan::describePlan(c.hierarchy, chosen);
  if (!chosen.passthrough) {
    STRATA_ASSIGN_OR_RETURN(exec->derived, plan::planHierarchy(c.hierarchy, chosen));
    for (int l = 0; l < exec->derived.numLevels(); ++l) {
      STRATA_ASSIGN_OR_RETURN(LevelGroup * g, ensureGroup(c, exec->derived, l));
      exec->groups.push_back(g);
    }
  }
  return exec;
}

StatusOr<PlanExec*> execForPlan(strataComm& c, const plan::Plan& p) {
  const std::string key = plan::describePlan(c.hierarchy, p);
  auto it = c.forcedPlans.find(key);
  if (it != c.forcedPlans.end()) return it->second.get();
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<PlanExec> exec, makeExec(c, p));
  PlanExec* out = exec.get();
  c.forcedPlans.emplace(key, std::move(exec));
  return out;
}

StatusOr<PlanExec*> planForBytes(strataComm& c, size_t bytes) {
  int slot = 0;
  plan::Plan chosen;
  if (!c.planRules.empty()) {
    slot = std::max(0, plan::ruleIndexFor(c.planRules, bytes));  // resolved rules cover all sizes
    auto it = c.plans.find(slot);
    if (it != c.plans.end()) return it->second.get();
    chosen = c.planRules[slot].plan;
  } else {
    slot = plan::sizeBucket(bytes);
    auto it = c.plans.find(slot);
    if (it != c.plans.end()) return it->second.get();
    chosen = plan::choosePlan(c.hierarchy, plan::bucketBytes(slot), c.costParams).plan;
  }
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<PlanExec> exec, makeExec(c, chosen));
  STRATA_INFO(kSubsysPlan, "allreduce of %zu bytes (%s %d): plan %s: %s%s%s", bytes,
              c.planRules.empty() ? "size bucket" : "plan file rule", slot, chosen.name.c_str(),
              exec->description.c_str(), chosen.note.empty() ? "" : "; ", chosen.note.c_str());
  PlanExec* out = exec.get();
  c.plans.emplace(slot, std::move(exec));
  return out;
}

}  // namespace strata::core
