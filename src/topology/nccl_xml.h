// NCCL topology XML (the NCCL_TOPO_FILE / NCCL_TOPO_DUMP_FILE format) as a NodeTopology:
// <system> -> <cpu numaid ...> -> <pci busid link_speed link_width> -> <gpu dev sm> ->
// <nvlink target count>, and <nic><net name speed ...>.
#pragma once

#include <string>

#include "common/status.h"
#include "topology/node_topology.h"

namespace strata::topo {

// Reads the file with readTextFileBounded (no FIFOs, devices, NUL bytes or files over 16 MiB).
StatusOr<NodeTopology> readNcclTopoXml(const std::string& path);
// The same from text in memory; `source` names it in messages.
StatusOr<NodeTopology> parseNcclTopoXml(const std::string& text, const std::string& source);

// Whether the file's (or the text's) root element is NCCL's <system> (else it may be hwloc's
// <topology>).
bool looksLikeNcclTopoXml(const std::string& path);
bool isNcclTopoXmlText(const std::string& text);

}  // namespace strata::topo
