// What `strata-plan show --collective broadcast|reduce` reports: for each message size the form
// the planner chooses (decompose/rooted_cost.h: flat, tree or sharded), its predicted stages,
// and the other forms' predicted times; as text or JSON.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/collective.h"
#include "decompose/cost_model.h"
#include "decompose/rooted.h"
#include "plan_report.h"
#include "plan_source.h"

namespace strata::tools {

struct RootedOption {
  plan::RootedForm form = plan::RootedForm::kFlat;
  plan::Prediction prediction;
};

struct RootedReport {
  size_t bytes = 0;
  RootedOption chosen;
  std::vector<RootedOption> others;  // the forms not chosen, in the planner's order
  // Forms that cost exactly as much as the choice, which won as the earlier form.
  std::vector<plan::RootedForm> ties;
};

// The choice and the predictions of every form for each size; `coll` is kBroadcast or kReduce.
std::vector<RootedReport> evaluateRooted(const topo::Hierarchy& h, Collective coll,
                                         const std::vector<size_t>& sizes,
                                         const plan::CostParams& params);

// `show --collective`: the levels, then per size the chosen form, its stages and the others.
std::string formatRootedShow(const Target& t, Collective coll, const PlanSource& plans,
                             const std::vector<RootedReport>& reports);
// JSON: {source, hierarchy, ranks, levels, notes, plan_source, cost_params, collective,
// sizes: [{bytes, form: {key, name, description}, stages, total_us, ties, compared: {KEY:
// {name, description, total_us}}}]}, KEY being flat, tree or sharded.
nlohmann::json rootedShowJson(const Target& t, Collective coll, const PlanSource& plans,
                              const std::vector<RootedReport>& reports);

}  // namespace strata::tools
