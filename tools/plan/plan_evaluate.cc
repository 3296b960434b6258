// What strata-plan computes per size (plan_evaluate.h): the planner's choice or the plan file's
// rule, its ties, the reference plans in the pieces the planner would give them, the baseline.
#include "plan_evaluate.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "decompose/planner.h"

namespace strata::tools {
namespace {

// Reference keys for `h`, with the candidate name each is found under: on two levels the
// two-level split is also one stage per level, which the planner names "blueconnect".
std::vector<std::pair<std::string, std::string>> referenceNames(const topo::Hierarchy& h) {
  const int k = h.numLevels();
  std::vector<std::pair<std::string, std::string>> refs{
      {"flat-ring", "flat-ring"},
      {"passthrough", "passthrough"},
      {"two-level", k == 2 ? "blueconnect" : "two-level"}};
  if (k >= 3) refs.emplace_back("blueconnect", "blueconnect");
  return refs;
}

}  // namespace

bool sameCost(double a, double b) { return std::fabs(a - b) <= 1e-9 * std::max(1.0, std::fabs(a)); }

StatusOr<std::vector<SizeReport>> evaluate(const topo::Hierarchy& h,
                                           const std::vector<size_t>& sizes,
                                           const PlanSource& plans, const Baseline& baseline) {
  const std::vector<plan::Plan> candidates = plan::candidatePlans(h, plans.params);
  const auto refs = referenceNames(h);
  std::vector<SizeReport> out;
  for (size_t bytes : sizes) {
    const double n = static_cast<double>(bytes);
    SizeReport r;
    r.bytes = bytes;
    if (plans.rules.empty()) {
      plan::Choice choice = plan::choosePlan(h, n, plans.params);
      r.plan = std::move(choice.plan);
      r.prediction = std::move(choice.prediction);
      const std::string chosen = plan::describePlan(h, r.plan);
      for (const plan::Plan& c : candidates) {
        if (plan::describePlan(h, c) == chosen) continue;
        if (sameCost(plan::choosePieces(h, c, n, plans.params).prediction.totalUs,
                     r.prediction.totalUs) &&
            std::find(r.ties.begin(), r.ties.end(), c.name) == r.ties.end()) {
          r.ties.push_back(c.name);
        }
      }
    } else {
      const plan::Plan* p = plan::planFor(plans.rules, bytes);
      if (p == nullptr) {
        return internalError(plans.name + " has no rule for " + std::to_string(bytes) +
                             " bytes although it was resolved");
      }
      for (const plan::PlanRule& rule : plans.rules) {
        if (&rule.plan == p) r.rule = &rule;
      }
      r.plan = *p;
      r.prediction = plan::predict(h, *p, n, plans.params);
    }
    for (const auto& [key, name] : refs) {
      Reference ref;
      ref.key = key;
      for (const plan::Plan& c : candidates) {
        if (c.name != name) continue;
        ref.found = true;
        // In the pieces the planner would give it, as the chosen plan is costed.
        plan::Choice piece = plan::choosePieces(h, c, n, plans.params);
        ref.plan = std::move(piece.plan);
        ref.prediction = std::move(piece.prediction);
        break;
      }
      r.references.push_back(std::move(ref));
    }
    r.baseline = baselineAt(baseline, h, n, plans.params);
    // Where NCCL's own choice beats the planner's best plan, strata runs NCCL's flat algorithm
    // (a plan file's rule is run as written).
    r.fallback = baseline.kind == "nccl" && plans.rules.empty() &&
                 r.baseline.us < r.prediction.totalUs &&
                 !sameCost(r.baseline.us, r.prediction.totalUs);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace strata::tools
