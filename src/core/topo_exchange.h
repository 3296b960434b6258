// Builds the detected hierarchy collectively: every rank describes where it runs, one rank per
// host describes the host, and all ranks build the same cluster hierarchy from the exchange.
#pragma once

#include "common/status.h"
#include "core/comm.h"

namespace strata::core {

// Fills c.hierarchy and c.hierarchySource. Collective over c.mpi.
Status detectHierarchy(strataComm& c);

}  // namespace strata::core
