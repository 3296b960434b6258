// One node's description as strata-topo prints it: a tree of what matters to collectives (like
// lstopo's, but only packages, NUMA nodes, GPUs, NICs and the links between them), the
// GPU/NIC connection matrix, and the JSON form.
#pragma once

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "topo_input.h"
#include "topology/node_topology.h"

namespace strata::tools {

// 150 -> "150", 12.5 -> "12.5", 0.35 -> "0.35": numbers as people write them.
std::string formatNumber(double value);

// "0-3, 5, 7-8" for a sorted list of distinct integers.
std::string formatRanges(const std::vector<int>& values);

// The tree: the host and where the description came from; per package its NUMA nodes and the
// GPUs and NICs under each; devices of unknown package under "unplaced"; then the links.
std::string formatNodeTree(const topo::NodeTopology& t);

// The NVLink/NVSwitch links in short: one line per all-to-all NVSwitch domain, one per other
// GPU pair; then the inter-socket link and the NVSwitch count. Each line starts with two spaces.
std::string formatLinks(const topo::NodeTopology& t);

// The file's own matrix when it has one, else the matrix computed from the description; a note
// instead when the node has neither GPUs nor NICs.
std::string formatNodeMatrix(const NodeDescription& node);

// toJson(NodeTopology), with each GPU link's bandwidth filled in from the link model where the
// source did not give one ("bandwidth_source" says which), and the connection matrix.
nlohmann::json nodeJson(const NodeDescription& node);

}  // namespace strata::tools
