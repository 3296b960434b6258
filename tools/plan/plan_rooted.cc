#include "plan_rooted.h"

#include <utility>

#include "decompose/rooted_cost.h"
#include "plan_args.h"

namespace strata::tools {
namespace {

using plan::RootedForm;

// The planner's order, which is also how ties are broken.
constexpr RootedForm kForms[] = {RootedForm::kFlat, RootedForm::kTree, RootedForm::kSharded};

// "flat", "tree", "sharded": the same for both collectives, so JSON readers can index by it.
const char* formKey(RootedForm f) {
  return f == RootedForm::kFlat ? "flat" : f == RootedForm::kTree ? "tree" : "sharded";
}

// "broadcast@network, broadcast@node": the stages in the order they run.
std::string describeStages(const plan::Prediction& p) {
  std::string out;
  for (const plan::StageCost& s : p.stages) out += (out.empty() ? "" : ", ") + s.label;
  return out;
}

// What a form does, for the header.
std::string formSummary(Collective coll, RootedForm f) {
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

bool hasHop(const plan::Prediction& p) {
  for (const plan::StageCost& s : p.stages) {
    if (s.label.rfind("send@", 0) == 0) return true;
  }
  return false;
}

nlohmann::json formJson(Collective coll, const RootedOption& o) {
  return nlohmann::json{{"key", formKey(o.form)},
                        {"name", plan::rootedFormName(coll, o.form)},
                        {"description", describeStages(o.prediction)}};
}

}  // namespace

std::vector<RootedReport> evaluateRooted(const topo::Hierarchy& h, Collective coll,
                                         const std::vector<size_t>& sizes,
                                         const plan::CostParams& params) {
  std::vector<RootedReport> out;
  for (size_t bytes : sizes) {
    const double n = static_cast<double>(bytes);
    RootedReport r;
    r.bytes = bytes;
    plan::RootedChoice choice = plan::chooseRooted(h, coll, n, params);
    r.chosen = RootedOption{choice.form, std::move(choice.prediction)};
    for (RootedForm f : kForms) {
      if (f == r.chosen.form) continue;
      RootedOption o{f, plan::predictRooted(h, coll, f, n, params)};
      if (sameCost(o.prediction.totalUs, r.chosen.prediction.totalUs)) r.ties.push_back(f);
      r.others.push_back(std::move(o));
    }
    out.push_back(std::move(r));
  }
  return out;
}

std::string formatRootedShow(const Target& t, Collective coll, const PlanSource& plans,
                             const std::vector<RootedReport>& reports) {
  std::string out = levelsText(t) + paramsText(plans);
  out += std::string("collective: ") + collectiveName(coll) + "; its forms:\n";
  for (RootedForm f : kForms) {
    out += "  " + std::string(plan::rootedFormName(coll, f)) + ": " + formSummary(coll, f) + "\n";
  }
  for (const RootedReport& r : reports) {
    const plan::Prediction& chosen = r.chosen.prediction;
    out += "\n=== " + std::to_string(r.bytes) + " bytes (" +
           formatBytes(static_cast<double>(r.bytes)) + ") ===\n";
    out += "form " + std::string(plan::rootedFormName(coll, r.chosen.form)) + ": " +
           describeStages(chosen) + "\n";
    Table rows{{"stage", "algorithm", "group", "bytes in", "bytes moved", "time"}};
    for (const plan::StageCost& s : chosen.stages) {
      rows.push_back({s.label, s.algorithm, std::to_string(s.groupSize), formatBytes(s.bytes),
                      formatBytes(s.bytesMoved), formatTime(s.us)});
    }
    rows.push_back({"total", "", "", "", "", formatTime(chosen.totalUs)});
    out += formatTable(rows, {true, true}, "  ");
    if (!r.ties.empty()) {
      std::string names;
      for (RootedForm f : r.ties) {
        names += (names.empty() ? "" : ", ") + std::string(plan::rootedFormName(coll, f));
      }
      out += "  note: " + names + " cost" + (r.ties.size() == 1 ? "s" : "") +
             " exactly as much; the planner keeps the earliest form (flat, then tree, then "
             "sharded)\n";
    }
    if (hasHop(chosen)) {
      out +=
          "  note: send@all is the hop between a root past some level's width and the tree's "
          "effective root; roots within the widths skip it\n";
    }
    out += "compared with:\n";
    Table others;
    for (const RootedOption& o : r.others) {
      const double total = o.prediction.totalUs;
      others.push_back({plan::rootedFormName(coll, o.form), formatTime(total),
                        chosen.totalUs > 0 ? ratio(total / chosen.totalUs) + " chosen" : "",
                        describeStages(o.prediction)});
    }
    out += formatTable(others, {true, false, false, true}, "  ");
  }
  return out;
}

nlohmann::json rootedShowJson(const Target& t, Collective coll, const PlanSource& plans,
                              const std::vector<RootedReport>& reports) {
  nlohmann::json j = headerJson(t, plans);
  j["collective"] = collectiveName(coll);
  nlohmann::json sizes = nlohmann::json::array();
  for (const RootedReport& r : reports) {
    nlohmann::json s{{"bytes", r.bytes}, {"form", formJson(coll, r.chosen)}};
    s.update(predictionJson(r.chosen.prediction));
    nlohmann::json ties = nlohmann::json::array();
    for (RootedForm f : r.ties) ties.push_back(formKey(f));
    s["ties"] = ties;
    nlohmann::json compared = nlohmann::json::object();
    for (const RootedOption& o : r.others) {
      nlohmann::json c = formJson(coll, o);
      c.erase("key");
      c["total_us"] = o.prediction.totalUs;
      compared[formKey(o.form)] = c;
    }
    s["compared"] = compared;
    sizes.push_back(std::move(s));
  }
  j["sizes"] = sizes;
  return j;
}

}  // namespace strata::tools
