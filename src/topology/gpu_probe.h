// The probe of the GPUs through the CUDA runtime and NVML, both loaded at run time with dlopen
// (never a link-time dependency): CUDA indices, names, NVLinks and NVSwitches, and the GPU
// this process uses. A no-op where the libraries or a GPU are missing.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "topology/node_topology.h"

namespace strata::topo {

// Adds CUDA indices (honouring CUDA_VISIBLE_DEVICES through the runtime) and peer/NVLink facts
// from libcudart and libnvidia-ml when they load and a GPU is visible. Returns ok, having done
// nothing, when no GPU is visible.
Status probeCudaAndNvml(NodeTopology* topo);

// The GPU this process uses (index into topo.gpus), from the CUDA runtime's current device, or
// -1 when there is none.
int currentGpu(const NodeTopology& topo);

// The pure parts of the probe, exposed for tests.
namespace detail {

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
