// The description of one node: what detection finds and what the hierarchy is built from.
//
// Detection goes detect -> description -> hierarchy, as NCCL's topology code does. Every input
// (the live machine through hwloc, a saved hwloc XML, an NCCL topology XML, sysfs, CUDA, NVML)
// fills this same plain, serialisable description; nothing downstream knows where it came from.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"

namespace strata::topo {

// How two devices, or the ranks of a level, talk.
enum class LinkKind {
  kUnknown,
  kLoopback,      // the same device
  kNvlink,        // direct NVLink (count links)
  kNvswitch,      // NVLink through NVSwitches: every GPU pair at full NVLink bandwidth
  kPcie,          // through PCIe switches or a host bridge, without crossing sockets
  kSmp,           // through the inter-socket interconnect (UPI, xGMI, X-Bus)
  kSharedMemory,  // host memory shared by ranks of one socket or node ("shm")
  kInfiniband,
  kRoce,
  kEthernet,
  kEfa,
};

const char* linkKindName(LinkKind kind);  // "nvlink", "pcie", "smp", "infiniband", ...
bool parseLinkKind(const std::string& name, LinkKind* kind);
// Whether `kind` is a network between hosts: infiniband, roce, ethernet or efa.
bool isNetworkLink(LinkKind kind);
// Sorted OS indices as nvidia-smi and the kernel write CPU lists: "0-23,48-71"; "" for none.
std::string formatCpuList(const std::vector<int>& sorted);

// A link's cost in the alpha-beta sense, and where the numbers came from.
struct LinkModel {
  LinkKind kind = LinkKind::kUnknown;
  double bandwidthGBps = 0;  // per direction, GB/s (1e9 bytes/s)
  double latencyUs = 0;
  std::string source;  // "hardware" (read from the device), "default" (the table), "measured"
};

// Where a PCI device hangs.
struct PciPlace {
  std::string busid;                 // "0000:3b:00.0"; empty when unknown
  int package = -1;                  // hwloc logical index of the package above it
  int numa = -1;                     // hwloc logical index of the nearest NUMA node
  std::vector<std::string> bridges;  // PCI bridges from the host bridge down, by busid
  int linkGen = 0;                   // PCIe generation of the device's own link, when known
  int linkWidth = 0;                 // lanes, when known
};

struct Gpu {
  std::string name;    // the model ("Tesla V100-SXM3-32GB") or, failing that, the OS device
  std::string vendor;  // "nvidia", "amd", "intel", ...
  std::string osdev;   // "cuda0", "nvml3", "rsmi0", ... (first one found)
  PciPlace pci;
  int cudaIndex = -1;  // CUDA runtime index when known (honours CUDA_VISIBLE_DEVICES)
  // The CPUs and NUMA nodes near the GPU, by OS index, as nvidia-smi topo -m prints them
  // ("0-23,48-71", "0"); empty when the source does not say. formatCpuList() writes them.
  std::string cpuAffinity;
  std::string numaAffinity;
};

struct Nic {
  std::string name;  // "mlx5_0", "ib0", "eth0", "efa0"
  std::string type;  // "infiniband", "roce", "ethernet", "efa", "unknown"
  PciPlace pci;
  double rateGbps = 0;  // port rate in Gbit/s; 0 when unknown
  std::string state;    // "active", "down", ... when known
  int port = 0;
};

// An NVLink (or NVSwitch path) between two GPUs, by index into NodeTopology::gpus.
struct GpuLink {
  int a = -1, b = -1;
  LinkKind kind = LinkKind::kNvlink;
  int count = 0;             // NVLink lanes (0 for NVSwitch-mediated paths if unknown)
  double bandwidthGBps = 0;  // per direction
  int generation = 0;        // NVLink generation when known
};

struct NodeTopology {
  std::string host;
  std::string source;  // "live", "hwloc xml FILE", "nccl xml FILE", "nvidia-smi FILE"
  int packages = 0;
  int numaNodes = 0;
  int cores = 0;
  std::vector<Gpu> gpus;
  std::vector<Nic> nics;
  std::vector<GpuLink> links;
  int nvswitches = 0;  // NVSwitch devices seen
  // Whether the source can show NVLink at all: nvidia-smi output, an NCCL dump with <gpu>
  // elements, an hwloc XML with an NVLinkBandwidth matrix, NVML. When false, an empty `links`
  // means "not known", not "no NVLink" (a hand-written NCCL file lists PCI class codes only).
  bool nvlinkKnown = false;
  LinkModel interSocket;  // the package-to-package link, when packages > 1

  // The NVLink/NVSwitch link between two GPUs, or nullptr when they have none (gpuPairLink in
  // gpu_matrix.h then falls back to their PCIe/SMP path).
  const GpuLink* nvlinkBetween(int a, int b) const;
};

}  // namespace strata::topo
