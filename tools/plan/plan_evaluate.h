// What strata-plan computes for each message size, before anything is printed: the plan an
// allreduce would run (the planner's choice, or a plan file's rule), its predicted stages, the
// plans that tie with it, the reference plans it is measured against (flat ring, two-level,
// BlueConnect, passthrough) and the baseline's time. plan_report.h prints it as text or JSON.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "common/status.h"
#include "decompose/cost_model.h"
#include "decompose/plan.h"
#include "decompose/plan_file.h"
#include "plan_baseline.h"
#include "topology/hierarchy.h"

namespace strata::tools {

// One reference plan, found among candidatePlans by name.
struct Reference {
  std::string key;     // "flat-ring", "two-level", "blueconnect", "passthrough"
  bool found = false;  // a 1-level hierarchy has no two-level plan
  plan::Plan plan;     // for a 2-level hierarchy, "two-level" is the planner's "blueconnect"
  plan::Prediction prediction;
};

struct SizeReport {
  size_t bytes = 0;
  plan::Plan plan;
  plan::Prediction prediction;
  const plan::PlanRule* rule = nullptr;  // the plan file's rule, when plans come from one
  // Other candidates that cost exactly as much as the choice, which won as the earlier
  // candidate (planner only).
  std::vector<std::string> ties;
  std::vector<Reference> references;
  BaselinePoint baseline;  // the --baseline's time here (us 0 without one)
  // NCCL's choice is predicted faster than strata's plan (planner only): strata runs NCCL's flat
  // algorithm instead, and `plan`/`prediction` are the plan it would otherwise have run.
  bool fallback = false;
  double chosenUs() const { return fallback ? baseline.us : prediction.totalUs; }
};

// Where the plans come from: the planner (rules empty) or resolved plan-file rules.
struct PlanSource {
  std::vector<plan::PlanRule> rules;
  plan::BlockRules blocks;  // a plan file's pinned reduce-scatter and all-gather forms
  std::string name;         // "the planner (cost model)", "plan file x.yaml"
  plan::CostParams params;
};

// The plan and predictions for each size. Fails only when a plan file covers no rule for a size
// (resolvePlanFile makes sure its rules cover every size, so this is an internal error).
StatusOr<std::vector<SizeReport>> evaluate(const topo::Hierarchy& h,
                                           const std::vector<size_t>& sizes,
                                           const PlanSource& plans, const Baseline& baseline);

// Two predicted costs equal up to rounding: a tie, not a win.
bool sameCost(double a, double b);

}  // namespace strata::tools
