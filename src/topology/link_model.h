// The link model: bandwidth and latency per kind of link, from the hardware where it says so
// and from a small documented default table where it does not. Pure functions.
#pragma once

#include <string>

#include "topology/node_topology.h"

namespace strata::topo {

// PCIe of generation `gen` (1..6) and `width` lanes; unknown gen/width assume gen3 x16.
// The source is "hardware" only when both are known.
LinkModel pcieLink(int gen, int width);
// `count` NVLink lanes of `generation` (1..5; 0 = unknown, assumes 2). A count of 0 (unknown, as
// for NVSwitch paths) means every link of that generation's GPU (V100 6, A100 12, H100 18, ...).
LinkModel nvlinkLink(int generation, int count);
// The NVLink generation of a GPU model name ("Tesla V100-SXM2-16GB" -> 2, "A100" -> 3,
// "H100"/"H200" -> 4, "B200" -> 5, "P100" -> 1); 0 when unknown.
int nvlinkGenerationForModel(const std::string& model);
// The package-to-package interconnect.
LinkModel smpLink();
// Ranks sharing host memory (same socket, no GPU).
LinkModel sharedMemoryLink();
// A network port of `kind` at `rateGbps` (0 = unknown: a documented default per kind). Kinds
// other than the four network ones get Ethernet's numbers.
LinkModel networkLink(LinkKind kind, double rateGbps);

}  // namespace strata::topo
