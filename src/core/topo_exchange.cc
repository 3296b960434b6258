#include "core/topo_exchange.h"

#include <string>

#include "common/log.h"
#include "topology/cluster.h"
#include "topology/cluster_exchange.h"

namespace strata::core {
namespace {

// What this rank could not read of its node, said where it is found. Detection degrades to what
// is known (the host name): a machine hwloc cannot read still gets a correct, if coarser,
// hierarchy.
void logProblems(const topo::LocalNode& node) {
  for (const topo::NodeProblem& p : node.problems) {
    switch (p.source) {
      case topo::NodeProblem::Source::kHwloc:
        STRATA_WARN(kSubsysTopo, "hwloc detection failed (%s); using host names only",
                    p.message.c_str());
        break;
      case topo::NodeProblem::Source::kInfiniband:
        STRATA_INFO(kSubsysTopo, "infiniband probe: %s", p.message.c_str());
        break;
      case topo::NodeProblem::Source::kCuda:
        STRATA_INFO(kSubsysTopo, "cuda/nvml probe: %s", p.message.c_str());
        break;
    }
  }
}

}  // namespace

StatusOr<DetectedHierarchy> detectHierarchy(boot::Bootstrap& boot, const std::string& host,
                                            const std::string& net) {
  const topo::LocalNode node = topo::describeLocalNode(host);
  logProblems(node);
  // The exchange the tools see too (tools_iface/tools_comm.h: gatherCluster).
  STRATA_ASSIGN_OR_RETURN(
      topo::GatheredCluster gathered,
      topo::exchangeCluster(
          boot.rank(), boot.size(), host, node,
          [&boot](const void* mine, void* all, size_t bytes) {
            return boot.allGather(mine, all, bytes);
          },
          [&boot](const std::string& mine) { return boot::allGatherStrings(boot, mine); }));
  STRATA_ASSIGN_OR_RETURN(topo::ClusterHierarchy ch,
                          topo::buildClusterHierarchy(gathered.cluster, "shm", net));
  if (boot.rank() == 0) {
    for (const std::string& d : ch.differences) {
      STRATA_WARN(kSubsysTopo,
                  "heterogeneous cluster: %s (results stay correct; the plan is "
                  "sized for the slowest host)",
                  d.c_str());
    }
  }
  return DetectedHierarchy{std::move(ch.hierarchy), "detected: host names, hwloc, sysfs, CUDA"};
}

}  // namespace strata::core
