#include "core/plan_book.h"

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <map>
#include <string>

#include "common/log.h"
#include "common/units.h"
#include "core/names.h"
#include "decompose/planner.h"

namespace strata::core {

void PlanBook::setRules(std::vector<plan::PlanRule> rules, std::string source,
                        plan::BlockRules blocks) {
  rules_ = std::move(rules);
  blockRules_ = std::move(blocks);
  source_ = std::move(source);
}

void PlanBook::clear() {
  programs_ = ProgramCache();  // programs point to plans
  fusionPlans_.clear();
  plans_.clear();
  forced_.clear();
}

// Builds a plan's exec: its derived hierarchy and stage groups. Collective.
StatusOr<std::unique_ptr<PlanExec>> PlanBook::makeExec(const plan::Plan& chosen, IssuingThread me) {
  const topo::Hierarchy& hierarchy = (*sc_.hierarchy);
  auto exec = std::make_unique<PlanExec>();
  exec->plan = chosen;
  exec->description = plan::describePlan(hierarchy, chosen);
  if (!chosen.passthrough) {
    STRATA_ASSIGN_OR_RETURN(exec->derived, plan::planHierarchy(hierarchy, chosen));
    for (int l = 0; l < exec->derived.numLevels(); ++l) {
      STRATA_ASSIGN_OR_RETURN(LevelGroup * g, groups_.ensure(exec->derived, l, me));
      exec->groups.push_back(g);
    }
    exec->wire = wireOf(chosen, exec->derived);
  }
  return exec;
}

// A stage with a plan file's `wire:` takes it as given; any other takes STRATA_COMPRESS when
// one of its groups spans hosts (the slow links), and stays float32 inside a host.
std::vector<WireType> PlanBook::wireOf(const plan::Plan& p, const topo::Hierarchy& derived) const {
  std::vector<WireType> wire;
  for (int j = 0; j < static_cast<int>(p.stages.size()); ++j) {
    const plan::Stage& s = p.stages[j];
    WireType w = WireType::kNone;
    if (s.wire) {
      w = *s.wire;
    } else if (sc_.settings->compress != WireType::kNone &&
               topo::levelCrossesHosts(derived, j, groups_.hostOf())) {
      w = sc_.settings->compress;
    }
    wire.push_back(w);
  }
  return wire;
}

StatusOr<PlanExec*> PlanBook::forPlan(const plan::Plan& p, IssuingThread me) {
  const std::string key = plan::describePlan((*sc_.hierarchy), p);
  auto it = forced_.find(key);
  if (it != forced_.end()) return it->second.get();
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<PlanExec> exec, makeExec(p, me));
  PlanExec* out = exec.get();
  forced_.emplace(key, std::move(exec));
  return out;
}

namespace {

// The form cached in `forms` for a `coll` of `bytes`: choose(bucket bytes) on the size bucket's
// first call, logged once with its name.
template <typename Form, typename Choose, typename Name>
Form formOf(std::map<std::pair<int, int>, Form>& forms, uint64_t hash, Collective coll,
            size_t bytes, Choose choose, Name name) {
  const int bucket = plan::sizeBucket(bytes);
  const auto key = std::make_pair(static_cast<int>(coll), bucket);
  auto it = forms.find(key);
  if (it != forms.end()) return it->second;
  const Form form = choose(plan::bucketBytes(bucket));
  STRATA_INFO(kSubsysInit | kSubsysPlan, "commHash %s %s of %zu bytes (size bucket %d): %s",
              hashText(hash).c_str(), collectiveName(coll), bytes, bucket, name(form));
  forms.emplace(key, form);
  return form;
}

}  // namespace

plan::RootedForm PlanBook::rootedForm(Collective coll, size_t bytes, IssuingThread) {
  return formOf(
      rootedForms_, sc_.hash, coll, bytes,
      [&](double b) {
        return plan::chooseRooted((*sc_.hierarchy), coll, b, (*sc_.cost)).form;
      },
      [&](plan::RootedForm f) { return plan::rootedFormName(coll, f); });
}

plan::BlockForm PlanBook::blockForm(Collective coll, size_t bytes, IssuingThread) {
  const std::vector<plan::BlockRule>& pinned = blockRules_.of(coll);
  if (!pinned.empty()) {
    // resolvePlanFile checked that the rules cover every size and that the hierarchy admits
    // every form they pin.
    const int index = std::max(0, plan::blockRuleIndexFor(pinned, bytes));
    const auto key = std::make_pair(static_cast<int>(coll), -1 - index);
    auto it = blockForms_.find(key);
    if (it != blockForms_.end()) return it->second;
    const plan::BlockForm form = pinned[index].form;
    STRATA_INFO(kSubsysInit | kSubsysPlan,
                "commHash %s %s of %zu bytes (plan file %s rule at line %d): %s",
                hashText(sc_.hash).c_str(), collectiveName(coll), bytes,
                plan::blockRulesKey(coll), pinned[index].line, plan::blockFormName(form));
    blockForms_.emplace(key, form);
    return form;
  }
  return formOf(
      blockForms_, sc_.hash, coll, bytes,
      [&](double b) { return plan::chooseBlocks((*sc_.hierarchy), coll, b, (*sc_.cost)); },
      [](plan::BlockForm f) { return plan::blockFormName(f); });
}

int PlanBook::slotOf(size_t bytes) const {
  if (rules_.empty()) return plan::sizeBucket(bytes);
  return std::max(0, plan::ruleIndexFor(rules_, bytes));  // resolved rules cover all sizes
}

StatusOr<PlanExec*> PlanBook::forBytes(size_t bytes, IssuingThread me) {
  const int slot = slotOf(bytes);
  auto it = plans_.find(slot);
  if (it != plans_.end()) return it->second.get();
  const plan::Plan chosen =
      rules_.empty()
          ? plan::choosePlan((*sc_.hierarchy), plan::bucketBytes(slot), (*sc_.cost)).plan
          : rules_[slot].plan;
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<PlanExec> exec, makeExec(chosen, me));
  // Once per size bucket (or plan-file rule) and communicator, never per call.
  const size_t piece = plan::planPieceBytes(chosen);
  STRATA_INFO(
      kSubsysInit | kSubsysPlan, "commHash %s allreduce of %zu bytes (%s %d): plan %s: %s%s%s%s%s",
      hashText(sc_.hash).c_str(), bytes, rules_.empty() ? "size bucket" : "plan file rule",
      slot, chosen.name.c_str(), exec->description.c_str(), piece ? "; pipeline pieces of " : "",
      piece ? units::bytesText(piece).c_str() : "", chosen.note.empty() ? "" : "; ",
      chosen.note.c_str());
  PlanExec* out = exec.get();
  plans_.emplace(slot, std::move(exec));
  return out;
}

Status PlanBook::prepareFusionPlans(size_t maxBytes, IssuingThread me) {
  if (!fusionPlans_.empty()) return Status::ok();
  const int last = slotOf(std::max<size_t>(1, maxBytes));
  std::vector<PlanExec*> bySlot(static_cast<size_t>(last) + 1, nullptr);
  for (int slot = 0; slot <= last; ++slot) {
    // A size the slot holds: the bucket's lower bound, or the rule's (bucket 0 and a rule from
    // 0 hold 1 byte too).
    const size_t bytes =
        rules_.empty() ? size_t{1} << slot : std::max<size_t>(1, rules_[slot].minBytes);
    if (slotOf(bytes) != slot) continue;  // a rule with no size of its own
    STRATA_ASSIGN_OR_RETURN(bySlot[slot], forBytes(bytes, me));
  }
  fusionPlans_ = std::move(bySlot);
  return Status::ok();
}

PlanExec* PlanBook::fusionPlanFor(size_t bytes) const {
  const size_t slot = static_cast<size_t>(slotOf(bytes));
  return slot < fusionPlans_.size() ? fusionPlans_[slot] : nullptr;
}

void PlanBook::dump(const std::string& file) const {
  if (file.empty() || sc_.rank != 0) return;
  const topo::Hierarchy& hierarchy = (*sc_.hierarchy);
  std::vector<plan::PlanRule> rules;
  for (int b = 0; b < 63; ++b) {
    const size_t lo = b == 0 ? 0 : size_t{1} << b;
    const size_t hi = b == 62 ? SIZE_MAX : size_t{1} << (b + 1);
    plan::Plan p = rules_.empty()
                       ? plan::choosePlan(hierarchy, plan::bucketBytes(b), (*sc_.cost)).plan
                       : *plan::planFor(rules_, lo);
    if (!rules.empty() &&
        plan::describePlan(hierarchy, rules.back().plan) == plan::describePlan(hierarchy, p) &&
        plan::planPieceBytes(rules.back().plan) == plan::planPieceBytes(p)) {
      rules.back().maxBytes = hi;
    } else {
      plan::PlanRule rule;
      rule.minBytes = lo;
      rule.maxBytes = hi;
      rule.plan = p;
      rules.push_back(rule);
    }
  }
  // The forms of reduce-scatter and all-gather: the file's form rules, or the planner's choice
  // per size bucket, merged into ranges.
  plan::BlockRules blocks = blockRules_;
  for (Collective coll : {Collective::kReduceScatter, Collective::kAllGather}) {
    std::vector<plan::BlockRule>& forms =
        coll == Collective::kReduceScatter ? blocks.reduceScatter : blocks.allGather;
    if (!forms.empty()) continue;
    for (int b = 0; b < 63; ++b) {
      const plan::BlockForm form =
          plan::chooseBlocks(hierarchy, coll, plan::bucketBytes(b), (*sc_.cost));
      const size_t hi = b == 62 ? SIZE_MAX : size_t{1} << (b + 1);
      if (!forms.empty() && forms.back().form == form) {
        forms.back().maxBytes = hi;
      } else {
        forms.push_back(plan::BlockRule{b == 0 ? 0 : size_t{1} << b, hi, form, 0});
      }
    }
  }
  FILE* out = std::fopen(file.c_str(), "w");
  if (out == nullptr) {
    STRATA_WARN(kSubsysPlan, "STRATA_PLAN_DUMP_FILE %s: cannot write: %s", file.c_str(),
                std::strerror(errno));
    return;
  }
  const std::string text = plan::formatPlanFile(rules, hierarchy, {}, blocks);
  std::fwrite(text.data(), 1, text.size(), out);
  std::fclose(out);
  STRATA_INFO(kSubsysPlan, "wrote the chosen plans to %s", file.c_str());
}

}  // namespace strata::core
