#include "plan_baseline.h"

#include <cstdio>
#include <numeric>

#include "decompose/planner.h"

namespace strata::tools {
namespace {

namespace nccl = plan::nccl;

// A ring over every level at once on `fabric` ("" = the outer level's own): one stage.
plan::Plan ringOverAll(const topo::Hierarchy& h, const std::string& fabric) {
  plan::Plan p;
  p.name = fabric.empty() ? "flat-ring" : fabric + "-ring";
  plan::Stage s;
  s.levels.resize(h.numLevels());
  std::iota(s.levels.begin(), s.levels.end(), 0);
  s.fabric = fabric;
  s.algorithm = plan::Algorithm::kRing;
  p.stages.push_back(s);
  return p;
}

std::string gbps(double x) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%g GB/s", x);
  return buf;
}

std::string graphText(const nccl::Graph& g) {
  return std::to_string(g.channels) + " channels x " + gbps(g.bwInter);
}

StatusOr<Baseline> ncclBaseline(const Target& t, const BaselineOptions& o) {
  Baseline b;
  b.kind = "nccl";
  std::string gpuText = !o.gpu.empty() ? o.gpu : t.gpu;
  if (gpuText.empty()) {
    gpuText = "ampere";
    b.notes.push_back(
        "the GPU generation is not given (--gpu, or the topology file's gpu: "
        "key): NCCL's constants for ampere are used");
  }
  nccl::Gpu gpu;
  if (!nccl::parseGpu(gpuText, &gpu)) {
    return invalidUsage("--gpu '" + gpuText + "': volta, ampere, hopper or blackwell");
  }
  const std::string cpuText = !o.cpu.empty() ? o.cpu : t.cpu.empty() ? "intel" : t.cpu;
  nccl::Cpu cpu;
  if (!nccl::parseCpu(cpuText, &cpu)) return invalidUsage("--cpu '" + cpuText + "': intel or amd");
  StatusOr<nccl::Hardware> hw = nccl::hardwareOf(t.hierarchy, gpu, cpu);
  if (!hw.isOk()) return hw.status().withContext("--baseline nccl");
  b.system = nccl::systemFor(hw.value());
  const nccl::System& s = b.system;
  b.description = std::string(
                      "NCCL's choice by its own cost model (NCCL 2.30.7, ring, tree and "
                      "PAT; no CollNet or NVLS): ") +
                  nccl::gpuName(gpu) + " GPUs, " + cpuText + " CPUs, " + std::to_string(s.nodes) +
                  " node" + (s.nodes == 1 ? "" : "s") + " of " + std::to_string(s.ranks / s.nodes) +
                  " GPUs, " + (s.nvlink ? "NVLink" : "PCIe") + " inside; ring " +
                  graphText(s.ring) +
                  (s.nodes == 2 && s.tree.bwIntra != s.ring.bwIntra
                       ? ", the tree's intra-node channels " + gbps(s.tree.bwIntra)
                       : "");
  for (std::string& n : publishedNotes(t.published, s)) b.notes.push_back(std::move(n));
  return b;
}

}  // namespace

StatusOr<Baseline> makeBaseline(const Target& t, const BaselineOptions& o, bool simulate) {
  std::string kind = o.kind;
  if (kind.empty()) kind = t.gpus ? "nccl" : simulate ? "flat-ring" : "none";
  if ((!o.gpu.empty() || !o.cpu.empty()) && kind != "nccl") {
    return invalidUsage("--gpu and --cpu describe the GPUs for --baseline nccl");
  }
  if (kind == "nccl") return ncclBaseline(t, o);
  Baseline b;
  // Published figures are NCCL's: only its model's baseline compares with them.
  if (!t.published.empty()) {
    b.notes.push_back("the topology file records measured NCCL figures (line " +
                      std::to_string(t.published.front().line) +
                      "); --baseline nccl compares them with NCCL's cost model");
  }
  if (kind == "none") return b;
  b.kind = kind;
  b.description = kind == "flat-ring"
                      ? "one ring allreduce over every rank on the outer level's fabric"
                      : "one ring allreduce over every rank through MPI";
  return b;
}

BaselinePoint baselineAt(const Baseline& b, const topo::Hierarchy& h, double bytes,
                         const plan::CostParams& params) {
  if (b.kind == "nccl") {
    const nccl::Choice c = nccl::choose(b.system, nccl::Func::kAllReduce, bytes);
    return {c.us, std::string(nccl::algoName(c.algo)) + "/" + nccl::protoName(c.proto)};
  }
  if (b.kind.empty()) return {};
  const plan::Plan p = ringOverAll(h, b.kind == "mpi-ring" ? "mpi" : "");
  return {plan::predict(h, p, bytes, params).totalUs, plan::describePlan(h, p)};
}

}  // namespace strata::tools
