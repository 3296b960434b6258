#include "tune_report.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstring>

#include "tools_iface/tools_inputs.h"

namespace strata::tools {

std::string num(double x) {
  char buf[32];
  const double a = std::fabs(x);
  std::snprintf(buf, sizeof(buf), a >= 100 ? "%.0f" : a >= 10 ? "%.1f" : "%.2f", x);
  return buf;
}

std::string alignTable(const std::vector<std::vector<std::string>>& rows,
                       const std::vector<bool>& right) {
  std::vector<size_t> width;
  for (const auto& row : rows) {
    if (row.size() > width.size()) width.resize(row.size(), 0);
    for (size_t i = 0; i < row.size(); ++i) width[i] = std::max(width[i], row[i].size());
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line = "  ";
    for (size_t i = 0; i < row.size(); ++i) {
      const std::string pad(width[i] - row[i].size(), ' ');
      const bool r = i < right.size() && right[i];
      line += r ? pad + row[i] : row[i] + (i + 1 < row.size() ? pad : "");
      if (i + 1 < row.size()) line += "  ";
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  }
  return out;
}

namespace {

std::string linkText(const topo::LinkModel& link) {
  if (!(link.bandwidthGBps > 0)) return "unknown";
  std::string s = std::string(topo::linkKindName(link.kind)) + " " + num(link.latencyUs) + " us, " +
                  num(link.bandwidthGBps) + " GB/s";
  if (!link.source.empty()) s += " (" + link.source + ")";
  return s;
}

// Both ways within kDisagreeRatio.
bool agrees(double predicted, double measured) {
  if (!(predicted > 0) || !(measured > 0)) return false;
  const double r = measured / predicted;
  return r <= kDisagreeRatio && r >= 1 / kDisagreeRatio;
}

std::string labelOf(const std::map<std::string, std::string>& labels, const PlanTiming& t) {
  auto it = labels.find(t.description);
  return it == labels.end() ? t.plan.name : it->second;
}

}  // namespace

std::string humanBytes(size_t bytes) {
  static const char* kUnits[] = {"GiB", "MiB", "KiB"};
  for (int i = 0; i < 3; ++i) {
    const size_t unit = size_t{1} << (10 * (3 - i));
    if (bytes >= unit && bytes % unit == 0) return std::to_string(bytes / unit) + " " + kUnits[i];
  }
  if (bytes >= 1024) return num(static_cast<double>(bytes) / 1024) + " KiB";
  return std::to_string(bytes) + " B";
}

std::string formatLinks(const topo::Hierarchy& original, const topo::Hierarchy& measured,
                        const std::vector<LevelMeasurement>& m, const PingPongOptions& o) {
  std::vector<std::vector<std::string>> rows = {
      {"level", "ranks", "latency us", "GB/s", humanBytes(o.largeBytes) + " one way us", "before"}};
  for (const LevelMeasurement& lm : m) {
    const topo::Level& level = measured.level(lm.level);
    rows.push_back({std::to_string(lm.level) + " " + level.name,
                    std::to_string(lm.rankA) + "<->" + std::to_string(lm.rankB), num(lm.latencyUs),
                    num(lm.bandwidthGBps), num(lm.largeHalfRttUs),
                    linkText(original.level(lm.level).link)});
  }
  return alignTable(rows, {false, false, true, true, true, false});
}

std::map<std::string, std::string> planLabels(const std::vector<SizeResult>& results) {
  std::map<std::string, std::string> labels;
  std::map<std::string, int> seen;  // name -> plans of that name so far
  for (const SizeResult& r : results) {
    for (const PlanTiming& t : r.plans) {
      if (labels.count(t.description)) continue;
      const int n = ++seen[t.plan.name];
      labels[t.description] = n == 1 ? t.plan.name : t.plan.name + "#" + std::to_string(n);
    }
  }
  return labels;
}

std::string formatPlanLegend(const std::vector<SizeResult>& results,
                             const std::map<std::string, std::string>& labels) {
  std::vector<std::vector<std::string>> rows;
  std::map<std::string, bool> done;
  for (const SizeResult& r : results) {
    for (const PlanTiming& t : r.plans) {
      if (done[t.description]) continue;
      done[t.description] = true;
      rows.push_back({labelOf(labels, t), t.description});
    }
  }
  return alignTable(rows, {});
}

std::string formatComparison(const std::vector<SizeResult>& results,
                             const std::map<std::string, std::string>& labels, int* flagged) {
  std::vector<std::vector<std::string>> rows = {
      {"size", "plan", "predicted us", "measured us", "ratio", "fitted us", "flag"}};
  *flagged = 0;
  for (const SizeResult& r : results) {
    for (size_t i = 0; i < r.plans.size(); ++i) {
      const PlanTiming& t = r.plans[i];
      std::vector<std::string> row = {
          humanBytes(r.bytes), labelOf(labels, t) + (static_cast<int>(i) == r.fastest ? " *" : ""),
          num(t.predictedUs)};
      if (!t.correct) {
        row.insert(row.end(), {"-", "-", "-", "WRONG RESULT (not used)"});
      } else {
        const double ratio = t.medianUs / t.predictedUs;
        std::string flag;
        if (!agrees(t.predictedUs, t.medianUs)) {
          flag = ratio > 1 ? "SLOWER than model" : "FASTER than model";
          ++*flagged;
        }
        if (t.cutShort) {
          flag += std::string(flag.empty() ? "" : "; ") + std::to_string(t.us.size()) +
                  " iteration" + (t.us.size() == 1 ? "" : "s") + " (time budget)";
        }
        if (t.added)
          flag += std::string(flag.empty() ? "" : "; ") + "added: the fitted model's pick";
        row.insert(row.end(),
                   {num(t.medianUs), num(ratio), t.fittedUs > 0 ? num(t.fittedUs) : "-", flag});
      }
      rows.push_back(row);
    }
  }
  return alignTable(rows, {false, false, true, true, true, true, false});
}

int fittedPick(const SizeResult& r) {
  int best = -1;
  for (size_t i = 0; i < r.plans.size(); ++i) {
    const PlanTiming& t = r.plans[i];
    if (t.fittedUs > 0 && (best < 0 || t.fittedUs < r.plans[best].fittedUs)) {
      best = static_cast<int>(i);
    }
  }
  return best;
}

std::string formatChoices(const std::vector<SizeResult>& results,
                          const std::map<std::string, std::string>& labels, int* disagree) {
  std::vector<std::vector<std::string>> rows = {
      {"size", "model picks", "costs", "fitted model picks", "costs", "measured fastest", "note"}};
  *disagree = 0;
  for (const SizeResult& r : results) {
    // What plans[i] costs against the measured fastest.
    auto cost = [&](int i) -> std::string {
      if (i < 0 || r.fastest < 0) return "-";
      if (i == r.fastest) return "fastest";
      const PlanTiming& t = r.plans[i];
      const double best = r.plans[r.fastest].medianUs;
      if (!t.correct || t.us.empty() || !(best > 0)) return "-";
      return "+" + num(100 * (t.medianUs / best - 1)) + "%";
    };
    // plans are sorted by the ping-pong prediction, the added ones last: the first is its pick.
    const int fit = fittedPick(r);
    std::string fastest = "(none correct)", note;
    if (r.fastest >= 0) {
      const PlanTiming& best = r.plans[r.fastest];
      fastest = labelOf(labels, best) + " " + num(best.medianUs) + " us";
      if (fit >= 0 && fit != r.fastest) {
        note = "fitted model disagrees";
        ++*disagree;
      }
    }
    if (r.runoff > 0) {
      note += std::string(note.empty() ? "" : "; ") + "runoff of " + std::to_string(r.runoff);
    }
    rows.push_back({humanBytes(r.bytes), labelOf(labels, r.plans[0]), cost(0),
                    fit >= 0 ? labelOf(labels, r.plans[fit]) : "-", cost(fit), fastest, note});
  }
  return alignTable(rows, {false, false, true, false, true, false, false});
}

namespace {

std::vector<std::vector<std::string>> fitRows(const topo::Hierarchy& measured,
                                              const FitResult& fit) {
  std::vector<std::vector<std::string>> rows = {
      {"level", "ping-pong us", "GB/s", "fitted us", "GB/s"}};
  for (int l = 0; l < measured.numLevels(); ++l) {
    const topo::LinkModel& a = measured.level(l).link;
    const topo::LinkModel& b = fit.fitted.level(l).link;
    rows.push_back({std::to_string(l) + " " + measured.level(l).name, num(a.latencyUs),
                    num(a.bandwidthGBps), num(b.latencyUs), num(b.bandwidthGBps)});
  }
  rows.push_back({"step overhead", "0", "", num(fit.params.stepOverheadUs), ""});
  return rows;
}

std::string errorLine(const FitResult& fit, size_t points) {
  return "relative error of the model on the " + std::to_string(points) + " timed plans: rms " +
         num(100 * fit.rmsBefore) + "%, worst " + num(100 * fit.worstBefore) +
         "% with the ping-pong links; rms " + num(100 * fit.rmsAfter) + "%, worst " +
         num(100 * fit.worstAfter) + "% fitted";
}

}  // namespace

std::string formatFit(const topo::Hierarchy& measured, const FitResult& fit, size_t points) {
  return alignTable(fitRows(measured, fit), {false, true, true, true, true}) + "  " +
         errorLine(fit, points) + "\n";
}

std::string fitComment(const topo::Hierarchy& measured, const FitResult& fit, size_t points) {
  std::string out =
      "# the cost model fitted to these timings (strata-tune; alpha us, bandwidth GB/s, and a\n"
      "# step overhead in us added to every step's alpha); measured: above keeps ping-pong's:\n";
  const std::string table = alignTable(fitRows(measured, fit), {false, true, true, true, true});
  for (size_t at = 0; at < table.size();) {
    const size_t end = table.find('\n', at);
    out += "#" + table.substr(at, end - at) + "\n";
    at = end + 1;
  }
  return out + "# " + errorLine(fit, points) + "\n";
}

std::string formatCheck(const std::vector<SizeResult>& results,
                        const std::map<std::string, std::string>& labels, double* worst,
                        size_t* worstBytes) {
  std::vector<std::vector<std::string>> rows = {
      {"size", "file's plan", "us", "fastest other", "us", "file / fastest", "plans"}};
  *worst = 0;
  *worstBytes = 0;
  for (const SizeResult& r : results) {
    const PlanTiming& file = r.plans[0];
    int best = -1;
    for (size_t i = 1; i < r.plans.size(); ++i) {
      const PlanTiming& t = r.plans[i];
      if (t.correct && !t.us.empty() && (best < 0 || t.medianUs < r.plans[best].medianUs)) {
        best = static_cast<int>(i);
      }
    }
    double ratio = 0;
    if (file.correct && best >= 0 && r.plans[best].medianUs > 0) {
      // Against the fastest of all, the file's own plan included: at most 1 means it won.
      ratio = file.medianUs / std::min(file.medianUs, r.plans[best].medianUs);
      if (ratio > *worst) {
        *worst = ratio;
        *worstBytes = r.bytes;
      }
    }
    rows.push_back({humanBytes(r.bytes), labelOf(labels, file),
                    file.correct ? num(file.medianUs) : "WRONG",
                    best >= 0 ? labelOf(labels, r.plans[best]) : "-",
                    best >= 0 ? num(r.plans[best].medianUs) : "-",
                    ratio > 0 ? num(file.medianUs / r.plans[best].medianUs) : "-",
                    std::to_string(r.plans.size())});
  }
  return alignTable(rows, {false, false, true, false, true, true, true});
}

StatusOr<std::vector<plan::PlanRule>> winnerRules(const std::vector<SizeResult>& results,
                                                  const topo::Hierarchy& h) {
  std::vector<plan::PlanRule> rules;
  for (size_t i = 0; i < results.size(); ++i) {
    const SizeResult& r = results[i];
    if (r.fastest < 0) {
      return internalError("no plan gave the exact sum at " + humanBytes(r.bytes) +
                           "; not writing a plan file");
    }
    const PlanTiming& best = r.plans[r.fastest];
    // This size's range starts halfway (geometrically) from the previous measured size.
    const size_t lo = i == 0 ? 0
                             : static_cast<size_t>(std::llround(
                                   std::sqrt(static_cast<double>(results[i - 1].bytes) * r.bytes)));
    const std::string measured = humanBytes(r.bytes) + " in " + num(best.medianUs) + " us";
    if (!rules.empty() &&
        plan::describePlan(h, rules.back().plan) == plan::describePlan(h, best.plan)) {
      rules.back().plan.note += ", " + measured;
      continue;
    }
    if (!rules.empty()) rules.back().maxBytes = lo;
    plan::PlanRule rule;
    rule.minBytes = lo;
    rule.maxBytes = SIZE_MAX;
    rule.plan = best.plan;
    rule.plan.note = "strata-tune: fastest at " + measured;
    rules.push_back(rule);
  }
  return rules;
}

std::string formatRules(const std::vector<plan::PlanRule>& rules, const topo::Hierarchy& h,
                        const std::map<std::string, std::string>& labels) {
  std::vector<std::vector<std::string>> rows;
  for (const plan::PlanRule& rule : rules) {
    const std::string d = plan::describePlan(h, rule.plan);
    auto it = labels.find(d);
    const std::string hi = rule.maxBytes == SIZE_MAX ? "inf" : humanBytes(rule.maxBytes);
    rows.push_back({"[" + humanBytes(rule.minBytes) + ",", hi + ")",
                    it == labels.end() ? rule.plan.name : it->second, d});
  }
  return alignTable(rows, {true, true, false, false});
}

Status writePlanFile(const std::string& path, const std::vector<plan::PlanRule>& rules,
                     const topo::Hierarchy& h, const std::map<std::string, topo::LinkModel>& links,
                     const std::string& comment, const plan::BlockRules& blocks) {
  const std::string text = plan::formatPlanFile(rules, h, links, blocks) + comment;
  const uint64_t want = plan::planHash(rules, h, blocks);
  // The checks STRATA_PLAN_FILE makes at init, and that it reads back what was meant.
  auto check = [&](const plan::PlanFile& pf, const char* when) -> Status {
    plan::BlockRules readBlocks;
    StatusOr<std::vector<plan::PlanRule>> resolved =
        plan::resolvePlanFile(pf, h, tools_iface::fabricNames(), path, &readBlocks);
    if (!resolved.isOk()) {
      return internalError(std::string("the plan file ") + when +
                           " does not load: " + resolved.status().message());
    }
    if (plan::planHash(resolved.value(), h, readBlocks) != want) {
      return internalError(std::string("the plan file ") + when + " reads back other rules");
    }
    for (const auto& [name, link] : links) {
      auto it = pf.measured.find(name);
      if (it == pf.measured.end() || it->second.latencyUs != link.latencyUs ||
          it->second.bandwidthGBps != link.bandwidthGBps) {
        return internalError(std::string("the plan file ") + when +
                             " reads back another measured link for level '" + name + "'");
      }
    }
    return Status::ok();
  };
  StatusOr<plan::PlanFile> parsed = plan::parsePlanFile(text, path);
  if (!parsed.isOk()) {
    return internalError("the plan file text does not parse: " + parsed.status().message());
  }
  STRATA_RETURN_IF_ERROR(check(parsed.value(), "to write"));

  FILE* f = std::fopen(path.c_str(), "w");
  if (f == nullptr) return systemError(path + ": cannot write: " + std::strerror(errno));
  const bool ok = std::fwrite(text.data(), 1, text.size(), f) == text.size();
  const int err = errno;
  if (std::fclose(f) != 0 || !ok) {
    return systemError(path + ": cannot write: " + std::strerror(ok ? errno : err));
  }
  StatusOr<plan::PlanFile> loaded = tools_iface::loadPlanFile(path);
  if (!loaded.isOk()) {
    return internalError("the written plan file does not load: " + loaded.status().message());
  }
  return check(loaded.value(), "written");
}

Status checkWritable(const std::string& path) {
  if (path.empty()) return invalidArgument("--output is empty");
  struct stat st {};
  if (stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return invalidArgument(path + ": is a directory, not a file");
    if (access(path.c_str(), W_OK) != 0) {
      return invalidArgument(path + ": cannot write: " + std::strerror(errno));
    }
    return Status::ok();
  }
  const size_t slash = path.find_last_of('/');
  const std::string dir = slash == std::string::npos ? "."
                          : slash == 0               ? "/"
                                                     : path.substr(0, slash);
  if (stat(dir.c_str(), &st) != 0) {
    return invalidArgument(path + ": cannot write: directory " + dir + ": " + std::strerror(errno));
  }
  if (!S_ISDIR(st.st_mode))
    return invalidArgument(path + ": cannot write: " + dir + " is not a directory");
  if (access(dir.c_str(), W_OK) != 0) {
    return invalidArgument(path + ": cannot write in " + dir + ": " + std::strerror(errno));
  }
  return Status::ok();
}

}  // namespace strata::tools
