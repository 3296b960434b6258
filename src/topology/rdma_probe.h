// The probe of RDMA ports in sysfs (InfiniBand, RoCE, EFA): what hwloc does not say about a
// NIC (its ports, their state, rate and link layer). A no-op where the sysfs tree is missing.
#pragma once

#include <string>

#include "common/status.h"
#include "topology/node_topology.h"

namespace strata::topo {

// Reads <root>/class/infiniband/<dev>/ports/<n>/{state,rate,link_layer} (root is "/sys" on a
// live machine; tests pass a fake tree). Updates the NIC of the same name, or adds one, with
// its rate, state and type (link layer InfiniBand -> "infiniband", Ethernet -> "roce").
Status probeInfinibandSysfs(const std::string& root, NodeTopology* topo);

// The pure parts of the probe, exposed for tests.
namespace detail {

// "4: ACTIVE" -> "active"; "" when empty.
std::string parsePortState(const std::string& text);
// "100 Gb/sec (4X EDR)" -> 100; 0 when there is no number.
double parsePortRate(const std::string& text);
// The Nic.type of an RDMA port from its sysfs link_layer, device name and driver.
std::string nicTypeOf(const std::string& linkLayer, const std::string& device,
                      const std::string& driver);

}  // namespace detail

}  // namespace strata::topo
