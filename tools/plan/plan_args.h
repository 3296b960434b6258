// strata-plan's argument syntax: message sizes, size sweeps, link specs and the "NODESxGPUS"
// cluster shorthand of `simulate`. Pure parsing; messages name the option and say what it wants.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "common/status.h"
#include "topology/hierarchy.h"
#include "topology/node_topology.h"

namespace strata::tools {

// The most ranks strata-plan builds a hierarchy for: a topology file's own limit on a level.
constexpr long long kMaxPlanRanks = 1 << 20;

// A message size as plan files write one: decimal digits with an optional binary suffix (K, KiB,
// M, MiB, G, GiB; "64M", "1200000000", "4 KiB"). `option` names the flag in messages.
StatusOr<size_t> parseByteSize(const std::string& text, const std::string& option);

// A list of sizes: comma-separated items, each a size or a sweep FIRST:LAST[:STEP] whose STEP
// is xF (multiply by the integer F >= 2; the default is x2) or +N (add the size N). A sweep
// holds every size from FIRST up to LAST that the steps reach. Sizes come out ascending,
// duplicates removed.
StatusOr<std::vector<size_t>> parseSizeList(const std::string& text, const std::string& option);

// "4 KiB", "1.12 GiB", "1001 MiB", "17 B": a size for people (binary units, about 3
// significant digits).
std::string formatBytes(double bytes);
// A time for people, from microseconds: "0.85 us", "12.35 ms", "1.234 s" (4 significant digits).
std::string formatTime(double us);

// KIND:GBps or KIND:LANESxGBps, e.g. "nvlink:150", "ib:4x25". KIND is a link kind
// (linkKindName) or a short name: ib, eth.
struct LinkSpec {
  topo::LinkKind kind = topo::LinkKind::kUnknown;
  double laneGBps = 0;  // per lane (per NIC on the network)
  int lanes = 0;        // 0: not given
};
StatusOr<LinkSpec> parseLinkSpec(const std::string& text, const std::string& option);

// What `--cluster NODESxGPUS` and its link options describe.
struct SimulatedCluster {
  std::string shape;                 // "24x8"
  std::string intra = "nvlink:150";  // the link between the GPUs of one node
  std::string inter = "ib:4x25";     // each node's NICs
  bool interGiven = false;           // false: --nics replaces the default's NIC count
  double intraLatencyUs = 1;
  double interLatencyUs = 2;
  int nics = 0;  // NICs per node; 0: the LANES of `inter`, else 1
};

// The regular two-level hierarchy of a simulated cluster: level "node" (GPUs of one node, on the
// intra link; LANES there are links per GPU, bandwidth LANES x GBps) and level "network" (every
// node, on one NIC of GBps each, linkSharing = ceil(GPUS / NICs) ranks per NIC). A level whose
// groups have one member is dropped, as strataCommInitMPI drops it.
StatusOr<topo::Hierarchy> simulatedHierarchy(const SimulatedCluster& c);

}  // namespace strata::tools
