// NVLink between GPUs from hwloc's "NVLinkBandwidth" distances matrix.
//
// hwloc's NVML backend writes that matrix over GPUs (NVML OS devices), NVSwitches (PCI devices)
// and, on POWER8/9, the CPU packages that NVLink reaches. Values are unidirectional bandwidths in
// MB/s: 25000 is one V100 link, 40000 two P100 links. The diagonal holds a large self value on
// some machines and is not a link.
#include <hwloc.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <utility>
#include <vector>

#include "topology/hwloc_reader.h"
#include "topology/link_model.h"

namespace strata::topo::detail {
namespace {

constexpr double kMBpsPerGBps = 1000.0;

// The generation of a link between two GPUs; one unknown side does not hide the other's.
int pairGeneration(const Gpu& a, const Gpu& b) {
  int ga = nvlinkGenerationForModel(a.name), gb = nvlinkGenerationForModel(b.name);
  return ga > 0 && gb > 0 ? std::min(ga, gb) : std::max(ga, gb);
}

GpuLink makeLink(const NodeTopology& topo, int a, int b, LinkKind kind, double mbps) {
  GpuLink link;
  link.a = a;
  link.b = b;
  link.kind = kind;
  link.bandwidthGBps = mbps / kMBpsPerGBps;
  link.generation = pairGeneration(topo.gpus[a], topo.gpus[b]);
  double perLink = nvlinkLink(link.generation, 1).bandwidthGBps;
  link.count = std::max(1, static_cast<int>(std::lround(link.bandwidthGBps / perLink)));
  return link;
}

}  // namespace

void hwlocReadNvlinks(hwloc_topology* topo, const HwlocGpuIndex& gpuOf, NodeTopology* out) {
  hwloc_distances_s* dist = nullptr;
  unsigned nr = 1;
  if (hwloc_distances_get_by_name(topo, "NVLinkBandwidth", &nr, &dist, 0) != 0 || nr == 0 ||
      dist == nullptr) {
    return;
  }
  // hwloc's NVML backend writes this matrix whenever it sees NVIDIA GPUs: a GPU absent from it,
  // or present with zeros, has no NVLink.
  out->nvlinkKnown = true;
  const unsigned n = dist->nbobjs;
  // What each row stands for: a GPU (its index), an NVSwitch, or neither (a CPU package).
  std::vector<int> gpuAt(n, -1);
  std::vector<bool> isSwitch(n, false);
  for (unsigned i = 0; i < n; ++i) {
    auto it = gpuOf.find(dist->objs[i]);
    if (it != gpuOf.end()) gpuAt[i] = it->second;
    isSwitch[i] = hwlocIsNvswitch(dist->objs[i]);
  }
  const size_t gpus = out->gpus.size();
  std::map<std::pair<int, int>, double> direct;  // MB/s, a < b
  std::vector<double> toSwitches(gpus, 0);       // MB/s from each GPU into the switches
  for (unsigned i = 0; i < n; ++i) {
    for (unsigned j = 0; j < n; ++j) {
      double mbps = static_cast<double>(dist->values[i * n + j]);
      if (i == j || mbps <= 0 || gpuAt[i] < 0) continue;
      if (isSwitch[j]) {
        toSwitches[gpuAt[i]] += mbps;
      } else if (gpuAt[j] >= 0 && gpuAt[i] < gpuAt[j]) {
        // Both directions are listed; the larger one stands if they ever differ.
        double back = static_cast<double>(dist->values[j * n + i]);
        double& slot = direct[{gpuAt[i], gpuAt[j]}];
        slot = std::max(slot, std::max(mbps, back));
      }
    }
  }
  hwloc_distances_release(topo, dist);

  // Every GPU on the NVSwitch fabric reaches every other one at its own NVLink bandwidth, the
  // smaller of the two ends. That holds across baseboards too: the DGX-2 matrix lists no
  // switch-to-switch trunk, yet its two groups of eight GPUs are connected through it.
  for (int a = 0; a < static_cast<int>(gpus); ++a) {
    for (int b = a + 1; b < static_cast<int>(gpus); ++b) {
      double viaSwitch =
          toSwitches[a] > 0 && toSwitches[b] > 0 ? std::min(toSwitches[a], toSwitches[b]) : 0;
      auto it = direct.find({a, b});
      double mbps = viaSwitch + (it != direct.end() ? it->second : 0);
      if (mbps <= 0) continue;
      out->links.push_back(
          makeLink(*out, a, b, viaSwitch > 0 ? LinkKind::kNvswitch : LinkKind::kNvlink, mbps));
    }
  }
}

}  // namespace strata::topo::detail
