// What strata-plan reports, as text or JSON: for each message size the plan an allreduce would
// run (the planner's choice or a plan file's rule), its predicted stages, and the reference plans
// it is measured against (flat ring, two-level, BlueConnect, passthrough), as plan_evaluate.h
// computes them; and a plan file's rules (`validate`).
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "decompose/cost_model.h"
#include "decompose/plan.h"
#include "decompose/plan_file.h"
#include "plan_baseline.h"
#include "plan_evaluate.h"
#include "plan_source.h"

namespace strata::tools {

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
