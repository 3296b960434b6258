#include "topology/detect.h"

#include <unistd.h>

#include <climits>
#include <fstream>

#include "common/log.h"
#include "topology/hwloc_reader.h"

namespace strata::topo {
namespace {

std::string systemHostName() {
  char name[HOST_NAME_MAX + 1] = {};
  if (gethostname(name, sizeof(name) - 1) != 0) return "localhost";
  return name;
}

}  // namespace

std::string localHostName(const std::string& hostOverride) {
  return hostOverride.empty() ? systemHostName() : hostOverride;
}

std::string machineId() {
  std::ifstream in("/proc/sys/kernel/random/boot_id");
  std::string id;
  if (in && std::getline(in, id) && !id.empty()) return "boot " + id;
  return "host " + systemHostName();
}

LocalInfo detectLocal(const std::string& hostOverride) {
  LocalInfo info;
  info.host = localHostName(hostOverride);
  info.package = readBoundPackage();
  return info;
}

}  // namespace strata::topo
