// Builds the detected hierarchy collectively: every rank describes where it runs, one rank per
// host describes the host, and all ranks build the same cluster hierarchy from the exchange.
#pragma once

#include <string>

#include "bootstrap/bootstrap.h"
#include "common/status.h"
#include "topology/hierarchy.h"

namespace strata::core {

struct DetectedHierarchy {
  topo::Hierarchy hierarchy;
  std::string source;  // "detected: host names, hwloc, sysfs, CUDA"
};

// Collective over `boot`. `host` is the name this rank groups by (STRATA_HOSTNAME or its own);
// `net` the fabric of the levels that span hosts (fabrics/registry.h: netFabric).
StatusOr<DetectedHierarchy> detectHierarchy(boot::Bootstrap& boot, const std::string& host,
                                            const std::string& net);

}  // namespace strata::core
