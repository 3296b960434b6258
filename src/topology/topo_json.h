// NodeTopology and Hierarchy as JSON (nlohmann-json): what ranks exchange at init, what
// `strata-topo --format json` prints, and, converted, what `--format yaml` prints.
#pragma once

#include <nlohmann/json.hpp>
#include <string>

#include "common/status.h"
#include "topology/hierarchy.h"
#include "topology/node_topology.h"

namespace strata::topo {

nlohmann::json toJson(const NodeTopology& topo);
nlohmann::json toJson(const LinkModel& link);
// The levels of a hierarchy: name, fabric, link, group sizes.
nlohmann::json levelsToJson(const Hierarchy& h);

// Reads back what toJson(NodeTopology) wrote. Unknown keys are ignored (newer writers).
StatusOr<NodeTopology> nodeTopologyFromJson(const std::string& text);

// Block-style YAML of any JSON value (for --format yaml).
std::string jsonToYaml(const nlohmann::json& value);

}  // namespace strata::topo
