#include "topology/detect.h"

#include <hwloc.h>
#include <unistd.h>

#include <climits>
#include <map>

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

StatusOr<Hierarchy> hierarchyFromHosts(const std::vector<LocalInfo>& ranks,
                                       const std::string& fabric) {
  // A host is split by package only if every one of its ranks has a package.
  std::map<std::string, bool> hostHasPackages;
  for (const LocalInfo& r : ranks) {
    auto it = hostHasPackages.emplace(r.host, true).first;
    it->second = it->second && r.package >= 0;
  }
  bool anyPackages = false;
  for (const auto& [host, has] : hostHasPackages) anyPackages = anyPackages || has;
  // Without any package information the socket level would only repeat the node level.
  std::vector<Level> levels;
  if (anyPackages) levels.push_back({"socket", fabric});
  levels.push_back({"node", fabric});
  levels.push_back({"network", fabric});
  std::vector<std::vector<std::string>> keys;
  for (const LocalInfo& r : ranks) {
    std::vector<std::string> k;
    if (anyPackages) {
      k.push_back(hostHasPackages[r.host] ? r.host + "#package" + std::to_string(r.package)
                                          : r.host);
    }
    k.push_back(r.host);
    k.push_back("");
    keys.push_back(std::move(k));
  }
  STRATA_ASSIGN_OR_RETURN(Hierarchy h, Hierarchy::fromKeys(std::move(levels), keys));
  return h.withoutTrivialLevels();
}

}  // namespace strata::topo
