// strata-tune: measures this job's links and times the candidate allreduce plans on its own
// ranks, then writes the fastest plan per message size as a plan file for STRATA_PLAN_FILE.
//
// It runs under mpirun with the job's layout (the same hosts and ranks per host as the job that
// will use the file). Steps: (1) ping-pong per hierarchy level for alpha and beta, (2) for each
// size of a sweep, time the candidates the model ranks best plus passthrough, (3) write the
// measured winners, (4) show where the cost model, fed the measured links, is off by > 25%.
// It is an internal tool: it makes the communicator with the public strataCommInitMPI and then
// forces plans through the tools interface (tools_iface/tools_comm.h).
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <exception>
#include <string>
#include <vector>

#include "decompose/planner.h"
#include "first_process.h"
#include "size_arg.h"
#include "strata/strata_mpi.h"
#include "tool_cli.h"
#include "tool_main.h"
#include "tools_iface/tools_comm.h"
#include "tools_iface/tools_inputs.h"
#include "tune_fit.h"
#include "tune_forms.h"
#include "tune_measure.h"
#include "tune_report.h"
#include "tune_sweep.h"

namespace strata::tools {
namespace {

constexpr size_t kMaxBytes = size_t{1} << 30;  // two buffers of this per rank
constexpr size_t kMaxSizes = 64;

struct Options {
  std::string min = "1K";
  std::string max = "16M";
  double factor = 4;
  int warmup = 2;
  int iters = 5;
  int top = 4;
  double planSeconds = 2;
  int runoffIters = 10;
  std::string output = "strata-plan.yaml";
  std::string check;  // --check FILE: re-time FILE's plans against every candidate instead
};

constexpr const char* kTool = "strata-tune";
int fail(const std::string& message) { return toolError(kTool, message); }

std::string numberText(double x) {
  char buf[32];
  std::snprintf(buf, sizeof(buf), "%g", x);
  return buf;
}

// A size as strata-perf and strata-kernels read one (size_arg.h): "64K", "16MiB", "1048576".
StatusOr<size_t> parseSizeOption(const std::string& flag, const std::string& text) {
  size_t bytes = 0;
  if (!parseSizeArg(text, &bytes)) {
    return invalidArgument(flag + " '" + text +
                           "': expected bytes with an optional K, M or G (binary) suffix, e.g. "
                           "64K or 16M");
  }
  return bytes;
}

// The sweep's sizes: min, min*factor, ... up to max, in whole float32 elements.
StatusOr<std::vector<size_t>> sweepSizes(const Options& o) {
  STRATA_ASSIGN_OR_RETURN(size_t lo, parseSizeOption("-b/--minbytes", o.min));
  STRATA_ASSIGN_OR_RETURN(size_t hi, parseSizeOption("-e/--maxbytes", o.max));
  if (lo < sizeof(float)) return invalidArgument("--minbytes " + o.min + ": at least 4 bytes");
  if (hi > kMaxBytes) return invalidArgument("--maxbytes " + o.max + ": at most 1G");
  if (hi < lo) return invalidArgument("--maxbytes " + o.max + " is below --minbytes " + o.min);
  if (!(o.factor > 1) || o.factor > 1024) {
    return invalidArgument("--stepfactor " + numberText(o.factor) +
                           ": must be above 1 (and at most 1024)");
  }
  std::vector<size_t> sizes;
  for (double s = static_cast<double>(lo); s <= static_cast<double>(hi) * (1 + 1e-9);
       s *= o.factor) {
    const size_t bytes = static_cast<size_t>(s + 0.5) / sizeof(float) * sizeof(float);
    if (sizes.empty() || bytes > sizes.back()) sizes.push_back(bytes);
    if (sizes.size() > kMaxSizes) {
      return invalidArgument("--minbytes " + o.min + " to --maxbytes " + o.max +
                             " by --stepfactor " + numberText(o.factor) + " makes more than " +
                             std::to_string(kMaxSizes) + " sizes; raise --stepfactor");
    }
  }
  return sizes;
}

double secondsSince(double t0) { return MPI_Wtime() - t0; }

// Every correct timed (plan, size) of the sweep, for the fit.
std::vector<FitPoint> fitPoints(const std::vector<SizeResult>& results) {
  std::vector<FitPoint> points;
  for (const SizeResult& r : results) {
    for (const PlanTiming& t : r.plans) {
      if (t.correct && t.medianUs > 0) {
        points.push_back({t.plan, static_cast<double>(r.bytes), t.medianUs});
      }
    }
  }
  return points;
}

// The cost model fitted to the sweep, its numbers rounded as the tables and the file show them,
// and every timed plan's fitted prediction filled in. Pure: every rank computes the same.
StatusOr<FitResult> fitAndPredict(const topo::Hierarchy& measured, const plan::CostParams& params,
                                  std::vector<SizeResult>* results) {
  const std::vector<FitPoint> points = fitPoints(*results);
  STRATA_ASSIGN_OR_RETURN(FitResult fit, fitCostModel(measured, params, points));
  std::vector<topo::Level> levels = fit.fitted.levels();
  for (topo::Level& l : levels) {
    l.link.latencyUs = roundSignificant(l.link.latencyUs);
    l.link.bandwidthGBps = roundSignificant(l.link.bandwidthGBps);
  }
  STRATA_ASSIGN_OR_RETURN(fit.fitted, fit.fitted.withLevels(std::move(levels)));
  fit.params.stepOverheadUs = roundSignificant(fit.params.stepOverheadUs);
  std::vector<double> e = relativeErrors(fit.fitted, fit.params, points);
  fit.rmsAfter = fit.worstAfter = 0;
  for (double x : e) {
    fit.rmsAfter += x * x;
    fit.worstAfter = std::max(fit.worstAfter, std::fabs(x));
  }
  fit.rmsAfter = e.empty() ? 0 : std::sqrt(fit.rmsAfter / e.size());
  for (SizeResult& r : *results) {
    for (PlanTiming& t : r.plans) {
      t.fittedUs =
          plan::predict(fit.fitted, t.plan, static_cast<double>(r.bytes), fit.params).totalUs;
    }
  }
  return fit;
}

// Times, at each size, the plan the fitted model ranks first among every candidate when the
// sweep did not time it (the ping-pong model ranked it below --top). Collective. Returns how many
// plans were added.
StatusOr<int> timeFittedPicks(tools_iface::ToolsComm& c, const SweepOptions& so,
                              const FitResult& fit, const topo::Hierarchy& measured,
                              std::vector<SizeResult>* results) {
  int added = 0;
  const std::vector<plan::Plan> candidates = plan::candidatePlans(c.hierarchy(), c.costParams());
  for (SizeResult& r : *results) {
    const double bytes = static_cast<double>(r.bytes);
    const plan::Plan* pick = nullptr;
    double pickUs = 0;
    for (const plan::Plan& p : candidates) {
      const double us = plan::predict(fit.fitted, p, bytes, fit.params).totalUs;
      if (pick == nullptr || us < pickUs) {
        pick = &p;
        pickUs = us;
      }
    }
    if (pick == nullptr) continue;
    const double predicted = plan::predict(measured, *pick, bytes, c.costParams()).totalUs;
    STRATA_ASSIGN_OR_RETURN(bool timed, timeAddedPlan(c, so, *pick, predicted, &r));
    if (timed) ++added;
  }
  return added;
}

// The tuning itself, on a communicator every rank made. Returns the exit code.
int tune(tools_iface::ToolsComm& c, const Options& o, const std::vector<size_t>& sizes, double t0) {
  const bool root = c.rank() == 0;
  if (root) {
    std::printf("strata-tune: %d ranks, hierarchy %s (%s)\n", c.size(),
                c.hierarchy().describe().c_str(), c.hierarchySource().c_str());
    std::fflush(stdout);
  }
  // Step 1: the links.
  const PingPongOptions po;
  StatusOr<std::vector<LevelMeasurement>> m = measureLevels(c, po, [&](int l) {
    std::fprintf(stderr, "[links] level %d %s: ping-pong of %zu B and %s\n", l,
                 c.hierarchy().level(l).name.c_str(), po.smallBytes,
                 humanBytes(po.largeBytes).c_str());
  });
  if (!m.isOk()) return root ? fail("measuring the links: " + m.status().message()) : 1;
  const std::map<std::string, topo::LinkModel> links = measuredLinks(c.hierarchy(), m.value());
  StatusOr<topo::Hierarchy> measured = withLinks(c.hierarchy(), links);
  if (!measured.isOk()) {
    return root ? fail("the hierarchy with measured links: " + measured.status().message()) : 1;
  }
  if (root) {
    std::printf(
        "\nmeasured links (one pair per level, median half round trip; one level at a "
        "time):\n%s",
        formatLinks(c.hierarchy(), measured.value(), m.value(), po).c_str());
    std::fflush(stdout);
  }

  // Step 2: the sweep.
  SweepOptions so;
  so.sizes = sizes;
  so.warmup = o.warmup;
  so.iters = o.iters;
  so.top = o.top;
  so.planSeconds = o.planSeconds;
  so.runoffIters = o.runoffIters;
  double sizeStart = 0;
  SweepProgress progress;
  progress.sizeStarted = [&](size_t i, const SizeResult& r) {
    sizeStart = MPI_Wtime();
    std::fprintf(stderr, "[%zu/%zu] %s: timing %zu plan%s", i + 1, sizes.size(),
                 humanBytes(r.bytes).c_str(), r.plans.size(), r.plans.size() == 1 ? "" : "s");
  };
  progress.sizeDone = [&](size_t, const SizeResult& r) {
    const std::string best =
        r.fastest < 0
            ? "none correct"
            : r.plans[r.fastest].plan.name + " " +
                  std::to_string(static_cast<long long>(r.plans[r.fastest].medianUs + 0.5)) + " us";
    std::fprintf(stderr, " ... fastest %s (%.1f s)\n", best.c_str(), secondsSince(sizeStart));
  };
  StatusOr<std::vector<SizeResult>> results = runSweep(c, measured.value(), so, progress);
  if (!results.isOk()) return root ? fail("timing the plans: " + results.status().message()) : 1;

  // Step 3: the cost model fitted to the timings; the plans it ranks first that the sweep did
  // not time are timed against the fastest, and the fit is made again with them.
  StatusOr<FitResult> fit = fitAndPredict(measured.value(), c.costParams(), &results.value());
  if (fit.isOk()) {
    if (root) std::fprintf(stderr, "[fit] the fitted model's picks the sweep did not time\n");
    StatusOr<int> added = timeFittedPicks(c, so, fit.value(), measured.value(), &results.value());
    if (!added.isOk())
      return root ? fail("timing the fitted model's picks: " + added.status().message()) : 1;
    if (added.value() > 0) fit = fitAndPredict(measured.value(), c.costParams(), &results.value());
  }
  if (!fit.isOk()) return root ? fail("fitting the cost model: " + fit.status().message()) : 1;
  const size_t points = fitPoints(results.value()).size();

  // Step 5: the reduce-scatter's and all-gather's two forms, where the layout has both.
  std::vector<FormSizeResult> forms[2];
  const Collective formColls[2] = {Collective::kReduceScatter, Collective::kAllGather};
  for (int k = 0; k < 2 && formsComparable(c.hierarchy()); ++k) {
    StatusOr<std::vector<FormSizeResult>> r =
        runFormSweep(c, measured.value(), formColls[k], so, [](const FormSizeResult& s) {
          std::fprintf(stderr, "[forms] %s %s: flat %.0f us, hierarchical %.0f us\n",
                       collectiveName(s.coll), humanBytes(s.bytes).c_str(), s.forms[0].medianUs,
                       s.forms[1].medianUs);
        });
    if (!r.isOk()) return root ? fail("timing the forms: " + r.status().message()) : 1;
    predictFitted(fit.value(), &r.value());
    forms[k] = std::move(r.value());
  }

  // Steps 3 and 4: rank 0 reports and writes; every rank exits with its verdict.
  int code = 0;
  if (root) {
    const auto labels = planLabels(results.value());
    int flagged = 0;
    const std::string table = formatComparison(results.value(), labels, &flagged);
    std::printf("\nplans timed:\n%s", formatPlanLegend(results.value(), labels).c_str());
    std::printf(
        "\nprediction (cost model with the measured links) vs measurement (median of "
        "the slowest rank's time; * = fastest):\n%s",
        table.c_str());
    size_t timed = 0;
    for (const SizeResult& r : results.value()) timed += r.plans.size();
    std::printf("%d of %zu predictions are off by more than %.0f%%\n", flagged, timed,
                (kDisagreeRatio - 1) * 100);
    std::printf(
        "\nthe cost model fitted to the timings (least squares on relative error; the step "
        "overhead is added to every step's alpha):\n%s",
        formatFit(measured.value(), fit.value(), points).c_str());
    int disagree = 0;
    const std::string choices = formatChoices(results.value(), labels, &disagree);
    std::printf("\nthe model's picks (ping-pong links, fitted) vs the measured fastest:\n%s",
                choices.c_str());
    std::printf("the fitted model picks the measured fastest at %zu of %zu sizes\n",
                results.value().size() - disagree, results.value().size());
    plan::BlockRules blocks;
    Status formsOk = Status::ok();
    for (int k = 0; k < 2 && !forms[k].empty(); ++k) {
      int wrongPicks = 0;
      std::printf("\n%s forms (median us; the model's picks with ping-pong and fitted links):\n%s",
                  collectiveName(formColls[k]), formatFormSweep(forms[k], &wrongPicks).c_str());
      std::printf("the fitted model picks the measured faster form at %zu of %zu sizes\n",
                  forms[k].size() - wrongPicks, forms[k].size());
      StatusOr<std::vector<plan::BlockRule>> fr = formRules(forms[k]);
      if (!fr.isOk()) formsOk = fr.status();
      if (fr.isOk()) (k == 0 ? blocks.reduceScatter : blocks.allGather) = std::move(fr.value());
    }
    if (forms[0].empty()) {
      std::printf("\nreduce-scatter and all-gather forms: not timed (%s has one form: flat)\n",
                  c.hierarchy().describe().c_str());
    }
    StatusOr<std::vector<plan::PlanRule>> rules = winnerRules(results.value(), c.hierarchy());
    if (rules.isOk() && !formsOk.isOk()) rules = formsOk;
    Status written = rules.isOk()
                         ? writePlanFile(o.output, rules.value(), c.hierarchy(), links,
                                         fitComment(measured.value(), fit.value(), points), blocks)
                         : rules.status();
    if (written.isOk()) {
      std::printf("\nmeasured winners by message size:\n%s",
                  formatRules(rules.value(), c.hierarchy(), labels).c_str());
      for (int k = 0; k < 2; ++k) {
        for (const plan::BlockRule& b : blocks.of(formColls[k])) {
          std::printf("  %s [%s, %s): %s\n", collectiveName(formColls[k]),
                      humanBytes(b.minBytes).c_str(),
                      b.maxBytes == SIZE_MAX ? "inf" : humanBytes(b.maxBytes).c_str(),
                      plan::blockFormName(b.form));
        }
      }
      char* abs = realpath(o.output.c_str(), nullptr);
      const std::string path = abs != nullptr ? abs : o.output;
      std::free(abs);
      std::printf(
          "\nwrote %s (checked: it loads against %s)\nuse it with the same layout "
          "(%d ranks, same hosts): STRATA_PLAN_FILE=%s mpirun ... your job\n",
          path.c_str(), c.hierarchy().describe().c_str(), c.size(), path.c_str());
    } else {
      code = fail(written.message());
    }
    std::printf("done in %.1f s\n", secondsSince(t0));
    std::fflush(stdout);
  }
  MPI_Bcast(&code, 1, MPI_INT, 0, MPI_COMM_WORLD);
  return code;
}

// --check FILE: at each size, the plan FILE gives against every candidate plan, timed in
// interleaved rounds, on a fresh launch: what the file's choices cost. Returns the exit code.
int check(tools_iface::ToolsComm& c, const Options& o, const std::vector<size_t>& sizes,
          double t0) {
  const bool root = c.rank() == 0;
  StatusOr<plan::PlanFile> pf = tools_iface::loadPlanFile(o.check);
  plan::BlockRules blocks;
  StatusOr<std::vector<plan::PlanRule>> rules =
      pf.isOk() ? plan::resolvePlanFile(pf.value(), c.hierarchy(), tools_iface::fabricNames(),
                                        o.check, &blocks)
                : StatusOr<std::vector<plan::PlanRule>>(pf.status());
  if (!rules.isOk()) return root ? fail("--check " + rules.status().message()) : 1;
  if (root) {
    std::printf("strata-tune --check %s: %d ranks, hierarchy %s\n", o.check.c_str(), c.size(),
                c.hierarchy().describe().c_str());
    std::fflush(stdout);
  }
  const std::vector<plan::Plan> candidates = plan::candidatePlans(c.hierarchy(), c.costParams());
  std::vector<SizeResult> results;
  for (size_t s = 0; s < sizes.size(); ++s) {
    SizeResult r;
    r.bytes = sizes[s];
    const plan::Plan* chosen = plan::planFor(rules.value(), r.bytes);
    if (chosen == nullptr) return root ? fail("--check: no rule covers " + humanBytes(r.bytes)) : 1;
    PlanTiming file;
    file.plan = *chosen;
    file.description = plan::describePlan(c.hierarchy(), *chosen);
    r.plans.push_back(file);
    for (const plan::Plan& p : candidates) {
      PlanTiming t;
      t.plan = p;
      t.description = plan::describePlan(c.hierarchy(), p);
      if (t.description == file.description) {
        r.plans[0].plan.name = p.name;  // label it as the sweep did
        continue;
      }
      r.plans.push_back(t);
    }
    if (root) {
      std::fprintf(stderr, "[%zu/%zu] %s: the file's plan and %zu others, %d rounds\n", s + 1,
                   sizes.size(), humanBytes(r.bytes).c_str(), r.plans.size() - 1, o.iters);
    }
    const Status st = retime(c, r.bytes, o.warmup, o.iters, &r.plans);
    if (!st.isOk()) return root ? fail("timing the plans: " + st.message()) : 1;
    results.push_back(std::move(r));
  }
  if (root) {
    const auto labels = planLabels(results);
    double worst = 0;
    size_t worstBytes = 0;
    const std::string table = formatCheck(results, labels, &worst, &worstBytes);
    std::printf("\nplans timed:\n%s", formatPlanLegend(results, labels).c_str());
    std::printf(
        "\nthe file's plan vs the fastest other candidate (median of %d interleaved calls; "
        "time of the slowest rank):\n%s",
        o.iters, table.c_str());
    std::printf("worst: the file's plan takes %.3f x the fastest (at %s)\n", worst,
                humanBytes(worstBytes).c_str());
    std::fflush(stdout);
  }
  // The file's reduce-scatter and all-gather forms against the other form, where it pins them.
  for (Collective coll : {Collective::kReduceScatter, Collective::kAllGather}) {
    if (blocks.of(coll).empty()) continue;
    std::vector<FormSizeResult> timed;
    for (size_t bytes : sizes) {
      StatusOr<FormSizeResult> r = retimeForms(c, c.hierarchy(), coll, bytes, o.warmup, o.iters);
      if (!r.isOk()) return root ? fail("timing the forms: " + r.status().message()) : 1;
      if (r.value().count > 0) timed.push_back(std::move(r.value()));
    }
    if (root) {
      double worstForm = 0;
      const std::string table = formatFormCheck(timed, blocks.of(coll), &worstForm);
      std::printf("\n%s: the file's form vs the other (median of %d interleaved calls):\n%s",
                  collectiveName(coll), o.iters, table.c_str());
      std::printf("worst: the file's %s form takes %.3f x the other\n", collectiveName(coll),
                  worstForm);
      std::fflush(stdout);
    }
  }
  if (root) std::printf("done in %.1f s\n", secondsSince(t0));
  return 0;
}

int run(const Options& o, const std::vector<size_t>& sizes, int* argc, char*** argv) {
  MPI_Init(argc, argv);
  const double t0 = MPI_Wtime();
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int code = kExitFailure;
  if (size < 2) {
    // A launch with one rank is a wrong command line (mpirun's part of it).
    code = usageError(kTool,
                      "needs at least 2 ranks (it times allreduces between them): run it under "
                      "mpirun with the layout of your job, e.g. mpirun -n 8 strata-tune");
  } else {
    // Rank 0 writes the file: find a bad --output now, not after the sweep.
    const Status writable = tools_iface::agreeOver(
        MPI_COMM_WORLD, rank == 0 && o.check.empty() ? checkWritable(o.output) : Status::ok());
    strataComm_t comm = nullptr;
    if (!writable.isOk()) {
      if (rank == 0) fail("--output " + writable.message());
    } else if (strataCommInitMPI(&comm, MPI_COMM_WORLD) != strataSuccess) {
      if (rank == 0)
        fail(std::string("cannot make the communicator: ") + strataGetLastError(nullptr));
    } else {
      code = o.check.empty() ? tune(*tools_iface::toolsCommOf(comm), o, sizes, t0)
                             : check(*tools_iface::toolsCommOf(comm), o, sizes, t0);
      strataCommDestroy(comm);
    }
  }
  MPI_Finalize();
  return code;
}

constexpr const char* kFooter = R"(What it does, on the ranks of the job it runs in:
  1. links: for each level of the hierarchy (as strataCommInitMPI builds it: host names, or
     STRATA_HOSTNAME per rank, CPU binding, or STRATA_TOPO_FILE), two ranks of one group of
     that level ping-pong while the others wait: latency = median half round trip of 8 bytes,
     bandwidth from the median half round trip of 4 MiB minus that latency. Levels are
     measured one after another.
  2. sweep: for each size from -b to -e (times -f), float32 sum: the --top candidate plans
     ranked by the cost model with the measured links, plus passthrough (one MPI_Allreduce),
     timed in interleaved rounds (one call of each plan per round): -w untimed rounds, then
     -n timed. A call's time is the slowest rank's, between a barrier and its end; a plan's
     time is the median. A plan stops early (after one timed call) once it has used
     --time-per-plan seconds. The plans within 50% of the fastest then get --runoff-iters more
     interleaved calls. Each plan's first result is checked against the exact sum; a wrong plan
     is reported and never chosen.
  3. fit: the cost model's per-level latency and bandwidth and one step overhead (us added to
     every communication step) fitted by least squares to the timed plans' relative error,
     starting from the ping-pong values. A plan the fitted model ranks first that the sweep
     did not time is timed against the fastest.
  4. forms: where the layout is regular with 2 levels or more, the reduce-scatter's and the
     all-gather's two forms (flat: one ring over every rank; hierarchical: one stage per
     level) at each size (the whole vector, every rank's block together), in interleaved
     rounds (-w untimed, then -n plus --runoff-iters timed), each form's first result checked.
  5. plan file (--output): the measured fastest plan of each size, over size ranges split at
     the geometric midpoints between the measured sizes, adjacent equal winners merged; the
     faster form of each collective the same way (reduce_scatter:, all_gather:; a lead under
     5% over the cost model's pick keeps the model's pick); the
     ping-pong links (`measured:`) and the fit as comments. It is checked to load as
     STRATA_PLAN_FILE before it is written. Rank 0 writes it.
  6. report (stdout, rank 0): the measured links, the plans timed, a table of predicted
     (ping-pong links), measured and fitted microseconds with a flag where the ping-pong model
     is off by more than 25%, the fit (ping-pong vs fitted values, the model's error before
     and after), per size the model's and the fitted model's picks against the measured
     fastest, marking where the fitted model disagrees, and the same for the forms.
  --check FILE writes nothing: at each size it times the plan FILE gives against every
  candidate plan (-n interleaved rounds) and prints the file's plan / the fastest; where FILE
  pins the reduce-scatter's or all-gather's form, that form against the other too.
Progress goes to stderr, one line per size.

Use the file in a job with the same layout (ranks, hosts, ranks per host): the hierarchy it
names must match the job's, or strataCommInitMPI refuses it. Every rank reads it, so copy it
to every node when they share no filesystem.

The default sweep (8 sizes) takes well under a minute on a few ranks; the time per size is
bounded by about (--top + 1) x --time-per-plan seconds (a plan's last call may overrun it).

Examples:
  mpirun -n 8 strata-tune
      1 KiB to 16 MiB by x4; writes strata-plan.yaml
  STRATA_PLAN_FILE=strata-plan.yaml mpirun -n 8 strata-allreduce-demo
      a job of the same layout (here the quick start's demo) runs the measured winners
  mpirun -n 8 strata-tune -b 64K -e 4M -f 2 -n 10 --output fine.yaml
      finer steps, more iterations, another file
  mpirun -n 2 env STRATA_HOSTNAME=a strata-tune : -n 2 env STRATA_HOSTNAME=b strata-tune
      four ranks as two emulated hosts of two ranks each

-b, -e, -f, -n and -w mean what they mean in nccl-tests and strata-perf.)";

}  // namespace
}  // namespace strata::tools

int main(int argc, char** argv) {
  using strata::tools::Options;
  Options o;
  CLI::App app{
      "strata-tune: measure this job's links and time strata's allreduce plans on its ranks, "
      "then write the fastest plan per message size as a plan file (STRATA_PLAN_FILE). Run it "
      "under mpirun with at least 2 ranks."};
  strata::tools::setFooter(app, strata::tools::kFooter);
  app.add_option("-b,--minbytes", o.min, "smallest message size (bytes; K, M, G suffixes: binary)")
      ->type_name("SIZE")
      ->capture_default_str();
  app.add_option("-e,--maxbytes", o.max, "largest message size (at most 1G)")
      ->type_name("SIZE")
      ->capture_default_str();
  app.add_option("-f,--stepfactor", o.factor, "step between sizes (a number above 1, e.g. 2 or 4)")
      ->type_name("X")
      ->capture_default_str();
  app.add_option("-w,--warmup_iters", o.warmup, "untimed calls per plan and size")
      ->check(CLI::Range(0, 1000))
      ->capture_default_str();
  app.add_option("-n,--iters", o.iters, "timed calls per plan and size (the median is used)")
      ->check(CLI::Range(1, 10000))
      ->capture_default_str();
  app.add_option("--top", o.top,
                 "candidates to time per size, the cheapest by the cost model; passthrough is "
                 "always timed too")
      ->check(CLI::Range(1, 1000))
      ->capture_default_str();
  app.add_option("--time-per-plan", o.planSeconds,
                 "seconds a plan may use per size before it stops early (after at least one "
                 "timed call)")
      ->check(CLI::Range(0.001, 3600.0))
      ->capture_default_str();
  app.add_option("--runoff-iters", o.runoffIters,
                 "more timed calls, interleaved, for the plans within 50% of the fastest at a "
                 "size (0: no runoff)")
      ->check(CLI::Range(0, 10000))
      ->capture_default_str();
  app.add_option("--check", o.check,
                 "write nothing: re-time, at each size, the plan FILE gives against every "
                 "candidate plan (-n interleaved rounds) and print what the file's choice costs")
      ->type_name("FILE")
      ->check(strata::tools::nonEmptyPath());
  app.add_option("--output", o.output, "plan file to write (YAML)")
      ->type_name("FILE")
      ->capture_default_str()
      ->check(strata::tools::nonEmptyPath());
  const bool printer = strata::tools::firstProcess();
  if (auto rc = strata::tools::parseCommandLine(app, argc, argv, printer)) return *rc;
  strata::StatusOr<std::vector<size_t>> sizes = strata::tools::sweepSizes(o);
  if (!sizes.isOk()) {
    return printer ? strata::tools::usageError(strata::tools::kTool, sizes.status().message())
                   : strata::tools::kExitUsage;
  }
  return strata::tools::guardedMain(
      "strata-tune", [&] { return strata::tools::run(o, sizes.value(), &argc, &argv); });
}
