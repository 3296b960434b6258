// hwloc -> NodeTopology: loading (live or XML), the CPU side (packages, NUMA nodes, cores) and
// the host name. The I/O side is in hwloc_devices.cc, NVLink in hwloc_nvlink.cc.
#include "topology/hwloc_reader.h"

#include <hwloc.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <climits>
#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "common/log.h"
#include "common/text_file.h"
#include "topology/link_model.h"

namespace strata::topo {
namespace {

// Owns a topology from hwloc_topology_init until the end of the scope.
struct TopologyDeleter {
  void operator()(hwloc_topology* topo) const { hwloc_topology_destroy(topo); }
};
using TopologyPtr = std::unique_ptr<hwloc_topology, TopologyDeleter>;

// strerror, lowercased for our message style ("no such file or directory").
std::string errnoText(int err) {
  std::string text = std::strerror(err);
  if (!text.empty()) text[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(text[0])));
  return text;
}

std::string systemHostName() {
  char name[HOST_NAME_MAX + 1] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "localhost";
  return name;
}

std::string baseName(const std::string& path) {
  size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

// A fresh topology that keeps every I/O object. KEEP_IMPORTANT would do for GPUs and NICs, but
// it drops PCI bridges that lead to nothing "important" and devices of unusual classes, such as
// the DGX-2 NVSwitch that reports class 0x0000; the bridge chain of PciPlace needs them all.
StatusOr<TopologyPtr> newTopology(const std::string& what) {
  hwloc_topology_t raw = nullptr;
  if (hwloc_topology_init(&raw) != 0) {
    std::string msg = what + ": hwloc_topology_init failed: " + errnoText(errno);
    STRATA_WARN(kSubsysTopo, "%s", msg.c_str());
    return systemError(msg);
  }
  TopologyPtr topo(raw);
  hwloc_topology_set_io_types_filter(raw, HWLOC_TYPE_FILTER_KEEP_ALL);
  return topo;
}

// The number of objects of `type`, across all depths (Groups, for one, may sit at several).
int countObjects(hwloc_topology* topo, hwloc_obj_type_t type) {
  int n = hwloc_get_nbobjs_by_type(topo, type);
  return n > 0 ? n : 0;
}

// Everything but the loading: the same for the live machine and a file.
NodeTopology describe(hwloc_topology* topo, std::string host, std::string source) {
  NodeTopology out;
  out.host = std::move(host);
  out.source = std::move(source);
  // Packages with no allowed PU stay in the topology when I/O hangs below them (hwloc keeps
  // them for their I/O), so they are counted: PciPlace::package indexes the same list. A
  // machine with CPUs but no Package object (some VMs, some v1 exports) has one package.
  out.cores = countObjects(topo, HWLOC_OBJ_CORE);
  if (out.cores == 0) out.cores = countObjects(topo, HWLOC_OBJ_PU);
  out.packages = countObjects(topo, HWLOC_OBJ_PACKAGE);
  if (out.packages == 0 && out.cores > 0) out.packages = 1;
  out.numaNodes = countObjects(topo, HWLOC_OBJ_NUMANODE);
  if (out.packages > 1) out.interSocket = smpLink();

  detail::HwlocGpuIndex gpuOf;
  detail::hwlocReadDevices(topo, &out, &gpuOf);
  detail::hwlocReadNvlinks(topo, gpuOf, &out);
  STRATA_INFO(kSubsysTopo,
              "%s: %d packages, %d numa nodes, %d cores, %zu gpus, %zu nics, %zu gpu links, "
              "%d nvswitches",
              out.source.c_str(), out.packages, out.numaNodes, out.cores, out.gpus.size(),
              out.nics.size(), out.links.size(), out.nvswitches);
  return out;
}

}  // namespace

// The package holding the whole CPU binding of this process, or -1 when the process is not
// bound, or bound across packages (then a socket level would not mean anything).
int packageOfBinding(hwloc_topology_t topo) {
  int package = -1;
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  if (set != nullptr && hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) == 0) {
    hwloc_const_bitmap_t all = hwloc_topology_get_topology_cpuset(topo);
    if (!hwloc_bitmap_isincluded(all, set)) {  // bound to less than the whole machine
      hwloc_obj_t obj =
          hwloc_get_next_obj_covering_cpuset_by_type(topo, set, HWLOC_OBJ_PACKAGE, nullptr);
      if (obj != nullptr) package = static_cast<int>(obj->logical_index);
    }
  } else {
    STRATA_INFO(kSubsysTopo, "hwloc could not read the CPU binding; no socket level");
  }
  hwloc_bitmap_free(set);
  return package;
}

int readBoundPackage() {
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) return -1;
  const int package = hwloc_topology_load(topo) == 0 ? packageOfBinding(topo) : -1;
  hwloc_topology_destroy(topo);
  return package;
}

StatusOr<NodeTopology> readLiveHwloc(int* boundPackage) {
  STRATA_ASSIGN_OR_RETURN(TopologyPtr topo, newTopology("hwloc"));
  // The GL plugin talks to X servers and the OpenCL one loads every ICD in the process (slow,
  // and with vendor runtimes that spawn threads); neither finds a GPU that the PCI ids, CUDA,
  // NVML or ROCm SMI miss, bar AMD's VGA-class cards on a node without ROCm SMI.
  for (const char* plugin : {"gl", "opencl"}) {
    hwloc_topology_set_components(topo.get(), HWLOC_TOPOLOGY_COMPONENTS_FLAG_BLACKLIST, plugin);
  }
  if (hwloc_topology_load(topo.get()) != 0) {
    std::string msg = "hwloc: cannot load the topology of this machine: " + errnoText(errno);
    STRATA_WARN(kSubsysTopo, "%s", msg.c_str());
    return systemError(msg);
  }
  if (boundPackage != nullptr) *boundPackage = packageOfBinding(topo.get());
  return describe(topo.get(), systemHostName(), "live");
}

StatusOr<NodeTopology> parseHwlocXml(const std::string& text, const std::string& source) {
  const std::string where = "hwloc xml " + source;
  // hwloc crashes on some malformed exports: it only sees what the check lets through, in
  // pugixml's re-serialisation (hwloc_xml_check.cc).
  StatusOr<std::string> clean = detail::checkHwlocXml(text, source);
  if (!clean.isOk()) {
    STRATA_WARN(kSubsysTopo, "%s", clean.status().message().c_str());
    Status status = clean.status();
    return status.markLogged();
  }
  STRATA_ASSIGN_OR_RETURN(TopologyPtr topo, newTopology(where));
  // hwloc parses the buffer in set_xmlbuffer (syntax) and checks the objects in load
  // (structure); a well-formed XML of another kind fails in load.
  errno = 0;
  const std::string& xml = clean.value();
  if (hwloc_topology_set_xmlbuffer(topo.get(), xml.c_str(), static_cast<int>(xml.size())) != 0 ||
      hwloc_topology_load(topo.get()) != 0) {
    const std::string reason =
        errno == EINVAL || errno == 0 ? "not a valid hwloc xml export" : errnoText(errno);
    std::string msg = where + ": cannot load: " + reason;
    STRATA_WARN(kSubsysTopo, "%s", msg.c_str());
    return invalidArgument(msg).markLogged();
  }
  hwloc_obj_t root = hwloc_get_root_obj(topo.get());
  const char* host = hwloc_obj_get_info_by_name(root, "HostName");
  // Exports made without a host name still need a distinct one: the file's name is.
  return describe(topo.get(), host != nullptr && *host != '\0' ? host : baseName(source), where);
}

StatusOr<NodeTopology> readHwlocXml(const std::string& path) {
  StatusOr<std::string> text = readTextFileBounded(path);
  if (!text.isOk()) {
    Status status = text.status().withContext("hwloc xml " + path + ": cannot load");
    STRATA_WARN(kSubsysTopo, "%s", status.message().c_str());
    return status.markLogged();
  }
  if (text.value().find_first_not_of(" \t\r\n") == std::string::npos) {
    std::string msg = "hwloc xml " + path + ": cannot load: the file is empty";
    STRATA_WARN(kSubsysTopo, "%s", msg.c_str());
    return invalidArgument(msg).markLogged();
  }
  return parseHwlocXml(text.value(), path);
}

}  // namespace strata::topo
