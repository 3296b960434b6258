// Stage groups and plans (Comm's setup members): the control plane and fabric of one level of a
// hierarchy, made once and shared by every plan that needs the same group.
#include <algorithm>
#include <map>
#include <string>

#include "common/log.h"
#include "core/comm.h"
#include "core/describe.h"
#include "decompose/planner.h"
#include "fabrics/registry.h"

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

StatusOr<LevelGroup*> Comm::ensureGroup(const topo::Hierarchy& h, int level) {
  const uint64_t key = signature(h, level);
  auto it = groups_.find(key);
  if (it != groups_.end()) return it->second.get();
  STRATA_RETURN_IF_ERROR(beginSetup());
  const topo::StageGroup g = topo::stageGroup(h, level, rank_);
  auto lg = std::make_unique<LevelGroup>();
  lg->fabricName = h.level(level).fabric;
  STRATA_ASSIGN_OR_RETURN(lg->boot, boot_->split(g.member ? g.color : -1, g.index));
  Status st = Status::ok();
  if (g.member) {
    lg->index = g.index;
    lg->size = g.size;
    StatusOr<std::unique_ptr<fabric::Fabric>> f =
        fabric::createFabric(lg->fabricName, *lg->boot, fabricOptions_);
    if (f.isOk()) {
      lg->fabric = f.take();
    } else {
      st = f.status().withContext("level '" + h.level(level).name + "'");
    }
  }
  STRATA_RETURN_IF_ERROR(boot::agree(*boot_, st));
  // The host path's fabric choice (the hierarchy's level, or a plan stage's `fabric:`), once per
  // group made: at init for the hierarchy's levels, on a plan's first use for its stages.
  if (g.member) {
    STRATA_INFO(kSubsysInit | kSubsysFabric,
                "commHash %s host fabric %s for level '%s': group of %d, this rank at %d",
                hashText(hash_).c_str(), lg->fabricName.c_str(), h.level(level).name.c_str(),
                g.size, g.index);
  }
  LevelGroup* out = lg.get();
  groups_.emplace(key, std::move(lg));
  return out;
}

// Builds a plan's exec: its derived hierarchy and stage groups. Collective.
StatusOr<std::unique_ptr<PlanExec>> Comm::makeExec(const plan::Plan& chosen) {
  auto exec = std::make_unique<PlanExec>();
  exec->plan = chosen;
  exec->description = plan::describePlan(hierarchy_, chosen);
  if (!chosen.passthrough) {
    STRATA_ASSIGN_OR_RETURN(exec->derived, plan::planHierarchy(hierarchy_, chosen));
    for (int l = 0; l < exec->derived.numLevels(); ++l) {
      STRATA_ASSIGN_OR_RETURN(LevelGroup * g, ensureGroup(exec->derived, l));
      exec->groups.push_back(g);
    }
    exec->wire = wireOf(chosen, exec->derived);
  }
  return exec;
}

Status Comm::gatherHosts() {
  hostOf_.clear();
  // Every rank has the same STRATA_COMPRESS (an agreed setting), so all take this branch alike.
  if (settings_.compress == WireType::kNone) return Status::ok();
  STRATA_ASSIGN_OR_RETURN(std::vector<std::string> hosts,
                          boot::allGatherStrings(*boot_, settings_.hostName));
  std::map<std::string, int> ids;
  for (const std::string& host : hosts) {
    hostOf_.push_back(ids.emplace(host, static_cast<int>(ids.size())).first->second);
  }
  return Status::ok();
}

// A stage with a plan file's `wire:` takes it as given; any other takes STRATA_COMPRESS when
// one of its groups spans hosts (the slow links), and stays float32 inside a host.
std::vector<WireType> Comm::wireOf(const plan::Plan& p, const topo::Hierarchy& derived) const {
  std::vector<WireType> wire;
  for (int j = 0; j < static_cast<int>(p.stages.size()); ++j) {
    const plan::Stage& s = p.stages[j];
    WireType w = WireType::kNone;
    if (s.wire) {
      w = *s.wire;
    } else if (settings_.compress != WireType::kNone &&
               topo::levelCrossesHosts(derived, j, hostOf_)) {
      w = settings_.compress;
    }
    wire.push_back(w);
  }
  return wire;
}

StatusOr<PlanExec*> Comm::execForPlan(const plan::Plan& p) {
  const std::string key = plan::describePlan(hierarchy_, p);
  auto it = forcedPlans_.find(key);
  if (it != forcedPlans_.end()) return it->second.get();
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<PlanExec> exec, makeExec(p));
  PlanExec* out = exec.get();
  forcedPlans_.emplace(key, std::move(exec));
  return out;
}

plan::RootedForm Comm::rootedForm(Collective coll, size_t bytes) {
  const int bucket = plan::sizeBucket(bytes);
  const auto key = std::make_pair(static_cast<int>(coll), bucket);
  auto it = rootedForms_.find(key);
  if (it != rootedForms_.end()) return it->second;
  const plan::RootedChoice choice =
      plan::chooseRooted(hierarchy_, coll, plan::bucketBytes(bucket), costParams_);
  STRATA_INFO(kSubsysInit | kSubsysPlan, "commHash %s %s of %zu bytes (size bucket %d): %s",
              hashText(hash_).c_str(), collectiveName(coll), bytes, bucket,
              plan::rootedFormName(coll, choice.form));
  rootedForms_.emplace(key, choice.form);
  return choice.form;
}

int Comm::planSlot(size_t bytes) const {
  if (planRules_.empty()) return plan::sizeBucket(bytes);
  return std::max(0, plan::ruleIndexFor(planRules_, bytes));  // resolved rules cover all sizes
}

StatusOr<PlanExec*> Comm::planForBytes(size_t bytes) {
  const int slot = planSlot(bytes);
  auto it = plans_.find(slot);
  if (it != plans_.end()) return it->second.get();
  const plan::Plan chosen =
      planRules_.empty() ? plan::choosePlan(hierarchy_, plan::bucketBytes(slot), costParams_).plan
                         : planRules_[slot].plan;
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<PlanExec> exec, makeExec(chosen));
  // Once per size bucket (or plan-file rule) and communicator, never per call.
  STRATA_INFO(kSubsysInit | kSubsysPlan,
              "commHash %s allreduce of %zu bytes (%s %d): plan %s: %s%s%s",
              hashText(hash_).c_str(), bytes, planRules_.empty() ? "size bucket" : "plan file rule",
              slot, chosen.name.c_str(), exec->description.c_str(), chosen.note.empty() ? "" : "; ",
              chosen.note.c_str());
  PlanExec* out = exec.get();
  plans_.emplace(slot, std::move(exec));
  return out;
}

Status Comm::prepareFusionPlans(size_t maxBytes) {
  if (!fusionPlans_.empty()) return Status::ok();
  const int last = planSlot(std::max<size_t>(1, maxBytes));
  std::vector<PlanExec*> bySlot(static_cast<size_t>(last) + 1, nullptr);
  for (int slot = 0; slot <= last; ++slot) {
    // A size the slot holds: the bucket's lower bound, or the rule's (bucket 0 and a rule from
    // 0 hold 1 byte too).
    const size_t bytes =
        planRules_.empty() ? size_t{1} << slot : std::max<size_t>(1, planRules_[slot].minBytes);
    if (planSlot(bytes) != slot) continue;  // a rule with no size of its own
    STRATA_ASSIGN_OR_RETURN(bySlot[slot], planForBytes(bytes));
  }
  fusionPlans_ = std::move(bySlot);
  return Status::ok();
}

PlanExec* Comm::fusionPlanFor(size_t bytes) const {
  const size_t slot = static_cast<size_t>(planSlot(bytes));
  return slot < fusionPlans_.size() ? fusionPlans_[slot] : nullptr;
}

}  // namespace strata::core
