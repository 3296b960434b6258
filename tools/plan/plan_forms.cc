#include "plan_forms.h"

#include <cmath>
#include <functional>
#include <utility>

#include "decompose/blocks_cost.h"
#include "decompose/planner.h"
#include "decompose/rooted_cost.h"
#include "plan_args.h"

namespace strata::tools {
namespace {

using plan::BlockForm;
using plan::RootedForm;

// One form of a collective: its names, what it does, and its cost.
struct FormDef {
  std::string key;
  std::string name;
  std::string summary;
  std::function<plan::Prediction(double bytes)> predict;
};

// A collective's forms in the planner's order (which is also how ties are broken), and the
// cost model's choice among them.
struct FormSet {
  std::vector<FormDef> forms;
  std::function<std::string(double bytes)> modelChoice;  // the chosen form's key
  std::string order;                                     // "flat, then tree, then sharded"
};

// "flat", "tree", "sharded": the same for both rooted collectives, so JSON readers can index by
// it.
const char* rootedKey(RootedForm f) {
  return f == RootedForm::kFlat ? "flat" : f == RootedForm::kTree ? "tree" : "sharded";
}

std::string rootedSummary(Collective coll, RootedForm f) {
  const bool bcast = coll == Collective::kBroadcast;
  switch (f) {
    case RootedForm::kFlat:
      return bcast ? "one broadcast over every rank on the flat fabric (MPI_Bcast)"
                   : "one reduce over every rank on the flat fabric (MPI_Reduce)";
    case RootedForm::kTree:
      return bcast ? "the whole message broadcast level by level, outermost first"
                   : "the whole message reduced level by level, innermost first";
    case RootedForm::kSharded:
      return bcast ? "scatters innermost first, then all-gathers outermost first"
                   : "reduce-scatters innermost first, then gathers outermost first";
  }
  return "";
}

std::string blocksSummary(Collective coll, BlockForm f) {
  const bool rs = coll == Collective::kReduceScatter;
  if (f == BlockForm::kFlat) {
    return rs ? "one reduce-scatter over every rank on the flat fabric"
              : "one all-gather over every rank on the flat fabric";
  }
  return rs ? "a reduce-scatter per level, innermost first, each over what the levels below left"
            : "an all-gather per level, outermost first (a regular layout of 2 levels or more)";
}

FormSet formSet(const topo::Hierarchy& h, Collective coll, const plan::CostParams& params) {
  FormSet s;
  if (coll == Collective::kBroadcast || coll == Collective::kReduce) {
    for (RootedForm f : {RootedForm::kFlat, RootedForm::kTree, RootedForm::kSharded}) {
      s.forms.push_back({rootedKey(f), plan::rootedFormName(coll, f), rootedSummary(coll, f),
                         [&h, coll, f, &params](double n) {
                           return plan::predictRooted(h, coll, f, n, params);
                         }});
    }
    s.modelChoice = [&h, coll, &params](double n) {
      return std::string(rootedKey(plan::chooseRooted(h, coll, n, params).form));
    };
    s.order = "flat, then tree, then sharded";
  } else {
    for (BlockForm f : {BlockForm::kFlat, BlockForm::kHierarchical}) {
      s.forms.push_back({plan::blockFormName(f), plan::blockFormName(f), blocksSummary(coll, f),
                         [&h, coll, f, &params](double n) {
                           return plan::predictBlocks(h, coll, f, n, params);
                         }});
    }
    s.modelChoice = [&h, coll, &params](double n) {
      return std::string(plan::blockFormName(plan::chooseBlocks(h, coll, n, params)));
    };
    s.order = "flat, then hierarchical";
  }
  return s;
}

// "broadcast@network, broadcast@node": the stages in the order they run.
std::string describeStages(const plan::Prediction& p) {
  if (!std::isfinite(p.totalUs)) return "not possible on this layout";
  std::string out;
  for (const plan::StageCost& s : p.stages) out += (out.empty() ? "" : ", ") + s.label;
  return out;
}

bool hasHop(const plan::Prediction& p) {
  for (const plan::StageCost& s : p.stages) {
    if (s.label.rfind("send@", 0) == 0) return true;
  }
  return false;
}

const FormOption* find(const FormReport& r, const std::string& key) {
  if (r.chosen.key == key) return &r.chosen;
  for (const FormOption& o : r.others) {
    if (o.key == key) return &o;
  }
  return nullptr;
}

nlohmann::json totalJson(double us) { return std::isfinite(us) ? nlohmann::json(us) : nullptr; }

nlohmann::json formJson(const FormOption& o) {
  return nlohmann::json{
      {"key", o.key}, {"name", o.name}, {"description", describeStages(o.prediction)}};
}

}  // namespace

std::vector<FormReport> evaluateForms(const topo::Hierarchy& h, Collective coll,
                                      const std::vector<size_t>& sizes, const PlanSource& plans) {
  const FormSet set = formSet(h, coll, plans.params);
  std::vector<FormReport> out;
  for (size_t bytes : sizes) {
    const double n = static_cast<double>(bytes);
    FormReport r;
    r.bytes = bytes;
    r.model = set.modelChoice(n);
    std::string chosen = r.model;
    if (const plan::BlockRule* rule = plan::blockRuleFor(plans.blocks.of(coll), bytes)) {
      chosen = plan::blockFormName(rule->form);
      r.pinned = true;
    }
    for (const FormDef& f : set.forms) {
      FormOption o{f.key, f.name, f.predict(n)};
      if (f.key == chosen) {
        r.chosen = std::move(o);
      } else {
        r.others.push_back(std::move(o));
      }
    }
    for (const FormOption& o : r.others) {
      if (std::isfinite(o.prediction.totalUs) &&
          sameCost(o.prediction.totalUs, r.chosen.prediction.totalUs))
        r.ties.push_back(o.key);
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::string formatFormsShow(const Target& t, Collective coll, const PlanSource& plans,
                            const std::vector<FormReport>& reports) {
  const FormSet set = formSet(t.hierarchy, coll, plans.params);
  std::string out = levelsText(t) + paramsText(plans);
  out += std::string("collective: ") + collectiveName(coll) + "; its forms:\n";
  for (const FormDef& f : set.forms) out += "  " + f.name + ": " + f.summary + "\n";
  for (const FormReport& r : reports) {
    const plan::Prediction& chosen = r.chosen.prediction;
    out += "\n=== " + std::to_string(r.bytes) + " bytes (" +
           formatBytes(static_cast<double>(r.bytes)) + ") ===\n";
    out += "form " + r.chosen.name + (r.pinned ? " (pinned by " + plans.name + ")" : "") + ": " +
           describeStages(chosen) + "\n";
    Table rows{{"stage", "algorithm", "group", "bytes in", "bytes moved", "time"}};
    for (const plan::StageCost& s : chosen.stages) {
      rows.push_back({s.label, s.algorithm, std::to_string(s.groupSize), formatBytes(s.bytes),
                      formatBytes(s.bytesMoved), formatTime(s.us)});
    }
    rows.push_back({"total", "", "", "", "",
                    std::isfinite(chosen.totalUs) ? formatTime(chosen.totalUs) : "-"});
    out += formatTable(rows, {true, true}, "  ");
    if (!r.ties.empty()) {
      std::string names;
      for (const std::string& key : r.ties)
        names += (names.empty() ? "" : ", ") + find(r, key)->name;
      out += "  note: " + names + " cost" + (r.ties.size() == 1 ? "s" : "") + " exactly as much" +
             (r.pinned ? "\n" : "; the planner keeps the earlier form (" + set.order + ")\n");
    }
    if (hasHop(chosen)) {
      out +=
          "  note: send@all is the hop between a root past some level's width and the tree's "
          "effective root; roots within the widths skip it\n";
    }
    out += "compared with:\n";
    Table others;
    for (const FormOption& o : r.others) {
      const double total = o.prediction.totalUs;
      const bool possible = std::isfinite(total);
      others.push_back(
          {o.name, possible ? formatTime(total) : "-",
           possible && chosen.totalUs > 0 ? ratio(total / chosen.totalUs) + " chosen" : "",
           describeStages(o.prediction)});
      if (o.key == r.model) others.back()[3] += "  (the cost model's choice)";
    }
    out += formatTable(others, {true, false, false, true}, "  ");
  }
  return out;
}

nlohmann::json formsShowJson(const Target& t, Collective coll, const PlanSource& plans,
                             const std::vector<FormReport>& reports) {
  nlohmann::json j = headerJson(t, plans);
  j["collective"] = collectiveName(coll);
  nlohmann::json sizes = nlohmann::json::array();
  for (const FormReport& r : reports) {
    nlohmann::json s{{"bytes", r.bytes},
                     {"form", formJson(r.chosen)},
                     {"pinned", r.pinned},
                     {"model_choice", r.model}};
    s.update(predictionJson(r.chosen.prediction));
    s["total_us"] = totalJson(r.chosen.prediction.totalUs);
    nlohmann::json ties = nlohmann::json::array();
    for (const std::string& key : r.ties) ties.push_back(key);
    s["ties"] = ties;
    nlohmann::json compared = nlohmann::json::object();
    for (const FormOption& o : r.others) {
      nlohmann::json c = formJson(o);
      c.erase("key");
      c["total_us"] = totalJson(o.prediction.totalUs);
      compared[o.key] = c;
    }
    s["compared"] = compared;
    sizes.push_back(std::move(s));
  }
  j["sizes"] = sizes;
  return j;
}

}  // namespace strata::tools
