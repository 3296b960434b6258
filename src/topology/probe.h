// Probes of the live machine beyond hwloc: InfiniBand ports in sysfs, and the CUDA runtime and
// NVML, both loaded at run time with dlopen (never a link-time dependency). Each probe adds
// what it finds to a NodeTopology and is a no-op where its source is missing.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "topology/node_topology.h"

namespace strata::topo {

// Reads <root>/class/infiniband/<dev>/ports/<n>/{state,rate,link_layer} (root is "/sys" on a
// live machine; tests pass a fake tree). Updates the NIC of the same name, or adds one, with
// its rate, state and type (link layer InfiniBand -> "infiniband", Ethernet -> "roce").
Status probeInfinibandSysfs(const std::string& root, NodeTopology* topo);

// Adds CUDA indices (honouring CUDA_VISIBLE_DEVICES through the runtime) and peer/NVLink facts
// from libcudart and libnvidia-ml when they load and a GPU is visible. Returns ok, having done
// nothing, when no GPU is visible.
Status probeCudaAndNvml(NodeTopology* topo);

// The GPU this process uses (index into topo.gpus), from the CUDA runtime's current device, or
// -1 when there is none.
int currentGpu(const NodeTopology& topo);

// The NIC closest to GPU `gpu` (or, for gpu < 0, to `package`): the fewest PCIe hops, then the
// same NUMA node, then the same package; -1 when the node has no NIC.
// In detail: NICs whose state is known and not "active" are passed over while another NIC is
// usable. For a GPU, the nearest pciRelation wins (PIX before PXB, ..., SYS last), then the
// fewest pciHops, then the same NUMA node, then the same package; for gpu < 0 (or out of range)
// a NIC of `package` wins. Ties go to the lower index.
int closestNic(const NodeTopology& topo, int gpu, int package);

// The pure parts of the probes, exposed for tests.
namespace detail {

// "4: ACTIVE" -> "active"; "" when empty.
std::string parsePortState(const std::string& text);
// "100 Gb/sec (4X EDR)" -> 100; 0 when there is no number.
double parsePortRate(const std::string& text);
// The Nic.type of an RDMA port from its sysfs link_layer, device name and driver.
std::string nicTypeOf(const std::string& linkLayer, const std::string& device,
                      const std::string& driver);

// The index into topo.gpus of the GPU at `busid` (any spelling normalizeBusid accepts), or -1.
int gpuByBusid(const NodeTopology& topo, const std::string& busid);

// Sets cudaIndex from the CUDA runtime's bus ids (cudaBusids[i] is CUDA device i). GPUs not in
// the list are hidden from this process (CUDA_VISIBLE_DEVICES) and get -1. Returns how many CUDA
// devices matched a GPU of the topology.
int applyCudaBusids(const std::vector<std::string>& cudaBusids, NodeTopology* topo);

// What NVML reports for one GPU.
struct NvmlGpu {
  std::string busid;
  std::string name;
  std::vector<std::string> nvlinkRemotes;  // the remote bus id of each active NVLink
};

// Folds NVML's view into `topo`: sets the names of the GPUs it matches by bus id, and adds or
// updates one GpuLink per GPU pair. Links to another GPU of the topology count as kNvlink; links
// to anything else are taken as NVSwitch ports, and two GPUs reaching the same switches get a
// kNvswitch link counting, per shared switch, the fewer of their links to it. A link whose count
// changes loses its bandwidth (the model recomputes it); its generation comes from the GPU
// model when unknown. Sets topo->nvswitches, when zero, to the number of switches shared by two
// or more GPUs. Sets topo->nvlinkKnown when it matched a GPU. Returns the number of GpuLinks added
// or updated.
int applyNvml(const std::vector<NvmlGpu>& gpus, NodeTopology* topo);

}  // namespace detail

}  // namespace strata::topo
