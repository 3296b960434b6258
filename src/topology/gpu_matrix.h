// The GPU/NIC connection matrix in the style of `nvidia-smi topo -m`.
//
//   X     the device itself
//   NV#   a path over # bonded NVLinks
//   PIX   at most one PCIe bridge
//   PXB   several PCIe bridges, without a host bridge
//   PHB   through a PCIe host bridge (the CPU)
//   NODE  through host bridges within one NUMA node
//   SYS   across the inter-socket (SMP) interconnect
#pragma once

#include <string>
#include <vector>

#include "topology/node_topology.h"

namespace strata::topo {

enum class PathType { kSelf, kNvlink, kPix, kPxb, kPhb, kNode, kSys };

struct Relation {
  PathType type = PathType::kSys;
  int nvlinks = 0;  // for kNvlink
};

// The PCIe/SMP relation of two places (no NVLink considered).
//
// PciPlace.bridges lists the PCI-to-PCI bridges above a device by busid, from the one nearest
// the host bridge down (root port, switch upstream port, switch downstream port, ...). Host
// bridges have no busid: a reader may name one as a first entry that is not a busid (such as
// "0000:3a" or "hostbridge0"), and otherwise it is taken to be the domain:bus the top bridge (or
// the device, when there is none) sits on, which is the host bridge's root bus. Then:
//   kSelf  the same busid;
//   kPix   the chains share a bridge and neither device is more than one bridge below the
//          deepest shared one (both behind one switch, or one root port);
//   kPxb   they share a bridge, and one device is deeper (nested switches);
//   kPhb   no shared bridge, same host bridge;
//   kNode  no shared host bridge, same package (known) or same NUMA node (package unknown).
//          nvidia-smi reports NODE for two NUMA nodes of one socket (AMD NPS, Intel SNC), since
//          no inter-socket link is crossed;
//   kSys   different packages (or NUMA nodes, when packages are unknown), or nothing known.
Relation pciRelation(const PciPlace& a, const PciPlace& b);

// The number of bridges between two devices through the deepest bridge their chains share
// (0 when both sit directly below it), or -1 when they share none.
int pciHops(const PciPlace& a, const PciPlace& b);

// Whether `text` is a PCI bus id, "[domain:]bus:device.function" in hex.
bool isBusid(const std::string& text);

// A bus id in the one form used for comparisons: lowercase "dddd:bb:dd.f", whether it was
// written with a 4- or 8-digit domain (CUDA, NVML) or none. Text that is not a bus id comes back
// lowercased.
std::string normalizeBusid(const std::string& busid);

struct ConnectionMatrix {
  std::vector<std::string> names;               // "GPU0".., then "NIC0"..
  std::vector<std::vector<std::string>> cells;  // "X", "NV12", "PIX", ...
  std::vector<std::string> legend;              // "NIC0: mlx5_0", ...
};

// GPUs then NICs, as nvidia-smi prints them. GPU pairs with a listed NVLink or NVSwitch link
// show "NV<count>" ("NV" alone when the count is unknown); the rest show pciRelation's name.
ConnectionMatrix connectionMatrix(const NodeTopology& topo);
// The matrix as aligned text, a header row then one row per device, followed by the legend of
// the path names and, when there are NICs, "NIC Legend:" with m.legend.
std::string formatMatrix(const ConnectionMatrix& m);
// "X", "PIX", "PXB", "PHB", "NODE", "SYS"; "NV" + nvlinks for kNvlink.
std::string pathTypeName(const Relation& relation);

// The link two GPUs of `topo` talk over (NVLink/NVSwitch, else PCIe or SMP), with its model:
//   NVLink/NVSwitch: the link's own bandwidth when listed, else nvlinkLink() of its generation
//     (or the GPU model's) and count;
//   PIX..NODE: pcieLink() of the slower of the two devices' own links;
//   SYS: smpLink(), capped at that PCIe bandwidth, its latency added to the PCIe latency.
// a == b gives kLoopback with zero latency and bandwidth (nothing moves); an index out of range
// gives kUnknown.
LinkModel gpuPairLink(const NodeTopology& topo, int a, int b);

}  // namespace strata::topo
