// The CUDA runtime and NVML, both loaded at run time with dlopen (never a link-time
// dependency): which GPUs this process sees, and their NVLinks.
//
// The CUDA and NVML parts are a thin shell that copies what the libraries report into plain
// lists (bus ids, NVLink remote ends); everything that decides what those lists mean is in the
// detail:: functions, which tests exercise without a GPU.
#include "topology/gpu_probe.h"

#include <dlfcn.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <utility>

#include "common/log.h"
#include "topology/gpu_matrix.h"
#include "topology/link_model.h"

namespace strata::topo {
namespace {

// Adds the link a-b or updates the one listed. Returns whether anything changed.
bool upsertLink(int a, int b, LinkKind kind, int count, NodeTopology* topo) {
  if (a > b) std::swap(a, b);
  int generation = nvlinkGenerationForModel(topo->gpus[a].name);
  for (GpuLink& link : topo->links) {
    if (!((link.a == a && link.b == b) || (link.a == b && link.b == a))) continue;
    bool changed = link.kind != kind || link.count != count;
    // A bandwidth measured for another count no longer holds; the model recomputes it.
    if (link.count != count) link.bandwidthGBps = 0;
    link.kind = kind;
    link.count = count;
    if (link.generation <= 0 && generation > 0) {
      link.generation = generation;
      changed = true;
    }
    return changed;
  }
  GpuLink link;
  link.a = a;
  link.b = b;
  link.kind = kind;
  link.count = count;
  link.generation = generation;
  topo->links.push_back(link);
  return true;
}

// The CUDA runtime entry points we use, with cudaError_t and enums as plain ints (0 = success).
struct CudaRuntime {
  std::string library;  // the name that loaded; empty when none did
  int (*getDeviceCount)(int* count) = nullptr;
  int (*deviceGetPciBusId)(char* busid, int length, int device) = nullptr;
  int (*deviceGetP2PAttribute)(int* value, int attr, int src, int dst) = nullptr;
  int (*deviceCanAccessPeer)(int* can, int device, int peer) = nullptr;
  int (*getDevice)(int* device) = nullptr;
};

constexpr int kCudaDevP2PAttrPerformanceRank = 1;  // cudaDevP2PAttrPerformanceRank

template <typename Fn>
bool resolve(void* handle, const char* name, Fn* fn) {
  *fn = reinterpret_cast<Fn>(dlsym(handle, name));
  return *fn != nullptr;
}

CudaRuntime loadCudaRuntime() {
  // The unversioned name exists only with the toolkit installed; the versioned ones come with
  // the runtime packages of each major release.
  static const char* const kNames[] = {"libcudart.so", "libcudart.so.13", "libcudart.so.12",
                                       "libcudart.so.11.0"};
  CudaRuntime rt;
  for (const char* name : kNames) {
    void* handle = dlopen(name, RTLD_NOW | RTLD_LOCAL);
    if (handle == nullptr) continue;
    bool ok = resolve(handle, "cudaGetDeviceCount", &rt.getDeviceCount) &&
              resolve(handle, "cudaDeviceGetPCIBusId", &rt.deviceGetPciBusId) &&
              resolve(handle, "cudaGetDevice", &rt.getDevice);
    // Peer queries only feed the log; an old runtime without them is still useful.
    resolve(handle, "cudaDeviceGetP2PAttribute", &rt.deviceGetP2PAttribute);
    resolve(handle, "cudaDeviceCanAccessPeer", &rt.deviceCanAccessPeer);
    if (ok) {
      // Never dlclose the runtime: it keeps process-wide state (contexts, atexit handlers).
      rt.library = name;
      return rt;
    }
    STRATA_INFO(kSubsysTopo, "%s lacks cudaGetDeviceCount/cudaDeviceGetPCIBusId/cudaGetDevice",
                name);
    dlclose(handle);
    rt = CudaRuntime();
  }
  return rt;
}

// Loaded once per process. If the application linked the runtime statically, this is a second
// copy with its own current device; a shared libcudart of the same file is the same copy.
const CudaRuntime& cudaRuntime() {
  static const CudaRuntime rt = loadCudaRuntime();
  return rt;
}

std::string cudaBusid(const CudaRuntime& rt, int device) {
  char busid[64] = {};
  if (rt.deviceGetPciBusId(busid, sizeof(busid), device) != 0) return "";
  return busid;
}

// Logs which devices can reach which as peers. Peer access without an NVLink in the topology
// is PCIe P2P, which the PCIe relation already describes, so nothing is added.
void logPeerAccess(const CudaRuntime& rt, int devices) {
  if (rt.deviceCanAccessPeer == nullptr) return;
  int pairs = 0, reachable = 0;
  for (int src = 0; src < devices; ++src) {
    for (int dst = 0; dst < devices; ++dst) {
      if (src == dst) continue;
      int can = 0, rank = -1;
      if (rt.deviceCanAccessPeer(&can, src, dst) != 0) can = 0;
      if (can && rt.deviceGetP2PAttribute != nullptr &&
          rt.deviceGetP2PAttribute(&rank, kCudaDevP2PAttrPerformanceRank, src, dst) != 0) {
        rank = -1;
      }
      ++pairs;
      reachable += can ? 1 : 0;
      STRATA_TRACE(kSubsysTopo, "cuda peer access %d -> %d: %s, performance rank %d", src, dst,
                   can ? "yes" : "no", rank);
    }
  }
  STRATA_INFO(kSubsysTopo, "cuda peer access between %d of %d device pairs", reachable, pairs);
}

// nvmlPciInfo_t as NVML documents it, with room to spare in case a newer NVML writes more.
struct NvmlPciInfo {
  char busIdLegacy[16];
  unsigned int domain, bus, device, pciDeviceId, pciSubSystemId;
  char busId[32];
  char spare[256];
};

struct Nvml {
  int (*init)() = nullptr;
  int (*getCount)(unsigned int* count) = nullptr;
  int (*getHandleByIndex)(unsigned int index, void** device) = nullptr;
  int (*getPciInfo)(void* device, NvmlPciInfo* pci) = nullptr;
  int (*getNvLinkState)(void* device, unsigned int link, int* active) = nullptr;
  int (*getNvLinkRemotePciInfo)(void* device, unsigned int link, NvmlPciInfo* pci) = nullptr;
  int (*getName)(void* device, char* name, unsigned int length) = nullptr;
  int (*shutdown)() = nullptr;
};

constexpr unsigned int kNvmlMaxLinks = 18;  // NVML_NVLINK_MAX_LINKS (H100 and later)
constexpr int kNvmlFeatureEnabled = 1;      // NVML_FEATURE_ENABLED

bool resolveNvml(void* handle, Nvml* nvml) {
  if (!resolve(handle, "nvmlDeviceGetPciInfo_v3", &nvml->getPciInfo)) {
    resolve(handle, "nvmlDeviceGetPciInfo_v2", &nvml->getPciInfo);
  }
  return resolve(handle, "nvmlInit_v2", &nvml->init) &&
         resolve(handle, "nvmlDeviceGetCount_v2", &nvml->getCount) &&
         resolve(handle, "nvmlDeviceGetHandleByIndex_v2", &nvml->getHandleByIndex) &&
         nvml->getPciInfo != nullptr &&
         resolve(handle, "nvmlDeviceGetNvLinkState", &nvml->getNvLinkState) &&
         resolve(handle, "nvmlDeviceGetNvLinkRemotePciInfo_v2", &nvml->getNvLinkRemotePciInfo) &&
         resolve(handle, "nvmlDeviceGetName", &nvml->getName) &&
         resolve(handle, "nvmlShutdown", &nvml->shutdown);
}

std::string nvmlBusid(const NvmlPciInfo& pci) {
  if (pci.busId[0] != '\0') return std::string(pci.busId, strnlen(pci.busId, sizeof(pci.busId)));
  if (pci.busIdLegacy[0] != '\0') {
    return std::string(pci.busIdLegacy, strnlen(pci.busIdLegacy, sizeof(pci.busIdLegacy)));
  }
  char busid[32];
  std::snprintf(busid, sizeof(busid), "%04x:%02x:%02x.0", pci.domain, pci.bus, pci.device);
  return busid;
}

// Every GPU NVML sees (all of them: NVML ignores CUDA_VISIBLE_DEVICES), with its active links.
std::vector<detail::NvmlGpu> queryNvml(const Nvml& nvml) {
  std::vector<detail::NvmlGpu> gpus;
  unsigned int count = 0;
  if (nvml.getCount(&count) != 0) return gpus;
  for (unsigned int i = 0; i < count; ++i) {
    void* device = nullptr;
    NvmlPciInfo pci = {};
    if (nvml.getHandleByIndex(i, &device) != 0 || nvml.getPciInfo(device, &pci) != 0) continue;
    detail::NvmlGpu gpu;
    gpu.busid = nvmlBusid(pci);
    char name[128] = {};
    if (nvml.getName(device, name, sizeof(name)) == 0) gpu.name = name;
    // Links past the device's last one answer with an error, which ends nothing: a link in the
    // middle may be absent on parts with fused-off links.
    for (unsigned int link = 0; link < kNvmlMaxLinks; ++link) {
      int active = 0;
      NvmlPciInfo remote = {};
      if (nvml.getNvLinkState(device, link, &active) != 0 || active != kNvmlFeatureEnabled) {
        continue;
      }
      if (nvml.getNvLinkRemotePciInfo(device, link, &remote) != 0) continue;
      gpu.nvlinkRemotes.push_back(nvmlBusid(remote));
    }
    gpus.push_back(gpu);
  }
  return gpus;
}

void probeNvml(NodeTopology* topo) {
  constexpr const char* kLibrary = "libnvidia-ml.so.1";
  void* handle = dlopen(kLibrary, RTLD_NOW | RTLD_LOCAL);
  if (handle == nullptr) {
    STRATA_INFO(kSubsysTopo, "nvml: %s not loaded (%s); no nvlink facts", kLibrary, dlerror());
    return;
  }
  Nvml nvml;
  if (!resolveNvml(handle, &nvml)) {
    STRATA_INFO(kSubsysTopo, "nvml: %s lacks an entry point we use; no nvlink facts", kLibrary);
    dlclose(handle);
    return;
  }
  int rc = nvml.init();
  if (rc != 0) {
    STRATA_INFO(kSubsysTopo, "nvml: nvmlInit_v2 failed with nvml error %d; no nvlink facts", rc);
    dlclose(handle);
    return;
  }
  std::vector<detail::NvmlGpu> gpus = queryNvml(nvml);
  nvml.shutdown();
  dlclose(handle);
  size_t active = 0;
  for (const detail::NvmlGpu& gpu : gpus) active += gpu.nvlinkRemotes.size();
  int changed = detail::applyNvml(gpus, topo);
  STRATA_INFO(kSubsysTopo, "nvml: %zu gpus, %zu active nvlinks, %d gpu pairs linked", gpus.size(),
              active, changed);
}

}  // namespace

Status probeCudaAndNvml(NodeTopology* topo) {
  if (topo == nullptr) return invalidArgument("probeCudaAndNvml: null topology");
  const CudaRuntime& rt = cudaRuntime();
  if (rt.library.empty()) {
    STRATA_INFO(kSubsysTopo, "cuda: no libcudart could be loaded; no cuda facts");
    return Status::ok();
  }
  int devices = 0;
  int rc = rt.getDeviceCount(&devices);
  if (rc != 0 || devices <= 0) {
    STRATA_INFO(kSubsysTopo, "cuda: %s sees no device (cuda error %d); no cuda facts",
                rt.library.c_str(), rc);
    return Status::ok();
  }
  std::vector<std::string> busids;
  for (int d = 0; d < devices; ++d) busids.push_back(cudaBusid(rt, d));
  int matched = detail::applyCudaBusids(busids, topo);
  STRATA_INFO(kSubsysTopo, "cuda: %s sees %d devices, %d of them in the topology",
              rt.library.c_str(), devices, matched);
  for (int d = 0; d < devices; ++d) {
    if (detail::gpuByBusid(*topo, busids[d]) < 0) {
      STRATA_INFO(kSubsysTopo, "cuda: device %d (%s) is not among the topology's gpus", d,
                  busids[d].empty() ? "bus id unknown" : busids[d].c_str());
    }
  }
  logPeerAccess(rt, devices);
  probeNvml(topo);
  return Status::ok();
}

int currentGpu(const NodeTopology& topo) {
  const CudaRuntime& rt = cudaRuntime();
  if (rt.library.empty()) return -1;
  int device = -1;
  if (rt.getDevice(&device) != 0 || device < 0) return -1;
  std::string busid = cudaBusid(rt, device);
  return busid.empty() ? -1 : detail::gpuByBusid(topo, busid);
}

namespace detail {

int gpuByBusid(const NodeTopology& topo, const std::string& busid) {
  if (busid.empty()) return -1;
  std::string wanted = normalizeBusid(busid);
  for (size_t g = 0; g < topo.gpus.size(); ++g) {
    if (!topo.gpus[g].pci.busid.empty() && normalizeBusid(topo.gpus[g].pci.busid) == wanted) {
      return static_cast<int>(g);
    }
  }
  return -1;
}

int applyCudaBusids(const std::vector<std::string>& cudaBusids, NodeTopology* topo) {
  std::vector<int> index(topo->gpus.size(), -1);
  int matched = 0;
  for (size_t d = 0; d < cudaBusids.size(); ++d) {
    int g = gpuByBusid(*topo, cudaBusids[d]);
    if (g < 0 || index[g] >= 0) continue;
    index[g] = static_cast<int>(d);
    ++matched;
  }
  for (size_t g = 0; g < topo->gpus.size(); ++g) topo->gpus[g].cudaIndex = index[g];
  return matched;
}

int applyNvml(const std::vector<NvmlGpu>& gpus, NodeTopology* topo) {
  int size = static_cast<int>(topo->gpus.size());
  // Active links from each GPU of the topology, by remote bus id.
  std::vector<std::map<std::string, int>> remotes(size);
  for (const NvmlGpu& gpu : gpus) {
    int g = gpuByBusid(*topo, gpu.busid);
    if (g < 0) {
      STRATA_TRACE(kSubsysTopo, "nvml: gpu %s is not in the topology", gpu.busid.c_str());
      continue;
    }
    if (!gpu.name.empty()) topo->gpus[g].name = gpu.name;
    // NVML was asked for this GPU's links: none listed now means none.
    topo->nvlinkKnown = true;
    for (const std::string& remote : gpu.nvlinkRemotes) ++remotes[g][normalizeBusid(remote)];
  }
  // Direct links, seen from both ends; the larger count wins should the ends disagree.
  std::map<std::pair<int, int>, int> direct;
  std::map<std::string, int> switchUsers;  // non-GPU remote -> GPUs reaching it
  for (int g = 0; g < size; ++g) {
    for (const auto& [busid, count] : remotes[g]) {
      int peer = gpuByBusid(*topo, busid);
      if (peer == g) continue;
      if (peer < 0) {
        ++switchUsers[busid];
        continue;
      }
      int& slot = direct[{std::min(g, peer), std::max(g, peer)}];
      slot = std::max(slot, count);
    }
  }
  int changed = 0;
  for (int a = 0; a < size; ++a) {
    for (int b = a + 1; b < size; ++b) {
      auto it = direct.find({a, b});
      if (it != direct.end()) {
        changed += upsertLink(a, b, LinkKind::kNvlink, it->second, topo) ? 1 : 0;
        continue;
      }
      int shared = 0;
      for (const auto& [busid, count] : remotes[a]) {
        auto other = remotes[b].find(busid);
        if (switchUsers.count(busid) && other != remotes[b].end()) {
          shared += std::min(count, other->second);
        }
      }
      if (shared > 0) changed += upsertLink(a, b, LinkKind::kNvswitch, shared, topo) ? 1 : 0;
    }
  }
  if (topo->nvswitches == 0) {
    for (const auto& entry : switchUsers) topo->nvswitches += entry.second >= 2 ? 1 : 0;
  }
  return changed;
}

}  // namespace detail

}  // namespace strata::topo
