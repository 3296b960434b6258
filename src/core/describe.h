// A readable description of a communicator's hierarchy, for strataCommDescribe and logs.
#pragma once

#include <string>

#include "core/comm.h"
#include "core/names.h"

namespace strata::core {

std::string describeComm(const Comm& c);

// The INFO lines of a communicator's setup, NCCL's "Init START" / "Init COMPLETE" pair around
// what describeComm says (INIT and TOPO) and where its plans come from (INIT and PLAN).
// `origin` says how it was made ("from MPI", "split of commHash 0x... color 1 key 0").
void logInitStart(const Comm& c, const std::string& origin);
void logInitComplete(const Comm& c, double milliseconds);

}  // namespace strata::core
