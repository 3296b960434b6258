#include "topology/detect.h"

#include <unistd.h>

#include <climits>

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

LocalInfo detectLocal(const std::string& hostOverride) {
  LocalInfo info;
  info.host = localHostName(hostOverride);
  info.package = readBoundPackage();
  return info;
}

}  // namespace strata::topo
