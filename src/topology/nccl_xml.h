// NCCL topology XML (the NCCL_TOPO_FILE / NCCL_TOPO_DUMP_FILE format) as a NodeTopology:
// <system> -> <cpu numaid ...> -> <pci busid link_speed link_width> -> <gpu dev sm> ->
// <nvlink target count>, and <nic><net name speed ...>.
#pragma once

#include <string>

#include "common/status.h"
#include "topology/node_topology.h"

namespace strata::topo {

StatusOr<NodeTopology> readNcclTopoXml(const std::string& path);

// Whether the file's root element is NCCL's <system> (else it may be hwloc's <topology>).
bool looksLikeNcclTopoXml(const std::string& path);

}  // namespace strata::topo
