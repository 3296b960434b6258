// `nvidia-smi topo -m` output as a NodeTopology: GPUs, NICs, NV# links and each GPU's CPU/NUMA
// affinity. Users paste this output into bug reports; it is the most common topology record.
#pragma once

#include <string>

#include "common/status.h"
#include "topology/gpu_matrix.h"
#include "topology/node_topology.h"

namespace strata::topo {

// GPUs ("GPU0".., cudaIndex = the index nvidia-smi prints, which is NVML's PCI order), NICs,
// NV# links and each GPU's package (distinct "CPU Affinity" ranges numbered in order of
// appearance) and NUMA node ("NUMA Affinity"). A GPU with NV# links to more lanes in total than
// one GPU has (18) reaches its peers through NVSwitches: those links are kNvswitch.
StatusOr<NodeTopology> readNvidiaSmiTopo(const std::string& path);

// The device-by-device table as printed: names in header order (GPUs, then NICs as "NIC0" or
// "mlx5_0", whichever the version prints), cells "X", "NV12", "PIX", "PXB", "PHB", "NODE", "SYS"
// (older versions: "SOC"), and the "NIC0: mlx5_0" legend lines when there is a legend. PCI
// paths are not in the output, so this is the only record of the PCIe/SMP relations.
StatusOr<ConnectionMatrix> readNvidiaSmiMatrix(const std::string& path);

// The same from text in memory; `source` names it in messages. The read* functions read the file
// with readTextFileBounded (no FIFOs, devices, NUL bytes or files over 16 MiB), then call these.
StatusOr<NodeTopology> parseNvidiaSmiTopo(const std::string& text, const std::string& source);
StatusOr<ConnectionMatrix> parseNvidiaSmiMatrix(const std::string& text, const std::string& source);

}  // namespace strata::topo
