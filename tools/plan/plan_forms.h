// What `strata-plan show --collective broadcast|reduce|reducescatter|allgather` reports: for each
// message size the form that runs (broadcast and reduce: decompose/rooted_cost.h, flat, tree or
// sharded; reduce-scatter and all-gather: decompose/blocks_cost.h, flat or hierarchical, or the
// form a plan file pins), its predicted stages, and the other forms' predicted times; as text or
// JSON.
#pragma once

#include <cstddef>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/collective.h"
#include "decompose/cost_model.h"
#include "plan_report.h"
#include "plan_source.h"

namespace strata::tools {

struct FormOption {
  std::string key;   // "flat", "tree", "sharded", "hierarchical": the JSON index
  std::string name;  // the form's own name: "scatter-allgather", "flat", ...
  plan::Prediction prediction;
};

struct FormReport {
  size_t bytes = 0;
  FormOption chosen;
  bool pinned = false;             // a plan file's rule chose it, not the cost model
  std::string model;               // the key of the cost model's choice (differs when pinned)
  std::vector<FormOption> others;  // the forms not chosen, in the planner's order
  // The keys of the forms that cost exactly as much as the chosen one (which, unless pinned, won
  // as the earlier form).
  std::vector<std::string> ties;
};

// The form and the predictions of every form for each size. For a reduce-scatter or all-gather
// a rule of plans.blocks that covers the size chooses (as the communicator does), else the cost
// model, as for broadcast and reduce; `bytes` is the whole vector (every rank's block together
// for the block collectives, as nccl-tests counts them).
std::vector<FormReport> evaluateForms(const topo::Hierarchy& h, Collective coll,
                                      const std::vector<size_t>& sizes, const PlanSource& plans);

// `show --collective`: the levels, then per size the chosen form, its stages and the others.
std::string formatFormsShow(const Target& t, Collective coll, const PlanSource& plans,
                            const std::vector<FormReport>& reports);
// JSON: {source, hierarchy, ranks, levels, notes, plan_source, cost_params, collective,
// sizes: [{bytes, form: {key, name, description}, pinned, model_choice, stages, total_us, ties,
// compared: {KEY: {name, description, total_us}}}]}, KEY being flat, tree or sharded (broadcast,
// reduce), or flat or hierarchical (reducescatter, allgather); a form the layout cannot run has
// total_us null.
nlohmann::json formsShowJson(const Target& t, Collective coll, const PlanSource& plans,
                             const std::vector<FormReport>& reports);

}  // namespace strata::tools
