// strata-plan: which allreduce plan strata runs for each message size, and what the cost model
// predicts for it, on a hierarchy from a topology file, a saved node description, a cluster
// given in shorthand, or this mpirun job (show; with --collective broadcast, reduce,
// reducescatter or allgather, that collective's form instead); the same as a table against the flat
// ring for clusters that are not here (simulate); and whether a plan file fits a hierarchy
// (validate).
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <iostream>
#include <string>
#include <vector>

#include "decompose/plan_file.h"
#include "plan_args.h"
#include "plan_forms.h"
#include "plan_report.h"
#include "plan_source.h"
#include "tool_cli.h"
#include "tool_main.h"
#include "tools_iface/tools_inputs.h"

namespace strata::tools {
namespace {

struct Options {
  SourceOptions source;
  std::vector<std::string> size;  // --size, repeatable
  std::string sizes;              // --sizes
  std::string planFile;
  double reduceGBps = plan::CostParams{}.reduceGBps;
  bool reduceGiven = false;
  std::string format = "text";
  std::string collective = "allreduce";  // show --collective
  BaselineOptions baseline;              // --baseline, --gpu, --cpu
  std::string compress;                  // --compress ("" = the communicator's or none)
};

constexpr const char* kTool = "strata-plan";
// The local reduction rate of GPU ranks (--reduce-gbps' default for them): a GPU combines two
// vectors while copying them at a good share of its memory bandwidth (1.5-3 TB/s from V100 to
// H100).
constexpr double kGpuReduceGBps = 500;
int fail(const std::string& message) { return toolError(kTool, message); }
int usageError(const std::string& message) { return tools::usageError(kTool, message); }
// A problem with the command line's own values is a usage error; any other a failure.
int fail(const Status& st) {
  return st.code() == Code::kInvalidUsage ? usageError(st.message()) : fail(st.message());
}

// --size and --sizes together, or `fallback` when neither is given.
StatusOr<std::vector<size_t>> messageSizes(const Options& o, const std::string& fallback) {
  std::string list = o.sizes;
  for (const std::string& s : o.size) list += (list.empty() ? "" : ",") + s;
  if (list.empty()) list = fallback;
  return parseSizeList(list, o.size.empty() ? "--sizes" : "--size/--sizes");
}

// A plan file that does not fit is reported by the library as a communicator's init reports it,
// naming "this job's layout". Offline (--topo, --input, --cluster) there is no job: name where
// the hierarchy came from instead.
Status inOfflineWords(const Status& s, const Target& t) {
  const std::string job = "this job's layout is";
  std::string message = s.message();
  const size_t at = message.find(job);
  if (t.live || at == std::string::npos) return s;
  message.replace(at, job.size(), "the layout checked against (" + t.source + ") is");
  return Status(s.code(), message);
}

// Where the plans come from: --plan-file, else (--live) the communicator's STRATA_PLAN_FILE,
// else the planner. --reduce-gbps overrides the communicator's cost parameters.
StatusOr<PlanSource> planSource(const Options& o, const Target& t) {
  PlanSource p;
  if (t.live) {
    p.params = t.commParams;
  } else {
    p.params.fabrics = tools_iface::fabricTraits();
  }
  // On GPUs the reduction is fused with the copies at memory speed, far above the host default.
  if (t.gpus && !t.live) p.params.reduceGBps = kGpuReduceGBps;
  if (o.reduceGiven) p.params.reduceGBps = o.reduceGBps;
  if (!o.compress.empty()) parseWireType(o.compress, &p.params.compress);
  if (!o.planFile.empty()) {
    STRATA_ASSIGN_OR_RETURN(plan::PlanFile file, tools_iface::loadPlanFile(o.planFile));
    StatusOr<std::vector<plan::PlanRule>> rules =
        plan::resolvePlanFile(file, t.hierarchy, tools_iface::fabricNames(), o.planFile, &p.blocks);
    if (!rules.isOk()) return inOfflineWords(rules.status(), t);
    p.rules = rules.take();
    p.name = "plan file " + o.planFile;
  } else if (t.live && !t.commRules.empty()) {
    p.rules = t.commRules;
    p.blocks = t.commBlocks;
    p.name = t.commPlanSource;
  } else {
    p.name = "the planner's choice (cost model)";
  }
  return p;
}

enum class Command { kShow, kSimulate, kValidate };

// --collective's name: allreduce, broadcast, reduce, reducescatter or allgather.
Collective collectiveOf(const std::string& name) {
  for (Collective c : {Collective::kBroadcast, Collective::kReduce, Collective::kReduceScatter,
                       Collective::kAllGather}) {
    if (name == collectiveName(c)) return c;
  }
  return Collective::kAllReduce;
}

// show --collective broadcast|reduce|reducescatter|allgather: the form per size instead of the
// allreduce plan; a plan file's reduce_scatter/all_gather rules pin the block collectives' forms.
int reportForms(const Options& o, const Target& t, const std::vector<size_t>& sizes,
                PlanSource plans) {
  const Collective coll = collectiveOf(o.collective);
  if (plans.blocks.of(coll).empty()) plans.name = "the planner's choice (cost model)";
  const std::vector<FormReport> reports = evaluateForms(t.hierarchy, coll, sizes, plans);
  if (o.format == "json") {
    std::cout << formsShowJson(t, coll, plans, reports).dump(2) << "\n";
  } else {
    std::cout << formatFormsShow(t, coll, plans, reports);
  }
  std::cout.flush();
  return 0;
}

// Rank 0 (or the only process) reports on `t`.
int report(Command cmd, const Options& o, const Target& t, const std::vector<size_t>& sizes) {
  StatusOr<PlanSource> plans = planSource(o, t);
  if (!plans.isOk()) {
    // A script reading --format json still gets a JSON verdict; the message goes to stderr.
    if (o.format == "json") {
      std::cout << nlohmann::json{{"ok", false}, {"error", plans.status().message()}}.dump(2)
                << "\n";
      std::cout.flush();
    }
    return fail(plans.status().message());
  }
  if (cmd == Command::kValidate) {
    if (o.format == "json") {
      std::cout << rulesJson(t, plans.value()).dump(2) << "\n";
    } else {
      std::cout << formatRules(plans.value().rules, t.hierarchy, plans.value().name,
                               plans.value().blocks);
    }
    std::cout.flush();
    return 0;
  }
  if (cmd == Command::kShow && o.collective != "allreduce") {
    return reportForms(o, t, sizes, plans.value());
  }
  const bool show = cmd == Command::kShow;
  StatusOr<Baseline> baseline = makeBaseline(t, o.baseline, !show);
  if (!baseline.isOk()) return fail(baseline.status());
  StatusOr<std::vector<SizeReport>> reports =
      evaluate(t.hierarchy, sizes, plans.value(), baseline.value());
  if (!reports.isOk()) return fail(reports.status().message());
  const Baseline& b = baseline.value();
  if (o.format == "json") {
    const nlohmann::json j = show ? showJson(t, plans.value(), b, reports.value())
                                  : simulateJson(t, plans.value(), b, reports.value());
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << (show ? formatShow(t, plans.value(), b, reports.value())
                       : formatSimulate(t, plans.value(), b, reports.value()));
  }
  std::cout.flush();
  return 0;
}

int run(Command cmd, const Options& o) {
  const Status usage = checkSource(o.source, cmd != Command::kSimulate);
  if (!usage.isOk()) return usageError(usage.message());
  if ((o.collective == "broadcast" || o.collective == "reduce") && !o.planFile.empty()) {
    return usageError(
        "--plan-file holds allreduce plans and reduce-scatter/all-gather forms; it "
        "does not go with --collective " +
        o.collective);
  }
  // Arguments are checked before MPI starts, so a typo fails fast and the same on every rank.
  StatusOr<std::vector<size_t>> sizes = messageSizes(o, "1K:1G:x4");
  if (!sizes.isOk()) return usageError(sizes.status().message());
  if (!o.source.live) {
    StatusOr<Target> t = loadTarget(o.source);
    if (!t.isOk()) return fail(t.status());
    return report(cmd, o, t.value(), sizes.value());
  }
  LiveJob job;
  const Status st = job.initComm();
  if (!st.isOk()) return job.rank() == 0 ? fail(st.message()) : 1;
  if (job.rank() != 0) return 0;
  return report(cmd, o, job.target(), sizes.value());
}

void addSourceOptions(CLI::App* app, Options* o, bool live) {
  SourceOptions& s = o->source;
  app->add_option("--topo", s.topo,
                  "a topology file (STRATA_TOPO_FILE format, configs/topologies/*.yaml); its "
                  "level sizes multiply to the rank count")
      ->check(strata::tools::nonEmptyPath());
  app->add_option("--input", s.input,
                  "a saved node description: hwloc XML (lstopo foo.xml), NCCL topology XML or "
                  "nvidia-smi topo -m output; the cluster is --nodes such nodes")
      ->check(strata::tools::nonEmptyPath());
  app->add_option("--nodes", s.nodes, "with --input: the number of identical nodes")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  app->add_option("--ranks-per-node", s.ranksPerNode,
                  "with --input: ranks per node (default one per GPU, else one per package); "
                  "rank i of a node uses GPU i % GPUs and that GPU's package")
      ->check(CLI::Range(1, 1 << 20));
  app->add_option("--cluster", s.cluster.shape,
                  "a cluster that is not here, NODESxGPUS (e.g. 24x8): levels node (GPUs of "
                  "one node, --intra) and network (every node, --inter)");
  app->add_option("--intra", s.cluster.intra,
                  "with --cluster: the GPU-to-GPU link in a node, KIND:GBps or "
                  "KIND:LANESxGBps (LANES links per GPU add up: nvlink:6x25 = 150 GB/s)")
      ->capture_default_str();
  app->add_option("--inter", s.cluster.inter,
                  "with --cluster: each node's network, KIND:GBps or KIND:NICSxGBps (ib:4x25 = "
                  "4 NICs of 25 GB/s, each shared by ceil(GPUS / 4) GPUs)")
      ->capture_default_str()
      ->each([&s](const std::string&) { s.cluster.interGiven = true; });
  app->add_option("--intra-latency-us", s.cluster.intraLatencyUs,
                  "with --cluster: per-message latency inside a node")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app->add_option("--inter-latency-us", s.cluster.interLatencyUs,
                  "with --cluster: per-message latency across the network")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str();
  app->add_option("--nics", s.cluster.nics,
                  "with --cluster: NICs per node (default: the count in --inter, else 1)")
      ->check(CLI::Range(1, 1 << 20));
  if (live) {
    app->add_flag("--live,-l", s.live,
                  "this job's communicator: MPI_Init, strataCommInitMPI(MPI_COMM_WORLD), its "
                  "hierarchy (run under mpirun; rank 0 prints)");
  }
}

void addCostOptions(CLI::App* app, Options* o) {
  app->add_option("--reduce-gbps", o->reduceGBps,
                  "local reduction throughput in GB/s for the cost model (0: not modelled); "
                  "with --live the default is the communicator's, for GPUs 500")
      ->check(CLI::NonNegativeNumber)
      ->capture_default_str()
      ->each([o](const std::string&) { o->reduceGiven = true; });
  app->add_option("--compress", o->compress,
                  "cost float32 sums compressed to fp16 or bf16 on the stages between hosts, as "
                  "STRATA_COMPRESS runs them (none, fp16, bf16); with --live the default is the "
                  "communicator's")
      ->check(CLI::IsMember({"none", "fp16", "bf16"}));
}

void addBaselineOptions(CLI::App* app, Options* o, const char* fallback) {
  app->add_option(
         "--baseline", o->baseline.kind,
         std::string("what strata's plan is compared with: nccl (NCCL's own choice by "
                     "its cost model; needs GPUs), flat-ring, mpi-ring or none; default ") +
             fallback)
      ->check(CLI::IsMember({"nccl", "flat-ring", "mpi-ring", "none"}));
  app->add_option("--gpu", o->baseline.gpu,
                  "for --baseline nccl: the GPU generation, volta, ampere, hopper or blackwell "
                  "(default: the topology file's gpu key, else ampere)")
      ->check(CLI::IsMember({"volta", "ampere", "hopper", "blackwell"}));
  app->add_option("--cpu", o->baseline.cpu,
                  "for --baseline nccl: intel or amd (NCCL's network overhead per step; default "
                  "the topology file's cpu key, else intel)")
      ->check(CLI::IsMember({"intel", "amd"}));
}

void addSizeOptions(CLI::App* app, Options* o) {
  app->add_option("--size,-s", o->size,
                  "a message size in bytes, K/M/G (KiB/MiB/GiB) binary suffixes allowed: 64M, "
                  "1200000000; repeatable")
      ->take_all();
  app->add_option("--sizes", o->sizes,
                  "sizes: a comma-separated list of sizes and sweeps FIRST:LAST[:STEP], STEP "
                  "xF (multiply, default x2) or +N (add); default 1K:1G:x4");
}

void addFormatOption(CLI::App* app, Options* o) {
  app->add_option("--format", o->format, "output format: text or json")
      ->check(CLI::IsMember({"text", "json"}))
      ->capture_default_str();
}

constexpr const char* kMainFooter = R"(How predictions are made:
strata's alpha-beta cost model (src/decompose/cost_model.h) prices each stage from its
level's link (latency and bandwidth); a NIC shared by several GPUs divides its bandwidth.
NCCL's own cost model (src/decompose/nccl_model.h, NCCL 2.30.7) gives the baseline for GPUs.
Run `strata-plan SUBCOMMAND --help` for its options and examples.

Examples:
  strata-plan show --topo configs/topologies/seed_40gpu.yaml --size 1200000000
  strata-plan simulate --cluster 24x8 --intra nvlink:150 --inter ib:4x25
  strata-plan validate --plan-file configs/plans/two_level.yaml \
      --topo configs/topologies/2x2.yaml)";

constexpr const char* kShowFooter = R"(What it prints:
The hierarchy comes from exactly one of --topo, --input, --cluster and --live. For each size
it prints the plan (the planner's choice, or with --plan-file the rule covering the size),
each stage's label, group size, bytes in, bytes each rank sends and predicted time, the total,
and the totals of the reference plans: flat-ring (one ring over every rank), passthrough (one
MPI_Allreduce), two-level (reduce-scatter inside the node, allreduce across, all-gather; on a
2-level hierarchy this is also BlueConnect's one stage per level) and blueconnect (3 or more
levels). Under --live with STRATA_PLAN_FILE set, the communicator's rules are shown. With a
baseline (--baseline; nccl by default where the ranks are GPUs), its time is listed too, and
where NCCL's choice is predicted faster strata falls back to it: "plan flat: NCCL's ...".
JSON (--format json): {source, hierarchy, ranks, levels, notes, plan_source, cost_params,
baseline, sizes: [{bytes, plan, rule, stages, total_us, ties, compared, baseline: {what, us},
fallback, chosen_us}]}.

--collective broadcast or reduce prints, per size, the form the planner chooses for that rooted
collective and its stages, then the other forms' totals: flat (one MPI_Bcast/MPI_Reduce over
every rank), tree (the whole message level by level: latency-bound, small messages) and the
sharded form, scatter-allgather or reducescatter-gather (van de Geijn's split through the
levels: bandwidth-bound, large messages). Ties go to flat, then tree. --plan-file holds
allreduce plans and does not combine with it.
--collective reducescatter or allgather prints the same for their forms: flat (one ring over
every rank) or hierarchical (one stage per level: a regular layout of 2 levels or more). SIZE
is the whole vector, every rank's block together, as nccl-tests counts it. A plan file's
reduce_scatter/all_gather rules (--plan-file, or under --live the communicator's
STRATA_PLAN_FILE) pin the form as the communicator runs it; the form line then says pinned by
the file, and the cost model's choice is marked among the others. Ties go to flat.
JSON: {..., collective, sizes: [{bytes, form: {key, name, description}, pinned, model_choice,
stages, total_us, ties, compared: {KEY: {name, description, total_us}}}]}, KEY flat, tree or
sharded, or flat or hierarchical (total_us null where the layout cannot run it).

Examples:
  strata-plan show --topo configs/topologies/2x2x2.yaml --size 8 --size 256M
  strata-plan show --topo configs/topologies/seed_40gpu.yaml --size 1200000000 \
      --reduce-gbps 500
  strata-plan show --input tests/data/topologies/hwloc/nvidiaDGX2.xml --nodes 4 \
      --sizes 1M:1G:x8
  strata-plan show --topo configs/topologies/2x2x2.yaml \
      --plan-file configs/plans/blueconnect_2x2x2.yaml
  strata-plan show --cluster 8x4 --inter ib:4x12.5 --collective broadcast --sizes 8,64K,16M
  strata-plan show --topo configs/topologies/2x2x2.yaml --collective reducescatter --sizes 8,64M
  mpirun -n 16 strata-plan show --live --size 64M --format json)";

constexpr const char* kSimulateFooter = R"(The --cluster shorthand:
--cluster NODESxGPUS builds a regular 2-level hierarchy: level node (the GPUs of one node, on
--intra) and level network (one rank per node in each group, on --inter). A spec is KIND:GBps
or KIND:LANESxGBps; KIND is nvlink, nvswitch, pcie, smp, shm, infiniband (ib), roce,
ethernet (eth) or efa. On --intra the lanes are one GPU's links and add up; on --inter they
are the node's NICs, each of GBps and shared by ceil(GPUS / NICs) GPUs (--nics says the same).
--topo and --input (with --nodes) work here too.

The table has one row per message size: the baseline's time (with --baseline nccl, NCCL's own
choice by its cost model, and its algorithm/protocol), the predicted time of flat-ring,
passthrough, two-level (and blueconnect on 3+ levels), strata's best plan, what is chosen and
its name, its speedup over the baseline (baseline / chosen) and the share of the baseline's
time it saves (1 - chosen / baseline). Where NCCL's choice is predicted faster, strata falls
back to NCCL's flat algorithm: the plan column says flat (nccl).
The baseline defaults to nccl where the ranks are GPUs (--cluster, a topology file's gpu key,
a node description with GPUs; --gpu and --cpu set NCCL's constants), else flat-ring.
A topology file's "# published:" lines (what NCCL was measured at there) become notes beside
NCCL's model: how far apart they are and, past 15%, what the gap points to.
JSON (--format json): {..., baseline: {kind, description, notes}, reference_plans, rows:
[{bytes, flat_ring_us, passthrough_us, two_level_us, strata_plan: {name, description, us},
chosen: {name, description, us}, baseline: {what, us}, fallback, chosen_us,
speedup_vs_flat_ring, time_saved_fraction, speedup_vs_baseline}]}.

Examples:
  strata-plan simulate --cluster 24x8 --intra nvlink:150 --inter ib:4x25
      BlueConnect's 192 GPUs: 24 nodes of 8 GPUs on NVLink, 4 x 25 GB/s InfiniBand NICs each
  strata-plan simulate --cluster 5x8 --intra pcie:10 --inter ib:6 --inter-latency-us 1.5
      the 40 GPUs of configs/topologies/seed_40gpu.yaml (one 6 GB/s NIC per node)
  strata-plan simulate --topo configs/topologies/seed_40gpu.yaml --format json
  strata-plan simulate --topo configs/topologies/nccl_tests_119_3x8_a100_4hdr.yaml
      3 nodes of 8 A100 with 4 HDR NICs each (nccl-tests issue 119), against NCCL's choice)";

constexpr const char* kValidateFooter = R"(What it checks:
It loads the plan file (the STRATA_PLAN_FILE format, src/decompose/plan_file.h) and resolves
it against the hierarchy as strataCommInitMPI would: level names, fabrics, every plan, and
rules that tile [0, inf). It prints "OK: N rules" and each rule's range, line and stages, or
the problem as "plan file FILE:LINE: problem" (on stderr) and exits 1.
JSON (--format json): {source, hierarchy, ranks, levels, notes, plan_source, ok: true, rules:
[{min_bytes, max_bytes, line, plan: {name, description}, stages: [{level, fabric,
chunk_bytes}]}], reduce_scatter, all_gather: [{min_bytes, max_bytes, line, form}]} (the
file's pinned forms, also listed after the rules as text); a file that does not fit prints
{ok: false, error} and exits 1.

Examples:
  strata-plan validate --plan-file configs/plans/two_level.yaml \
      --topo configs/topologies/2x2.yaml
  strata-plan validate --plan-file configs/plans/blueconnect_2x2x2.yaml \
      --topo configs/topologies/2x2x2.yaml --format json
  STRATA_TOPO_FILE=configs/topologies/2x2.yaml mpirun -n 4 strata-plan validate \
      --plan-file configs/plans/two_level.yaml --live
      a file against the levels of this mpirun job (here a topology file's))";

}  // namespace
}  // namespace strata::tools

int main(int argc, char** argv) {
  using strata::tools::Command;
  using strata::tools::Options;
  namespace tools = strata::tools;
  Options o;
  CLI::App app{
      "strata-plan: the allreduce plans strata picks per message size and their predicted "
      "times, for a topology file, a saved machine description, an imagined cluster or this "
      "mpirun job."};
  tools::setFooter(app, tools::kMainFooter);
  app.require_subcommand(1);

  CLI::App* show = app.add_subcommand("show",
                                      "the plan (or with --collective another collective's form) "
                                      "per message size, stage by stage");
  tools::setFooter(*show, tools::kShowFooter);
  tools::addSourceOptions(show, &o, /*live=*/true);
  tools::addSizeOptions(show, &o);
  show->add_option("--plan-file", o.planFile,
                   "take each size's plan from this plan file (STRATA_PLAN_FILE format) "
                   "instead of the planner")
      ->check(strata::tools::nonEmptyPath());
  show->add_option("--collective", o.collective,
                   "the collective to plan: allreduce (a plan of stages), broadcast or reduce "
                   "(the form: flat, tree or sharded), reducescatter or allgather (flat or "
                   "hierarchical)")
      ->check(CLI::IsMember({"allreduce", "broadcast", "reduce", "reducescatter", "allgather"}))
      ->capture_default_str();
  tools::addCostOptions(show, &o);
  tools::addBaselineOptions(show, &o, "nccl when the ranks are GPUs, else none");
  tools::addFormatOption(show, &o);

  CLI::App* simulate =
      app.add_subcommand("simulate", "predicted times of a cluster that is not here, per size");
  tools::setFooter(*simulate, tools::kSimulateFooter);
  tools::addSourceOptions(simulate, &o, /*live=*/false);
  tools::addSizeOptions(simulate, &o);
  tools::addCostOptions(simulate, &o);
  tools::addBaselineOptions(simulate, &o, "nccl when the ranks are GPUs, else flat-ring");
  tools::addFormatOption(simulate, &o);

  CLI::App* validate = app.add_subcommand("validate", "check a plan file against a hierarchy");
  tools::setFooter(*validate, tools::kValidateFooter);
  validate->add_option("--plan-file", o.planFile, "the plan file to check")
      ->required()
      ->check(strata::tools::nonEmptyPath());
  tools::addSourceOptions(validate, &o, /*live=*/true);
  tools::addFormatOption(validate, &o);

  // The short spellings before the tools shared one flag language.
  if (auto rc = strata::tools::refuseRenamedFlags("strata-plan", argc, argv,
                                                  {{"-t", "--topo FILE"},
                                                   {"-i", "--input FILE"},
                                                   {"-n", "--nodes N"},
                                                   {"-r", "--ranks-per-node N"},
                                                   {"-c", "--cluster NxG"},
                                                   {"-f", "--format text|json"},
                                                   {"-p", "--plan-file FILE"}})) {
    return *rc;
  }
  if (auto rc = strata::tools::parseCommandLine(app, argc, argv)) return *rc;
  const Command cmd = show->parsed()       ? Command::kShow
                      : simulate->parsed() ? Command::kSimulate
                                           : Command::kValidate;
  return strata::tools::guardedMain("strata-plan", [&] { return tools::run(cmd, o); });
}
