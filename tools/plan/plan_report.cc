#include "plan_report.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <sstream>
#include <utility>

#include "decompose/planner.h"
#include "plan_args.h"
#include "topo_levels.h"
#include "topology/topo_json.h"

namespace strata::tools {

// Pieces every `show` format shares (plan_report.h).

// Rows padded to each column's widest cell; columns in `left` are left-aligned, the others (the
// numbers) right-aligned. Every line starts with `indent`.
std::string formatTable(const Table& rows, const std::vector<bool>& left,
                        const std::string& indent) {
  std::vector<size_t> width;
  for (const auto& row : rows) {
    if (width.size() < row.size()) width.resize(row.size(), 0);
    for (size_t c = 0; c < row.size(); ++c) width[c] = std::max(width[c], row[c].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line = indent;
    for (size_t c = 0; c < row.size(); ++c) {
      const std::string pad(width[c] - row[c].size(), ' ');
      const bool l = c < left.size() && left[c];
      line += (c ? "  " : "") + (l ? row[c] + pad : pad + row[c]);
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

std::string ratio(double value) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2fx", value);
  return buf;
}

std::string levelsText(const Target& t) {
  std::string out = formatLevels(LevelsReport{t.hierarchy, {}, t.source});
  for (const std::string& n : t.notes) out += "  note: " + n + "\n";
  return out;
}

std::string paramsText(const PlanSource& plans) {
  std::ostringstream out;
  out << "plans: " << plans.name << "; predictions: alpha-beta cost model, local reduction at "
      << plans.params.reduceGBps << " GB/s";
  if (plans.params.compress != WireType::kNone) {
    out << ", float32 sums compressed to " << wireTypeName(plans.params.compress)
        << " between hosts";
  }
  out << "\n";
  return out.str();
}

nlohmann::json predictionJson(const plan::Prediction& pred) {
  nlohmann::json stages = nlohmann::json::array();
  for (const plan::StageCost& s : pred.stages) {
    stages.push_back({{"label", s.label},
                      {"algorithm", s.algorithm},
                      {"group_size", s.groupSize},
                      {"bytes_in", s.bytes},
                      {"bytes_moved", s.bytesMoved},
                      {"wire", s.wire.empty() ? nlohmann::json() : nlohmann::json(s.wire)},
                      {"us", s.us}});
  }
  return nlohmann::json{{"stages", stages},
                        {"total_us", pred.totalUs},
                        {"serial_us", pred.serialUs},
                        {"pieces", pred.pieces},
                        {"piece_bytes", pred.pieceBytes}};
}

nlohmann::json headerJson(const Target& t, const PlanSource& plans) {
  nlohmann::json j{{"source", t.source},
                   {"hierarchy", t.hierarchy.describe()},
                   {"ranks", t.hierarchy.numRanks()},
                   {"levels", topo::levelsToJson(t.hierarchy)},
                   {"notes", t.notes},
                   {"plan_source", plans.name},
                   {"cost_params", {{"reduce_GBps", plans.params.reduceGBps}}}};
  return j;
}

namespace {

// "64 KiB" for exact binary multiples, else the byte count, so a table never rounds a size.
std::string sizeLabel(size_t bytes) {
  const std::string human = formatBytes(static_cast<double>(bytes));
  return human.find('.') == std::string::npos ? human : std::to_string(bytes) + " B";
}

std::string percent(double fraction) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.1f%%", fraction * 100);
  return buf;
}

const Reference* findReference(const SizeReport& r, const std::string& key) {
  for (const Reference& ref : r.references) {
    if (ref.key == key) return &ref;
  }
  return nullptr;
}

// A plan rule's or a form rule's (plan::PlanRule, plan::BlockRule) size range, "[64KiB, inf)".
template <typename Rule>
std::string ruleRange(const Rule& rule) {
  return "[" + plan::detail::sizeText(rule.minBytes) + ", " +
         plan::detail::sizeText(rule.maxBytes) + ")";
}

// {min_bytes, max_bytes (null: no upper end), line}
template <typename Rule>
nlohmann::json ruleRangeJson(const Rule& rule) {
  return {
      {"min_bytes", rule.minBytes},
      {"max_bytes", rule.maxBytes == SIZE_MAX ? nlohmann::json() : nlohmann::json(rule.maxBytes)},
      {"line", rule.line}};
}

// "passthrough", "flat-ring: allreduce@node+network (ring)", or for a plan file's stages list
// (named "file") just the stages.
std::string planText(const topo::Hierarchy& h, const plan::Plan& p) {
  const std::string description = plan::describePlan(h, p);
  if (p.name == "file" || p.name == description) return description;
  return p.name + ": " + description;
}

nlohmann::json planJson(const topo::Hierarchy& h, const plan::Plan& p) {
  nlohmann::json j{{"name", p.name}, {"description", plan::describePlan(h, p)}};
  if (!p.note.empty()) j["note"] = p.note;
  return j;
}

// JSON keys are snake_case: "flat-ring" -> "flat_ring".
std::string jsonKey(std::string key) {
  std::replace(key.begin(), key.end(), '-', '_');
  return key;
}

// "baseline: ..." and its notes, or nothing without a baseline.
std::string baselineText(const Baseline& b) {
  if (b.kind.empty()) return "";
  std::string out = "baseline " + b.kind + ": " + b.description + "\n";
  for (const std::string& n : b.notes) out += "  note: " + n + "\n";
  return out;
}

nlohmann::json baselineJson(const Baseline& b) {
  if (b.kind.empty()) return nullptr;
  return {{"kind", b.kind}, {"description", b.description}, {"notes", b.notes}};
}

// A size's baseline, the fallback flag and what is chosen: strata's plan, or NCCL's flat
// algorithm when it falls back.
void addBaselineJson(const Baseline& b, const SizeReport& r, nlohmann::json* j) {
  (*j)["baseline"] = b.kind.empty()
                         ? nlohmann::json()
                         : nlohmann::json{{"what", r.baseline.what}, {"us", r.baseline.us}};
  (*j)["fallback"] = r.fallback;
  (*j)["chosen_us"] = r.chosenUs();
}

}  // namespace

std::string formatShow(const Target& t, const PlanSource& plans, const Baseline& baseline,
                       const std::vector<SizeReport>& reports) {
  const topo::Hierarchy& h = t.hierarchy;
  std::string out = levelsText(t) + paramsText(plans) + baselineText(baseline);
  for (const SizeReport& r : reports) {
    out += "\n=== " + std::to_string(r.bytes) + " bytes (" +
           formatBytes(static_cast<double>(r.bytes)) + ") ===\n";
    if (r.fallback) {
      out += "plan flat: NCCL's " + r.baseline.what + " over every rank, " +
             formatTime(r.baseline.us) + "\n  note: the planner's best plan is predicted " +
             ratio(r.prediction.totalUs / r.baseline.us) +
             " NCCL's time; strata falls back to NCCL's flat algorithm. That plan:\n  ";
    } else if (!baseline.kind.empty() && r.baseline.us < r.prediction.totalUs &&
               !sameCost(r.baseline.us, r.prediction.totalUs)) {
      out += "note: this plan is predicted " + ratio(r.prediction.totalUs / r.baseline.us) +
             " the " + baseline.kind + " baseline's time (" + r.baseline.what + ", " +
             formatTime(r.baseline.us) + ")\n";
    }
    out += "plan " + planText(h, r.plan);
    if (r.rule != nullptr) {
      out += "  [" + plans.name + (r.rule->line > 0 ? ":" + std::to_string(r.rule->line) : "") +
             ", rule " + ruleRange(*r.rule) + "]";
    }
    out += "\n";
    if (!r.plan.note.empty()) out += "  note: " + r.plan.note + "\n";
    Table rows{{"stage", "algorithm", "group", "bytes in", "bytes moved", "time"}};
    for (const plan::StageCost& s : r.prediction.stages) {
      rows.push_back({s.label, s.algorithm + (s.wire.empty() ? "" : " (" + s.wire + ")"),
                      std::to_string(s.groupSize), formatBytes(s.bytes), formatBytes(s.bytesMoved),
                      formatTime(s.us)});
    }
    rows.push_back({"total", "", "", "", "", formatTime(r.prediction.totalUs)});
    out += formatTable(rows, {true, true}, "  ");
    if (r.prediction.pieces > 1) {
      out += "  pipeline: " + std::to_string(r.prediction.pieces) + " pieces of " +
             formatBytes(r.prediction.pieceBytes) +
             (plan::piecesOverlap(r.plan) ? ", overlapped: the stages' times add up to "
                                          : ", one after another: ") +
             formatTime(r.prediction.serialUs) + "\n";
    }
    if (!r.ties.empty()) {
      std::string names;
      for (const std::string& n : r.ties) names += (names.empty() ? "" : ", ") + n;
      out += "  note: " + names + " cost" + (r.ties.size() == 1 ? "s" : "") +
             " exactly as much; the planner keeps the earliest candidate (passthrough, then "
             "flat-ring, then the splits innermost first)\n";
    }
    out += "compared with:\n";
    Table refs;
    for (const Reference& ref : r.references) {
      if (!ref.found) {
        refs.push_back({ref.key, "-", "", "(none on a 1-level hierarchy)"});
        continue;
      }
      const double total = ref.prediction.totalUs;
      refs.push_back({ref.key, formatTime(total),
                      r.chosenUs() > 0 ? ratio(total / r.chosenUs()) + " chosen" : "",
                      plan::describePlan(h, ref.plan)});
    }
    if (!baseline.kind.empty()) {
      refs.push_back({baseline.kind, formatTime(r.baseline.us),
                      r.chosenUs() > 0 ? ratio(r.baseline.us / r.chosenUs()) + " chosen" : "",
                      r.baseline.what});
    }
    out += formatTable(refs, {true, false, false, true}, "  ");
  }
  return out;
}

nlohmann::json showJson(const Target& t, const PlanSource& plans, const Baseline& baseline,
                        const std::vector<SizeReport>& reports) {
  const topo::Hierarchy& h = t.hierarchy;
  nlohmann::json j = headerJson(t, plans);
  j["baseline"] = baselineJson(baseline);
  nlohmann::json sizes = nlohmann::json::array();
  for (const SizeReport& r : reports) {
    nlohmann::json s{{"bytes", r.bytes}, {"plan", planJson(h, r.plan)}};
    if (r.rule != nullptr) s["rule"] = ruleRangeJson(*r.rule);
    s.update(predictionJson(r.prediction));
    s["ties"] = r.ties;
    nlohmann::json compared = nlohmann::json::object();
    for (const Reference& ref : r.references) {
      if (!ref.found) {
        compared[jsonKey(ref.key)] = nullptr;
        continue;
      }
      nlohmann::json c = planJson(h, ref.plan);
      c["total_us"] = ref.prediction.totalUs;
      c["serial_us"] = ref.prediction.serialUs;
      c["pieces"] = ref.prediction.pieces;
      compared[jsonKey(ref.key)] = c;
    }
    s["compared"] = compared;
    addBaselineJson(baseline, r, &s);
    sizes.push_back(std::move(s));
  }
  j["sizes"] = sizes;
  return j;
}

std::string formatSimulate(const Target& t, const PlanSource& plans, const Baseline& baseline,
                           const std::vector<SizeReport>& reports) {
  const topo::Hierarchy& h = t.hierarchy;
  std::string out = levelsText(t) + paramsText(plans) + baselineText(baseline);
  if (reports.empty()) return out;
  // The reference plans are the same at every size; say once what they do.
  for (const Reference& ref : reports.front().references) {
    if (!ref.found) continue;
    out += "  " + ref.key + ": " +
           (ref.plan.passthrough ? "one MPI_Allreduce over every rank"
                                 : plan::describePlan(h, ref.plan)) +
           "\n";
  }
  // The speedup is over the baseline; without one (--baseline none), over the flat ring.
  const std::string over = baseline.kind.empty() ? "flat-ring" : baseline.kind;
  const bool ownColumn = !baseline.kind.empty() && baseline.kind != "flat-ring";
  Table rows{{"size"}};
  if (ownColumn) rows[0].push_back(baseline.kind);
  if (baseline.kind == "nccl") rows[0].push_back("nccl algo");
  for (const Reference& ref : reports.front().references) rows[0].push_back(ref.key);
  for (const char* c : {"strata", "chosen", "plan", "speedup", "saved"}) rows[0].push_back(c);
  bool anyFallback = false;
  for (const SizeReport& r : reports) {
    std::vector<std::string> row{sizeLabel(r.bytes)};
    if (ownColumn) row.push_back(formatTime(r.baseline.us));
    if (baseline.kind == "nccl") row.push_back(r.baseline.what);
    for (const Reference& ref : r.references) {
      row.push_back(ref.found ? formatTime(ref.prediction.totalUs) : "-");
    }
    row.push_back(formatTime(r.prediction.totalUs));
    row.push_back(formatTime(r.chosenUs()));
    row.push_back(r.fallback ? "flat (nccl)" : r.plan.name);
    anyFallback = anyFallback || r.fallback;
    const Reference* flat = findReference(r, "flat-ring");
    const double base = baseline.kind.empty() ? (flat && flat->found ? flat->prediction.totalUs : 0)
                                              : r.baseline.us;
    const double chosen = r.chosenUs();
    if (base > 0 && chosen > 0) {
      row.push_back(ratio(base / chosen));
      row.push_back(percent(1 - chosen / base));
    } else {
      row.insert(row.end(), {"-", "-"});
    }
    rows.push_back(std::move(row));
  }
  std::vector<bool> left(rows[0].size(), false);
  left[rows[0].size() - 3] = true;              // the plan's name
  if (baseline.kind == "nccl") left[2] = true;  // NCCL's algorithm/protocol
  out +=
      "\n" + formatTable(rows, left, "") + "strata = the planner's best plan; chosen = what runs";
  if (anyFallback) {
    out +=
        " (flat (nccl): strata's plan is predicted slower than NCCL's choice, so it falls "
        "back to NCCL's flat algorithm)";
  }
  out += "\nspeedup = " + over + " / chosen; saved = 1 - chosen / " + over +
         " (the share of the baseline's time the chosen plan saves)\n";
  return out;
}

nlohmann::json simulateJson(const Target& t, const PlanSource& plans, const Baseline& baseline,
                            const std::vector<SizeReport>& reports) {
  const topo::Hierarchy& h = t.hierarchy;
  nlohmann::json j = headerJson(t, plans);
  j["baseline"] = baselineJson(baseline);
  nlohmann::json refs = nlohmann::json::object();
  if (!reports.empty()) {
    for (const Reference& ref : reports.front().references) {
      refs[jsonKey(ref.key)] = ref.found ? planJson(h, ref.plan) : nlohmann::json();
    }
  }
  j["reference_plans"] = refs;
  nlohmann::json rows = nlohmann::json::array();
  for (const SizeReport& r : reports) {
    nlohmann::json row{{"bytes", r.bytes}};
    for (const Reference& ref : r.references) {
      row[jsonKey(ref.key) + "_us"] =
          ref.found ? nlohmann::json(ref.prediction.totalUs) : nlohmann::json();
    }
    nlohmann::json strata = planJson(h, r.plan);
    strata["us"] = r.prediction.totalUs;
    row["strata_plan"] = strata;
    nlohmann::json chosen =
        r.fallback
            ? nlohmann::json{{"name", "flat (nccl)"},
                             {"description", "NCCL's " + r.baseline.what + " over every rank"}}
            : planJson(h, r.plan);
    chosen["us"] = r.chosenUs();
    row["chosen"] = chosen;
    addBaselineJson(baseline, r, &row);
    const Reference* flat = findReference(r, "flat-ring");
    const double us = r.chosenUs();
    const bool ok = flat != nullptr && flat->found && us > 0;
    row["speedup_vs_flat_ring"] =
        ok ? nlohmann::json(flat->prediction.totalUs / us) : nlohmann::json();
    row["time_saved_fraction"] =
        ok ? nlohmann::json(1 - us / flat->prediction.totalUs) : nlohmann::json();
    row["speedup_vs_baseline"] =
        !baseline.kind.empty() && us > 0 ? nlohmann::json(r.baseline.us / us) : nlohmann::json();
    rows.push_back(std::move(row));
  }
  j["rows"] = rows;
  return j;
}

std::string formatRules(const std::vector<plan::PlanRule>& rules, const topo::Hierarchy& h,
                        const std::string& source, const plan::BlockRules& blocks) {
  std::string out = "OK: " + std::to_string(rules.size()) + " rule" +
                    (rules.size() == 1 ? "" : "s") + " (" + source + " against " + h.describe() +
                    ", " + std::to_string(h.numRanks()) + " ranks)\n";
  for (const plan::PlanRule& rule : rules) {
    out += "  " + ruleRange(rule) + (rule.line > 0 ? " line " + std::to_string(rule.line) : "") +
           ": " + planText(h, rule.plan) + "\n";
    // The stage settings describePlan leaves out.
    for (const plan::Stage& s : rule.plan.stages) {
      std::string extra;
      if (!s.fabric.empty()) extra += " fabric " + s.fabric;
      if (s.chunkBytes > 0) extra += " chunk_bytes " + plan::detail::sizeText(s.chunkBytes);
      if (!extra.empty()) out += "      " + plan::stageName(h, s) + ":" + extra + "\n";
    }
  }
  for (const auto& [key, list] : {std::pair<const char*, const std::vector<plan::BlockRule>*>{
                                      "reduce_scatter", &blocks.reduceScatter},
                                  {"all_gather", &blocks.allGather}}) {
    for (const plan::BlockRule& b : *list) {
      out += "  " + std::string(key) + " " + ruleRange(b) +
             (b.line > 0 ? " line " + std::to_string(b.line) : "") + ": " +
             plan::blockFormName(b.form) + "\n";
    }
  }
  return out;
}

nlohmann::json rulesJson(const Target& t, const PlanSource& plans) {
  const topo::Hierarchy& h = t.hierarchy;
  nlohmann::json j = headerJson(t, plans);
  j.erase("cost_params");  // validate predicts nothing
  nlohmann::json rules = nlohmann::json::array();
  for (const plan::PlanRule& rule : plans.rules) {
    nlohmann::json r = ruleRangeJson(rule);
    r["plan"] = planJson(h, rule.plan);
    nlohmann::json stages = nlohmann::json::array();
    for (const plan::Stage& s : rule.plan.stages) {
      stages.push_back({{"level", plan::stageName(h, s)},
                        {"fabric", s.fabric.empty() ? nlohmann::json() : nlohmann::json(s.fabric)},
                        {"chunk_bytes", s.chunkBytes}});
    }
    r["stages"] = stages;
    rules.push_back(std::move(r));
  }
  j["ok"] = true;
  j["rules"] = rules;
  for (const auto& [key, list] : {std::pair<const char*, const std::vector<plan::BlockRule>*>{
                                      "reduce_scatter", &plans.blocks.reduceScatter},
                                  {"all_gather", &plans.blocks.allGather}}) {
    nlohmann::json forms = nlohmann::json::array();
    for (const plan::BlockRule& b : *list) {
      nlohmann::json f = ruleRangeJson(b);
      f["form"] = plan::blockFormName(b.form);
      forms.push_back(std::move(f));
    }
    j[key] = forms;
  }
  return j;
}

}  // namespace strata::tools
