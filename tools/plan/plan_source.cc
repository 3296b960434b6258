#include "plan_source.h"

#include <mpi.h>

#include <memory>
#include <utility>

#include "common/text_file.h"
#include "strata/strata_mpi.h"
#include "tools_iface/tools_comm.h"
#include "tools_iface/tools_inputs.h"
#include "topo_input.h"
#include "topo_levels.h"
#include "topology/link_model.h"
#include "topology/topo_file.h"
#include "world_comm.h"

namespace strata::tools {
namespace {

// The levels whose link the cost model has to guess, named in one note: their predictions say
// little about real hardware, and it explains why plans over them tie.
void noteUnknownLinks(Target* t) {
  std::string names;
  const topo::Hierarchy& h = t->hierarchy;
  for (int l = 0; l < h.numLevels(); ++l) {
    // A lone rank's level moves nothing, so its link does not matter.
    if (h.level(l).link.bandwidthGBps > 0 || h.maxChildren(l) <= 1) continue;
    names += (names.empty() ? "" : ", ") + h.level(l).name;
  }
  if (names.empty()) return;
  t->notes.push_back("no bandwidth is known for level(s) " + names +
                     ": the cost model prices each as the same slow default link, so plans "
                     "that differ only in how they group those levels cost alike (give "
                     "link, bandwidth_GBps and latency_us in the topology file)");
}

StatusOr<Target> fromTopoFile(const std::string& path) {
  STRATA_ASSIGN_OR_RETURN(topo::TopoFile file,
                          topo::loadTopoFile(path, tools_iface::fabricNames()));
  long long ranks = 1;
  for (int s : file.sizes) {
    ranks *= s;
    if (ranks > kMaxPlanRanks) {
      return invalidArgument("topology file " + path + ": its level sizes multiply to more than " +
                             std::to_string(kMaxPlanRanks) + " ranks");
    }
  }
  STRATA_ASSIGN_OR_RETURN(topo::Hierarchy h,
                          topo::hierarchyFromTopoFile(file, path, static_cast<int>(ranks)));
  Target t;
  // As strataCommInitMPI does: a level whose groups have one child moves nothing.
  t.hierarchy = h.withoutTrivialLevels();
  t.source = "topology file " + path;
  t.gpus = !file.gpu.empty();
  t.gpu = file.gpu;
  t.cpu = file.cpu;
  // The figures live in comments, which the YAML loader drops: read the text once more.
  STRATA_ASSIGN_OR_RETURN(std::string text, readTextFileBounded(path));
  STRATA_ASSIGN_OR_RETURN(t.published, parsePublished(text, path));
  return t;
}

StatusOr<Target> fromNodeFile(const SourceOptions& o) {
  STRATA_ASSIGN_OR_RETURN(NodeDescription node, readNodeFile(o.input));
  const int perNode = o.ranksPerNode > 0 ? o.ranksPerNode : defaultRanksPerNode(node.topo);
  if (static_cast<long long>(o.nodes) * perNode > kMaxPlanRanks) {
    return invalidUsage("--nodes x --ranks-per-node is " +
                        std::to_string(static_cast<long long>(o.nodes) * perNode) +
                        " ranks; at most " + std::to_string(kMaxPlanRanks));
  }
  StatusOr<LevelsReport> levels = levelsOfCluster(imaginedCluster(node.topo, o.nodes, perNode));
  if (!levels.isOk()) {
    return levels.status().withContext("cannot build the levels of " + o.input);
  }
  const std::string how = o.ranksPerNode > 0        ? ""
                          : !node.topo.gpus.empty() ? " (one per GPU)"
                          : node.topo.packages > 0  ? " (one per package)"
                                                    : "";
  Target t;
  t.hierarchy = levels.value().hierarchy;
  t.source = std::to_string(o.nodes) + " node" + (o.nodes == 1 ? "" : "s") + " of " +
             node.topo.source + ", " + std::to_string(perNode) + " rank" +
             (perNode == 1 ? "" : "s") + " each" + how;
  for (const std::string& d : levels.value().differences) t.notes.push_back(d);
  t.gpus = !node.topo.gpus.empty();
  if (t.gpus) {
    // The generation from the first GPU's model, by its NVLink generation (2: V100, 3: A100,
    // 4: H100/H200, 5: B200); unknown models leave it to --gpu.
    static const char* kByNvlink[] = {"", "volta", "volta", "ampere", "hopper", "blackwell"};
    const int gen = topo::nvlinkGenerationForModel(node.topo.gpus.front().name);
    if (gen > 0 && gen <= 5) t.gpu = kByNvlink[gen];
  }
  return t;
}

StatusOr<Target> fromSimulatedCluster(const SimulatedCluster& c) {
  StatusOr<topo::Hierarchy> h = simulatedHierarchy(c);
  // Everything here comes from the command line, so any problem is the user's usage.
  if (!h.isOk()) return invalidUsage(h.status().message());
  Target t;
  t.hierarchy = h.take();
  t.gpus = true;
  // --nics replaces the NIC count of the default --inter; say so rather than show both counts.
  t.source = "simulated cluster " + c.shape + ": intra " + c.intra + ", inter " + c.inter +
             (c.nics > 0 && !c.interGiven ? " (default)" : "") +
             (c.nics > 0 ? ", " + std::to_string(c.nics) + " NICs per node" : "");
  return t;
}

}  // namespace

Status checkSource(const SourceOptions& o, bool allowLive) {
  const int given = !o.topo.empty() + !o.input.empty() + !o.cluster.shape.empty() + o.live;
  const std::string choices = allowLive
                                  ? "--topo FILE, --input FILE, --cluster NODESxGPUS or --live"
                                  : "--topo FILE, --input FILE or --cluster NODESxGPUS";
  if (o.live && !allowLive) {
    return invalidUsage(
        "--live is not available here: this command predicts clusters that are "
        "not here; give " +
        choices);
  }
  if (given == 0) return invalidUsage("say which hierarchy to plan for: give " + choices);
  if (given > 1) return invalidUsage("give only one of " + choices);
  if (o.input.empty() && (o.nodes != 1 || o.ranksPerNode != 0)) {
    return invalidUsage("--nodes and --ranks-per-node go with --input");
  }
  return Status::ok();
}

StatusOr<Target> loadTarget(const SourceOptions& o) {
  StatusOr<Target> t = !o.topo.empty()    ? fromTopoFile(o.topo)
                       : !o.input.empty() ? fromNodeFile(o)
                                          : fromSimulatedCluster(o.cluster);
  if (t.isOk()) noteUnknownLinks(&t.value());
  return t;
}

LiveJob::LiveJob() {
  MPI_Init(nullptr, nullptr);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank_);
  MPI_Comm_size(MPI_COMM_WORLD, &size_);
}

LiveJob::~LiveJob() {
  // Collective: every rank reaches it, rank 0 after it has printed.
  if (comm_ != nullptr) strataCommDestroy(comm_);
  MPI_Finalize();
}

Status LiveJob::initComm() {
  STRATA_ASSIGN_OR_RETURN(comm_, tools::worldComm());
  return Status::ok();
}

Target LiveJob::target() const {
  const std::unique_ptr<tools_iface::ToolsComm> impl = tools_iface::toolsCommOf(comm_);
  Target t;
  t.hierarchy = impl->hierarchy();
  t.source = "this job: " + std::to_string(size_) + " rank" + (size_ == 1 ? "" : "s") +
             " of MPI_COMM_WORLD, " + impl->hierarchySource();
  t.live = true;
  t.commRules = impl->planRules();
  t.commBlocks = impl->blockRules();
  t.commPlanSource = impl->planSource();
  t.commParams = impl->costParams();
  noteUnknownLinks(&t);
  return t;
}

}  // namespace strata::tools
