// The GPU/NIC connection matrix in the style of `nvidia-smi topo -m`.
//
// The codes mean what nvidia-smi's legend says:
//   X     the device itself
//   NV#   a bonded set of # NVLinks
//   PIX   at most a single PCIe bridge
//   PXB   multiple PCIe bridges, without the PCIe host bridge
//   PHB   PCIe and a PCIe host bridge (typically the CPU)
//   NODE  PCIe and the interconnect between PCIe host bridges within a NUMA node
//   SYS   PCIe and the SMP interconnect between NUMA nodes (QPI/UPI, xGMI)
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
//   kPix   also: two functions of one device (same domain, bus and device);
//   kPix   the chains share a bridge and neither device is more than one bridge below the
//          deepest shared one (both behind one switch, or one root port);
//   kPxb   they share a bridge, and one device is deeper (nested switches);
//   kPhb   no shared bridge, same host bridge;
//   kNode  no shared host bridge, same NUMA node (known) or same package (NUMA unknown);
//   kSys   different NUMA nodes (or packages, when NUMA nodes are unknown), or nothing known.
// NUMA nodes decide, as in nvidia-smi's legend ("between NUMA nodes"): two NUMA nodes of one
// socket (AMD NPS, Intel SNC) are SYS apart, like two sockets.
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
  // Per row, nvidia-smi's "CPU Affinity" and "NUMA Affinity" columns: "0-23,48-71" and "0", or
  // "N/A" for a GPU row whose source does not say; "" for NIC rows. Empty vectors: no columns
  // (a matrix without GPUs).
  std::vector<std::string> cpuAffinity;
  std::vector<std::string> numaAffinity;
};

// GPUs then NICs, as nvidia-smi prints them. GPU pairs with a listed NVLink or NVSwitch link
// show "NV<count>" ("NV" alone when the count is unknown); the rest show pciRelation's name.
// The NIC legend names each NIC ("NIC0: mlx5_0"), or says what is known of an unnamed one
// ("NIC0: unknown (efa, pci 0000:10:1b.0)"). GPU rows carry their affinity columns.
ConnectionMatrix connectionMatrix(const NodeTopology& topo);
// The matrix as aligned text, a header row then one row per device (with "CPU Affinity" and
// "NUMA Affinity" columns when there are GPUs), followed by the legend of the path names and,
// when there are NICs, "NIC Legend:" with m.legend.
std::string formatMatrix(const ConnectionMatrix& m);
// The NIC legend entry of nic `index`: "NIC0: mlx5_0", else "NIC0: unknown (type, pci busid)".
std::string nicLegendEntry(int index, const Nic& nic);
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
