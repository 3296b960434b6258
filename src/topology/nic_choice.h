// Which NIC a GPU (or a package) uses: a pure choice over a NodeTopology, by PCIe distance.
#pragma once

#include "topology/node_topology.h"

namespace strata::topo {

// The NIC closest to GPU `gpu` (or, for gpu < 0, to `package`): the fewest PCIe hops, then the
// same NUMA node, then the same package; -1 when the node has no NIC.
// In detail: NICs whose state is known and not "active" are passed over while another NIC is
// usable. For a GPU, the nearest pciRelation wins (PIX before PXB, ..., SYS last), then the
// fewest pciHops, then the same NUMA node, then the same package; for gpu < 0 (or out of range)
// a NIC of `package` wins. Ties go to the lower index.
int closestNic(const NodeTopology& topo, int gpu, int package);

}  // namespace strata::topo
