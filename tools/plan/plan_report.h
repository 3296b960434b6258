// What strata-plan reports: for each message size the plan an allreduce would run (the planner's
// choice or a plan file's rule), its predicted stages, and the reference plans it is measured
// against (flat ring, two-level, BlueConnect, passthrough); as text or JSON.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "decompose/cost_model.h"
#include "decompose/plan.h"
#include "decompose/plan_file.h"
#include "plan_baseline.h"
#include "plan_source.h"

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

// `show`: the levels, then per size the plan, its stages and the references.
std::string formatShow(const Target& t, const PlanSource& plans, const Baseline& baseline,
                       const std::vector<SizeReport>& reports);
nlohmann::json showJson(const Target& t, const PlanSource& plans, const Baseline& baseline,
                        const std::vector<SizeReport>& reports);

// `simulate`: the levels, then one row per size with the baseline's, the references' and the
// chosen totals and the chosen plan's speedup over the baseline.
std::string formatSimulate(const Target& t, const PlanSource& plans, const Baseline& baseline,
                           const std::vector<SizeReport>& reports);
nlohmann::json simulateJson(const Target& t, const PlanSource& plans, const Baseline& baseline,
                            const std::vector<SizeReport>& reports);

// Pieces the report formats share (plan_report.cc, plan_forms.cc).
using Table = std::vector<std::vector<std::string>>;
// Rows padded to each column's widest cell; columns in `left` are left-aligned, the others (the
// numbers) right-aligned. Every line starts with `indent`.
std::string formatTable(const Table& rows, const std::vector<bool>& left,
                        const std::string& indent);
std::string ratio(double value);                              // "1.94x"
bool sameCost(double a, double b);                            // equal up to rounding
std::string levelsText(const Target& t);                      // the hierarchy, its levels and notes
std::string paramsText(const PlanSource& plans);              // "plans: ...; predictions: ..."
nlohmann::json predictionJson(const plan::Prediction& pred);  // {stages, total_us}
nlohmann::json headerJson(const Target& t, const PlanSource& plans);

// `validate`: "OK: N rules", then each rule's range, line and stages.
std::string formatRules(const std::vector<plan::PlanRule>& rules, const topo::Hierarchy& h,
                        const std::string& source, const plan::BlockRules& blocks = {});
// The same as JSON: {source, hierarchy, ranks, levels, notes, plan_source, ok: true, rules:
// [{min_bytes, max_bytes (null: no upper end), line, plan: {name, description}, stages: [{level,
// fabric (null: the level's default), chunk_bytes (0: the default)}]}]}.
nlohmann::json rulesJson(const Target& t, const PlanSource& plans);

}  // namespace strata::tools
