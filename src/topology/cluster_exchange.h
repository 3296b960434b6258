// What ranks exchange to learn the cluster they run on, and the description of its own node
// each rank makes for it: the one implementation, which init calls (core/topo_exchange.cc) and
// the tools reach through the tools interface (tools_iface/tools_comm.h), so that a tool shows
// the cluster as a communicator detects it.
//
// The exchange is plain data in two all-gathers, which the caller runs on its control plane
// (this layer knows no bootstrap): first every rank's place (a fixed-size record: host name,
// package of its CPU binding, its GPU's PCI bus id), then one description per host, sent by the
// host's lowest rank (a node's description can be tens of KiB; the other ranks send nothing).
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "topology/cluster.h"
#include "topology/node_topology.h"

namespace strata::topo {

// A source of the node description that could not be read; the description goes on without it.
struct NodeProblem {
  enum class Source { kHwloc, kInfiniband, kCuda };
  Source source = Source::kHwloc;
  std::string message;
};

struct LocalNode {
  NodeTopology topo;  // hwloc, then the InfiniBand sysfs and the CUDA/NVML probes
  int package = -1;   // hwloc package of this process's CPU binding; -1 when unbound or wider
  std::vector<NodeProblem> problems;  // in the order the sources were read
};

// This machine as init sees it. Never fails: what a source cannot read is left out and named in
// `problems` (a machine hwloc cannot read still gets a correct, if coarser, hierarchy), and the
// caller says it as it sees fit. A non-empty `host` replaces the detected host name.
LocalNode describeLocalNode(const std::string& host);

// The two collectives of the exchange, over the caller's control plane: every member's `bytes`
// bytes at `mine` into `all` (member order), and one string per member, in member order.
using AllGatherBytes = std::function<Status(const void* mine, void* all, size_t bytes)>;
using AllGatherStrings = std::function<StatusOr<std::vector<std::string>>(const std::string& mine)>;

struct GatheredCluster {
  Cluster cluster;  // every rank's place, every host's node as its lowest rank described it
  std::vector<std::string> hosts;                            // by their lowest rank
  std::map<std::string, std::vector<NodeProblem>> problems;  // by host, what its describer lacked
};

// Collective: every member of a control plane of `size` members, this one `rank`, passes the
// name it groups by (`host`), its own node and the two collectives; every member gets the same
// cluster. A description that does not parse fails every member alike (they parse the same
// strings).
StatusOr<GatheredCluster> exchangeCluster(int rank, int size, const std::string& host,
                                          const LocalNode& node, const AllGatherBytes& allGather,
                                          const AllGatherStrings& allGatherStrings);

}  // namespace strata::topo
