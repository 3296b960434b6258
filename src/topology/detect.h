// Detection of where this rank runs, and the hierarchy built from every rank's answer.
//
// detectLocal() describes this process: plain data the caller exchanges across ranks
// (src/core/topo_exchange.cc); cluster.h builds the hierarchy from every rank's answer.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "topology/hierarchy.h"

namespace strata::topo {

struct LocalInfo {
  std::string host;  // the host name ranks are grouped by
  int package = -1;  // hwloc package (socket) the CPU binding lies in; -1 when unbound or wider
};

// The host name ranks are grouped by: `hostOverride` (STRATA_HOSTNAME) when not empty.
std::string localHostName(const std::string& hostOverride);

// This machine: its kernel's boot id (the same in every network and UTS namespace of one
// machine, so emulated hosts on one machine share it), else the system host name.
std::string machineId();

// The host name and the package of the CPU binding (a CPU-only hwloc load). Callers that load
// the full topology anyway get the package from readLiveHwloc instead.
LocalInfo detectLocal(const std::string& hostOverride);

}  // namespace strata::topo
