// GPUs, NICs and NVSwitches from hwloc's I/O tree, and where each one hangs (PciPlace).
//
// hwloc shows one physical device several times: a GPU is a PCI device with OS devices under
// it (cuda0, nvml0, opencl0d0, card0, renderD128), an HCA is a PCI function with an OpenFabrics
// device (mlx5_0) and a network device (ib0). Everything here works per PCI device so that each
// physical GPU or port is listed once, whatever set of hwloc plugins wrote the topology.
#include <hwloc.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iterator>
#include <set>
#include <string>
#include <vector>

#include "topology/hwloc_reader.h"

namespace strata::topo::detail {
namespace {

constexpr unsigned kVendorNvidia = 0x10de;
constexpr unsigned kVendorAmd = 0x1002;
constexpr unsigned kVendorIntel = 0x8086;
constexpr unsigned kClassVga = 0x0300;
constexpr unsigned kClassOtherBridge = 0x0680;

// Byte counts of a network device's hardware address: IPoIB uses 20-byte addresses (QPN + GID),
// Ethernet 6-byte MACs. That is how an HCA port running Ethernet (RoCE) shows in hwloc.
constexpr int kIpoibAddressBytes = 20;
constexpr int kMacAddressBytes = 6;

// OS devices that stand for a GPU's compute side, most informative first: the GPU model comes
// from the first of these that has one, and Gpu::osdev names the first one present. CUDA and
// NVML names agree; ROCm SMI is AMD's counterpart; OpenCL last, as it also lists CPUs.
constexpr const char* kComputePrefixes[] = {"cuda", "nvml", "rsmi", "ze", "opencl"};
constexpr int kNoRank = 1000;

bool startsWith(const std::string& s, const char* prefix) {
  return s.compare(0, std::char_traits<char>::length(prefix), prefix) == 0;
}

// `prefix` followed by a digit: "ib0" is IPoIB, while a predictable name such as "ibp65s0" is left
// to the address check.
bool startsWithIndexed(const std::string& s, const char* prefix) {
  size_t n = std::char_traits<char>::length(prefix);
  return startsWith(s, prefix) && s.size() > n && std::isdigit(static_cast<unsigned char>(s[n]));
}

std::string nameOf(const hwloc_obj* obj) { return obj->name != nullptr ? obj->name : ""; }

// hwloc_obj_get_info_by_name takes a non-const object; this reads the same array.
const char* info(const hwloc_obj* obj, const char* name) {
  for (unsigned i = 0; i < obj->infos_count; ++i) {
    if (std::strcmp(obj->infos[i].name, name) == 0) return obj->infos[i].value;
  }
  return nullptr;
}

bool isOsdev(const hwloc_obj* obj, hwloc_obj_osdev_type_t type) {
  return obj->type == HWLOC_OBJ_OS_DEVICE && obj->attr->osdev.type == type;
}

// The rank of a compute OS device in kComputePrefixes, or kNoRank for anything else (DRM
// devices such as card0 and renderD128 also type as GPU, and a BMC's VGA has them too).
// Older exports type nvml* as co-processors, newer ones as GPUs: both count.
int computeRank(const hwloc_obj* obj) {
  if (!isOsdev(obj, HWLOC_OBJ_OSDEV_GPU) && !isOsdev(obj, HWLOC_OBJ_OSDEV_COPROC)) return kNoRank;
  const char* clType = info(obj, "OpenCLDeviceType");
  if (clType != nullptr && std::strcmp(clType, "GPU") != 0) return kNoRank;
  std::string name = nameOf(obj);
  for (int i = 0; i < static_cast<int>(std::size(kComputePrefixes)); ++i) {
    if (startsWithIndexed(name, kComputePrefixes[i])) return i;
  }
  return kNoRank;
}

std::string busid(const hwloc_obj_attr_u::hwloc_pcidev_attr_s& pci) {
  char text[32];
  std::snprintf(text, sizeof(text), "%04x:%02x:%02x.%x", static_cast<unsigned>(pci.domain), pci.bus,
                pci.dev, pci.func);
  return text;
}

// The package above `anc`, or the single package inside it (an I/O object may hang from a
// Group that holds one package, as on POWER9); -1 when it spans several.
int packageOf(hwloc_topology* topo, hwloc_obj_t anc) {
  for (hwloc_obj_t o = anc; o != nullptr; o = o->parent) {
    if (o->type == HWLOC_OBJ_PACKAGE) return static_cast<int>(o->logical_index);
  }
  int found = -1;
  for (hwloc_obj_t p = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_PACKAGE, nullptr); p != nullptr;
       p = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_PACKAGE, p)) {
    if (anc->cpuset == nullptr || !hwloc_bitmap_intersects(p->cpuset, anc->cpuset)) continue;
    if (found >= 0) return -1;
    found = static_cast<int>(p->logical_index);
  }
  return found;
}

hwloc_obj_t firstNumaIn(hwloc_obj_t memory) {
  for (; memory != nullptr; memory = memory->next_sibling) {
    if (memory->type == HWLOC_OBJ_NUMANODE) return memory;
    // Memory-side caches sit between an object and its NUMA nodes.
    if (hwloc_obj_t below = firstNumaIn(memory->memory_first_child)) return below;
  }
  return nullptr;
}

// The NUMA node nearest to `anc`: the only one in its nodeset, else the first memory attached
// at or above it (hwloc 2 attaches a NUMA node where its locality is). -1 when the object
// spans several nodes with none of its own, as a host bridge under the machine of a
// two-socket box does: guessing there would mislead placement more than saying nothing.
int numaOf(hwloc_topology* topo, hwloc_obj_t anc) {
  if (anc->nodeset != nullptr && hwloc_bitmap_weight(anc->nodeset) == 1) {
    int os = hwloc_bitmap_first(anc->nodeset);
    for (hwloc_obj_t n = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, nullptr);
         n != nullptr; n = hwloc_get_next_obj_by_type(topo, HWLOC_OBJ_NUMANODE, n)) {
      if (static_cast<int>(n->os_index) == os) return static_cast<int>(n->logical_index);
    }
  }
  for (hwloc_obj_t o = anc; o != nullptr; o = o->parent) {
    if (hwloc_obj_t numa = firstNumaIn(o->memory_first_child)) {
      return static_cast<int>(numa->logical_index);
    }
  }
  return -1;
}

// Where `obj` (a PCI device, or an OS device with no PCI parent) sits. Bridges are the PCI
// bridges from just below the host bridge down to the device, by busid, after a first entry
// naming the host bridge: hwloc gives a host bridge no busid, only the bus range it leads to, so
// it is named "hostbridge dddd:bb" by its domain and secondary bus. Guessing it from the root
// bus of the top bridge instead would merge two sockets' host bridges that both lead to bus 00
// (PHB where nvidia-smi says SYS), and split one host bridge's devices on buses 04 and 05.
PciPlace placeOf(hwloc_topology* topo, hwloc_obj_t obj) {
  PciPlace place;
  if (obj->type == HWLOC_OBJ_PCI_DEVICE) {
    const hwloc_obj_attr_u::hwloc_pcidev_attr_s& pci = obj->attr->pcidev;
    place.busid = busid(pci);
    detail::pcieFromLinkSpeed(pci.linkspeed, &place.linkGen, &place.linkWidth);
    for (hwloc_obj_t b = obj->parent; b != nullptr && b->type == HWLOC_OBJ_BRIDGE; b = b->parent) {
      if (b->attr->bridge.upstream_type == HWLOC_OBJ_BRIDGE_PCI) {
        place.bridges.push_back(busid(b->attr->bridge.upstream.pci));
      } else if (b->attr->bridge.downstream_type == HWLOC_OBJ_BRIDGE_PCI) {
        char host[48];
        std::snprintf(host, sizeof(host), "hostbridge %04x:%02x",
                      static_cast<unsigned>(b->attr->bridge.downstream.pci.domain),
                      static_cast<unsigned>(b->attr->bridge.downstream.pci.secondary_bus));
        place.bridges.push_back(host);
      }
    }
    std::reverse(place.bridges.begin(), place.bridges.end());
  }
  if (hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(topo, obj)) {
    place.package = packageOf(topo, anc);
    place.numa = numaOf(topo, anc);
  }
  return place;
}

// The CPUs and the NUMA node near `obj`, by OS index, as nvidia-smi topo -m's "CPU Affinity"
// and "NUMA Affinity" give them (both come from the device's sysfs locality, as hwloc's do).
// A device whose locality spans several NUMA nodes (a host bridge under the machine) has no
// NUMA affinity: nvidia-smi prints N/A there too.
void setAffinity(hwloc_topology* topo, hwloc_obj_t obj, Gpu* gpu) {
  hwloc_obj_t anc = hwloc_get_non_io_ancestor_obj(topo, obj);
  if (anc == nullptr) return;
  if (anc->cpuset != nullptr && !hwloc_bitmap_iszero(anc->cpuset) &&
      hwloc_bitmap_weight(anc->cpuset) > 0) {  // weight -1: an infinite set, nothing to list
    std::vector<int> cpus;
    unsigned cpu = 0;
    hwloc_bitmap_foreach_begin(cpu, anc->cpuset) { cpus.push_back(static_cast<int>(cpu)); }
    hwloc_bitmap_foreach_end();
    gpu->cpuAffinity = formatCpuList(cpus);
  }
  if (anc->nodeset != nullptr && hwloc_bitmap_weight(anc->nodeset) == 1) {
    gpu->numaAffinity = std::to_string(hwloc_bitmap_first(anc->nodeset));
  }
}

// One physical device as hwloc shows it: a PCI device (or, for OS devices without one, their
// common parent) and the OS devices under it.
struct Device {
  hwloc_obj_t obj = nullptr;
  bool isPci = false;
  std::vector<hwloc_obj_t> osdevs;
};

std::vector<Device> collectDevices(hwloc_topology* topo) {
  std::vector<Device> devices;
  for (hwloc_obj_t pci = hwloc_get_next_pcidev(topo, nullptr); pci != nullptr;
       pci = hwloc_get_next_pcidev(topo, pci)) {
    Device d{pci, true, {}};
    for (hwloc_obj_t c = pci->io_first_child; c != nullptr; c = c->next_sibling) {
      if (c->type == HWLOC_OBJ_OS_DEVICE) d.osdevs.push_back(c);
    }
    devices.push_back(std::move(d));
  }
  // OS devices that hang from something other than a PCI device, grouped by that parent.
  for (hwloc_obj_t os = hwloc_get_next_osdev(topo, nullptr); os != nullptr;
       os = hwloc_get_next_osdev(topo, os)) {
    if (os->parent != nullptr && os->parent->type == HWLOC_OBJ_PCI_DEVICE) continue;
    auto same = [&](const Device& d) { return !d.isPci && d.obj == os->parent; };
    auto it = std::find_if(devices.begin(), devices.end(), same);
    if (it == devices.end()) it = devices.insert(devices.end(), Device{os->parent, false, {}});
    it->osdevs.push_back(os);
  }
  return devices;
}

std::string vendorName(unsigned pciVendor, const std::string& osdevName, const char* gpuVendor) {
  if (pciVendor == kVendorNvidia) return "nvidia";
  if (pciVendor == kVendorAmd) return "amd";
  if (pciVendor == kVendorIntel) return "intel";
  if (startsWith(osdevName, "cuda") || startsWith(osdevName, "nvml")) return "nvidia";
  if (startsWith(osdevName, "rsmi")) return "amd";
  if (startsWith(osdevName, "ze")) return "intel";
  std::string v = gpuVendor != nullptr ? gpuVendor : "";
  if (v.find("NVIDIA") != std::string::npos) return "nvidia";
  if (v.find("AMD") != std::string::npos || v.find("Advanced Micro") != std::string::npos) {
    return "amd";
  }
  if (v.find("Intel") != std::string::npos) return "intel";
  return "unknown";
}

// A PCI device is a GPU when a compute OS device sits on it, or by its ids when hwloc had no
// GPU plugin: any NVIDIA display-class device; AMD and Intel ones only outside the VGA class,
// where their server parts are BMC or integrated graphics (the ATI ES1000 of many Xeon boards).
bool isGpuPci(const hwloc_obj* pci, bool hasCompute) {
  if (hasCompute) return true;
  unsigned cls = pci->attr->pcidev.class_id;
  if (cls >> 8 != kClassVga >> 8) return false;
  unsigned vendor = pci->attr->pcidev.vendor_id;
  if (vendor == kVendorNvidia) return true;
  return (vendor == kVendorAmd || vendor == kVendorIntel) && cls != kClassVga;
}

Gpu makeGpu(hwloc_topology* topo, const Device& d, const std::vector<hwloc_obj_t>& compute) {
  Gpu gpu;
  const hwloc_obj* first = nullptr;  // the OS device that names the GPU
  if (!compute.empty()) {
    first = compute.front();
  } else if (!d.osdevs.empty()) {
    first = d.osdevs.front();
  }
  gpu.osdev = first != nullptr ? nameOf(first) : "";
  for (const hwloc_obj* os : compute) {
    const char* model = info(os, "GPUModel");
    if (gpu.name.empty() && model != nullptr && *model != '\0') gpu.name = model;
    std::string name = nameOf(os);
    if (gpu.cudaIndex < 0 && startsWithIndexed(name, "cuda")) gpu.cudaIndex = std::atoi(&name[4]);
  }
  const char* pciDevice = d.isPci ? info(d.obj, "PCIDevice") : nullptr;
  if (gpu.name.empty() && pciDevice != nullptr) gpu.name = pciDevice;
  if (gpu.name.empty()) gpu.name = gpu.osdev;
  if (gpu.name.empty() && d.isPci) {  // a bare PCI device: its ids are all there is
    char ids[16];
    std::snprintf(ids, sizeof(ids), "%04x:%04x", d.obj->attr->pcidev.vendor_id,
                  d.obj->attr->pcidev.device_id);
    gpu.name = ids;
  }
  unsigned vendor = d.isPci ? d.obj->attr->pcidev.vendor_id : 0;
  gpu.vendor = vendorName(vendor, gpu.osdev, first != nullptr ? info(first, "GPUVendor") : nullptr);
  gpu.pci = placeOf(topo, d.isPci ? d.obj : compute.front());
  setAffinity(topo, d.isPci ? d.obj : compute.front(), &gpu);
  return gpu;
}

// The GPUs of one device: one for a GPU's PCI device, and for OS devices without a PCI parent
// one per device of the best family present (cuda0 and nvml0 may be the same GPU, and nothing
// but PCI ties them together, so the other families are not counted again).
void addGpus(hwloc_topology* topo, const Device& d, NodeTopology* out, HwlocGpuIndex* gpuOf) {
  std::vector<hwloc_obj_t> compute;
  for (hwloc_obj_t os : d.osdevs) {
    if (computeRank(os) != kNoRank) compute.push_back(os);
  }
  std::stable_sort(compute.begin(), compute.end(), [](const hwloc_obj* x, const hwloc_obj* y) {
    return computeRank(x) < computeRank(y);
  });
  if (d.isPci) {
    if (!isGpuPci(d.obj, !compute.empty())) return;
    (*gpuOf)[d.obj] = static_cast<int>(out->gpus.size());
    for (hwloc_obj_t os : d.osdevs) (*gpuOf)[os] = static_cast<int>(out->gpus.size());
    out->gpus.push_back(makeGpu(topo, d, compute));
    return;
  }
  if (compute.empty()) return;
  int bestRank = computeRank(compute.front());
  for (hwloc_obj_t os : compute) {
    if (computeRank(os) != bestRank) break;
    (*gpuOf)[os] = static_cast<int>(out->gpus.size());
    out->gpus.push_back(makeGpu(topo, Device{d.obj, false, {os}}, {os}));
  }
}

int addressBytes(const hwloc_obj* net) {
  const char* address = info(net, "Address");
  if (address == nullptr || *address == '\0') return 0;
  return static_cast<int>(std::count(address, address + std::strlen(address), ':')) + 1;
}

int portOf(const hwloc_obj* net) {
  const char* port = info(net, "Port");
  return port != nullptr ? std::atoi(port) : 0;
}

// RDMA devices: OpenFabrics OS devices, and devices with an RDMA driver's name that an old
// export typed as network devices.
bool isRdma(const hwloc_obj* os) {
  if (isOsdev(os, HWLOC_OBJ_OSDEV_OPENFABRICS)) return true;
  if (!isOsdev(os, HWLOC_OBJ_OSDEV_NETWORK)) return false;
  std::string name = nameOf(os);
  for (const char* prefix : {"mlx4_", "mlx5_", "hfi1_", "qib", "efa_", "bnxt_re", "irdma"}) {
    if (startsWith(name, prefix)) return true;
  }
  return false;
}

// The ports an RDMA device reports ("Port1State", "Port2LID", ...), in order.
std::set<int> rdmaPorts(const hwloc_obj* rdma) {
  std::set<int> ports;
  for (unsigned i = 0; i < rdma->infos_count; ++i) {
    const char* name = rdma->infos[i].name;
    if (std::strncmp(name, "Port", 4) == 0 && std::isdigit(static_cast<unsigned char>(name[4]))) {
      ports.insert(std::atoi(name + 4));
    }
  }
  return ports;
}

std::string portState(const hwloc_obj* rdma, int port) {
  std::string key = "Port" + std::to_string(port) + "State";
  const char* state = info(rdma, key.c_str());
  if (state == nullptr) return "";
  // The ib_port_state enumeration of the verbs API.
  switch (std::atoi(state)) {
    case 1:
      return "down";
    case 2:
      return "init";
    case 3:
      return "armed";
    case 4:
      return "active";
    case 5:
      return "active_defer";
    default:
      return "unknown";
  }
}

// Ports of an RDMA device, one Nic each; the network devices on the same PCI function are the
// same ports seen through the kernel's network stack and are not listed again. A port is RoCE
// when the network devices on it carry Ethernet MACs rather than IPoIB addresses; with no
// network device hwloc cannot tell, and the port stays "infiniband" for the sysfs probe to fix.
void addRdmaNics(hwloc_topology* topo, const Device& d, hwloc_obj_t rdma,
                 const std::vector<hwloc_obj_t>& nets, NodeTopology* out) {
  std::set<int> ports = rdmaPorts(rdma);
  if (ports.empty()) ports.insert(0);  // no port information: one Nic, port unknown
  for (int port : ports) {
    Nic nic;
    nic.name = nameOf(rdma);
    nic.port = port;
    nic.state = port > 0 ? portState(rdma, port) : "";
    nic.pci = placeOf(topo, d.isPci ? d.obj : rdma);
    nic.type = "infiniband";
    if (startsWith(nic.name, "efa")) {
      nic.type = "efa";
    } else {
      int onPort = 0, ethernet = 0;
      for (const hwloc_obj* net : nets) {
        if (port > 0 && portOf(net) > 0 && portOf(net) != port) continue;
        ++onPort;
        if (addressBytes(net) == kMacAddressBytes) ++ethernet;
      }
      if (onPort > 0 && ethernet == onPort) nic.type = "roce";
    }
    out->nics.push_back(std::move(nic));
  }
}

// A network device with no RDMA device beside it, typed by its name, else by its address.
// Wireless interfaces are not fabric ports and are skipped ("" type).
std::string netType(const hwloc_obj* net) {
  std::string name = nameOf(net);
  if (startsWithIndexed(name, "ib")) return "infiniband";
  if (startsWith(name, "efa")) return "efa";
  if (startsWith(name, "eth") || startsWith(name, "en")) return "ethernet";
  if (startsWith(name, "wl") || startsWith(name, "ww")) return "";
  switch (addressBytes(net)) {
    case kIpoibAddressBytes:
      return "infiniband";
    case kMacAddressBytes:
      return "ethernet";
    default:
      return "unknown";
  }
}

void addNics(hwloc_topology* topo, const Device& d, NodeTopology* out) {
  std::vector<hwloc_obj_t> rdmas, nets;
  for (hwloc_obj_t os : d.osdevs) {
    if (isRdma(os)) {
      rdmas.push_back(os);
    } else if (isOsdev(os, HWLOC_OBJ_OSDEV_NETWORK)) {
      nets.push_back(os);
    }
  }
  for (hwloc_obj_t rdma : rdmas) addRdmaNics(topo, d, rdma, nets, out);
  if (!rdmas.empty()) return;
  for (hwloc_obj_t net : nets) {
    Nic nic;
    nic.type = netType(net);
    if (nic.type.empty()) continue;
    nic.name = nameOf(net);
    nic.port = portOf(net);
    nic.pci = placeOf(topo, d.isPci ? d.obj : net);
    out->nics.push_back(std::move(nic));
  }
}

}  // namespace

bool hwlocIsNvswitch(const hwloc_obj* obj) {
  if (obj == nullptr || obj->type != HWLOC_OBJ_PCI_DEVICE) return false;
  // The DGX-2 export has an NVSwitch whose config space read back as zeros (class 0x0000,
  // vendor 0): hwloc's NVML backend still named it by subtype.
  if (obj->subtype != nullptr && std::strcmp(obj->subtype, "NVSwitch") == 0) return true;
  return obj->attr->pcidev.vendor_id == kVendorNvidia &&
         obj->attr->pcidev.class_id == kClassOtherBridge;
}

bool pcieFromLinkSpeed(double gbps, int* gen, int* width) {
  // GB/s per lane after line encoding, as hwloc computes it: 8b/10b for gen1-2, 128b/130b for
  // gen3-5, 242/256 for gen6.
  static const double kLaneGBps[] = {0.25,
                                     0.5,
                                     8.0 * 128 / 130 / 8,
                                     16.0 * 128 / 130 / 8,
                                     32.0 * 128 / 130 / 8,
                                     64.0 * 242 / 256 / 8};
  static const int kWidths[] = {16, 8, 4, 2, 1};
  constexpr double kTolerance = 0.03;
  constexpr double kTie = 1e-6;
  if (!(gbps > 0)) return false;
  double bestError = kTolerance;
  int bestGen = 0, bestWidth = 0;
  for (int w : kWidths) {  // widest first, so an exact tie keeps the widest
    for (int g = 0; g < static_cast<int>(std::size(kLaneGBps)); ++g) {
      double error = std::abs(kLaneGBps[g] * w - gbps) / gbps;
      if (error < bestError - kTie) {
        bestError = error;
        bestGen = g + 1;
        bestWidth = w;
      }
    }
  }
  if (bestGen == 0) return false;
  *gen = bestGen;
  *width = bestWidth;
  return true;
}

void hwlocReadDevices(hwloc_topology* topo, NodeTopology* out, HwlocGpuIndex* gpuOf) {
  for (const Device& d : collectDevices(topo)) {
    if (d.isPci && hwlocIsNvswitch(d.obj)) {
      ++out->nvswitches;
      continue;
    }
    addGpus(topo, d, out, gpuOf);
    addNics(topo, d, out);
  }
}

}  // namespace strata::topo::detail
