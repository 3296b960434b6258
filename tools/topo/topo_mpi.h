// strata-topo under mpirun: the cluster as the job's ranks see it.
//
// The levels come from the library itself (strataCommInitMPI, strataCommDescribe), so what the
// tool shows is what an application gets. The per-node detail is not in the public API: the
// tool asks the tools interface for the cluster as init gathers it (each host's NodeTopology and
// every rank's place, topology/cluster_exchange.h), from which the same levels can be rebuilt
// (buildClusterHierarchy) for JSON output and --save.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "topo_input.h"
#include "topology/cluster.h"

namespace strata::tools {

struct ClusterView {
  int ranks = 0;
  std::vector<std::string> hosts;                   // by lowest rank
  std::map<std::string, std::vector<int>> ranksOf;  // host -> its ranks, ascending
  std::map<std::string, NodeDescription> nodes;     // host -> as its lowest rank described it
  topo::Cluster cluster;                            // the input buildClusterHierarchy needs
  std::string describeText;                         // strataCommDescribe on rank 0
  std::vector<std::string> warnings;                // detection problems, "host h: ..."
};

// Collective over MPI_COMM_WORLD. Every rank describes its place (STRATA_HOSTNAME or the host
// name, CPU-bound package, current GPU) and the lowest rank of each host describes the host;
// rank 0 gets the view, the other ranks an empty one. Fails on every rank alike.
StatusOr<ClusterView> gatherClusterView();

}  // namespace strata::tools
