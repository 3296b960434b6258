// Detection of where this rank runs, and the hierarchy built from every rank's answer.
//
// Two stages, as NCCL's topology code: detectLocal() describes this process (plain data that
// the caller exchanges across ranks), and hierarchyFromHosts() builds the hierarchy from all
// ranks' descriptions without touching MPI or the machine.
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

// `hostOverride`, when not empty, replaces the host name (STRATA_HOSTNAME).
LocalInfo detectLocal(const std::string& hostOverride);

// Levels socket -> node -> network, from every rank's LocalInfo (indexed by rank). A host gets
// socket groups only when all its ranks are bound inside one package each; levels whose
// groups all have one child are dropped. Every level runs on `fabric`.
StatusOr<Hierarchy> hierarchyFromHosts(const std::vector<LocalInfo>& ranks,
                                       const std::string& fabric);

}  // namespace strata::topo
