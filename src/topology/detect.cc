#include "topology/detect.h"

#include <hwloc.h>
#include <unistd.h>

#include <climits>

#include "common/log.h"

namespace strata::topo {
namespace {

std::string systemHostName() {
  char name[HOST_NAME_MAX + 1] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "localhost";
  return name;
}

// The package holding the whole CPU binding of this process, or -1 when the process is not
// bound, or bound across packages (then a socket level would not mean anything).
int boundPackage() {
  hwloc_topology_t topo;
  if (hwloc_topology_init(&topo) != 0) return -1;
  int package = -1;
  hwloc_bitmap_t set = hwloc_bitmap_alloc();
  if (hwloc_topology_load(topo) == 0 && set != nullptr &&
      hwloc_get_cpubind(topo, set, HWLOC_CPUBIND_PROCESS) == 0) {
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
  hwloc_topology_destroy(topo);
  return package;
}

}  // namespace

LocalInfo detectLocal(const std::string& hostOverride) {
  LocalInfo info;
  info.host = hostOverride.empty() ? systemHostName() : hostOverride;
  info.package = boundPackage();
  return info;
}

}  // namespace strata::topo
