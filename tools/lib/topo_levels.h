// The levels strata builds for a cluster, shared by strata-topo's local mode (an imagined cluster
// of identical nodes) and its cluster mode (the ranks of an mpirun job), and the topology file
// (STRATA_TOPO_FILE) that records them.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "common/status.h"
#include "topology/cluster.h"
#include "topology/hierarchy.h"
#include "topology/node_topology.h"

namespace strata::tools {

// One rank per GPU; on a node without GPUs one per package; else 1.
int defaultRanksPerNode(const topo::NodeTopology& node);

// `nodes` copies of `node` with `ranksPerNode` ranks each, numbered node by node. Rank i of a
// node uses GPU i % ngpus and is bound to that GPU's package; on a node without GPUs it is bound
// to package i * packages / ranksPerNode, so consecutive ranks fill one package before the next
// (as mpirun --map-by slot places them).
topo::Cluster imaginedCluster(const topo::NodeTopology& node, int nodes, int ranksPerNode);

// What strata-topo reports about the levels, in every mode.
struct LevelsReport {
  topo::Hierarchy hierarchy;
  std::vector<std::string> differences;  // between hosts, from buildClusterHierarchy
  std::string source;  // where the hierarchy came from, in user terms: "from nccl xml F; one
                       // node", "from the ranks' host names (2 hosts) and each host's ...",
                       // "topology file F"
};

// The levels strataCommInitMPI detects for `cluster`: buildClusterHierarchy(cluster, "shm", net),
// net the inter-host engine STRATA_NET names (ucx by default), as the communicator runs them.
// Fails as strataCommInitMPI would on a malformed STRATA_* setting.
StatusOr<LevelsReport> levelsOfCluster(const topo::Cluster& cluster);

// The levels strataCommInitMPI takes from a topology file for `nranks` ranks.
StatusOr<LevelsReport> levelsOfTopoFile(const std::string& path, int nranks);

// One line per level: name, group sizes, number of groups, link kind, bandwidth, latency, link
// sharing and source; then the differences between hosts.
std::string formatLevels(const LevelsReport& report);

// Adds "hierarchy" (Hierarchy::describe), "levels" (levelsToJson), "differences" and
// "levels_source" to `out`.
void addLevelsJson(const LevelsReport& report, nlohmann::json* out);

// A topology file gives rank r the coordinate (r / (size[0] * .. * size[l-1])) % size[l] at
// level l: it describes jobs whose ranks fill each group in rank order (node by node, socket by
// socket: mpirun --map-by slot or core, not --map-by node or socket). Returns the first rank of `h`
// placed otherwise, or -1 when none is (always -1 for an irregular hierarchy, which no file
// describes).
int firstRankOutOfOrder(const topo::Hierarchy& h);

// Writes `h` to `path` as a topology file that STRATA_TOPO_FILE accepts (sizes: the width of each
// level; levels with their fabric and link), then reads it back and checks that it gives the
// same levels. An irregular hierarchy cannot be written: invalid argument.
Status saveTopoFile(const topo::Hierarchy& h, const std::string& path);

}  // namespace strata::tools
