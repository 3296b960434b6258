// The cluster: every rank's place and every host's NodeTopology, and the hierarchy built from
// them. Pure: ranks exchange the inputs at init (src/core), and tools and tests can build the
// hierarchy of a cluster that is not here from fixture files.
//
// Levels, innermost first, each kept only where it separates something:
//   nvlink   ranks whose GPUs are joined by NVLink/NVSwitch (a connected component on a host);
//   socket   ranks bound inside one package, when no NVLink level applies (GPU traffic over
//            NVLink does not care about sockets);
//   node     ranks on one host;
//   network  every rank.
// Each level carries the link its groups talk over: the slowest among its groups, so the cost
// model never promises more than the worst group delivers.
#pragma once

#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "topology/hierarchy.h"
#include "topology/node_topology.h"

namespace strata::topo {

struct RankPlace {
  std::string host;
  int package = -1;      // package of the CPU binding; -1 when unbound or wider
  std::string gpuBusid;  // PCI bus id of the GPU the rank uses; empty for host-only ranks
};

struct Cluster {
  std::vector<RankPlace> ranks;               // by rank
  std::map<std::string, NodeTopology> hosts;  // by host name; a host may be missing (then
                                              // nothing is known of it beyond its ranks)
  // How the ranks were placed, for people: empty when each rank named its own host (an MPI
  // job), else e.g. "4 identical nodes assumed (--nodes)" for a cluster made up by a tool.
  std::string origin;
};

struct ClusterHierarchy {
  Hierarchy hierarchy;
  // Differences between hosts (heterogeneous clusters), one line each, e.g.
  // "host b has 4 GPUs, host a has 8". The hierarchy stays correct; they cost speed.
  std::vector<std::string> differences;
};

// Builds the levels above: the levels inside a host (nvlink, socket, node) run on `hostFabric`,
// the network level on `networkFabric`.
StatusOr<ClusterHierarchy> buildClusterHierarchy(const Cluster& cluster,
                                                 const std::string& hostFabric,
                                                 const std::string& networkFabric);

// The index of the GPU with `busid` in `topo`, or -1. Bus ids compare case-insensitively and
// ignore the width of the PCI domain ("0000:3b:00.0" equals "00000000:3B:00.0").
int gpuByBusid(const NodeTopology& topo, const std::string& busid);

}  // namespace strata::topo
