// A readable description of a communicator's hierarchy, for strataCommDescribe and logs.
#pragma once

#include <string>

#include "core/comm.h"

namespace strata::core {

std::string describeComm(const Comm& c);

// The INFO lines of a communicator's setup, NCCL's "Init START" / "Init COMPLETE" pair around
// what describeComm says (INIT and TOPO) and where its plans come from (INIT and PLAN).
// `origin` says how it was made ("from MPI", "split of commHash 0x... color 1 key 0").
void logInitStart(const Comm& c, const std::string& origin);
void logInitComplete(const Comm& c, double milliseconds);

// "0x" and 16 hex digits: how logs print Comm::hash().
std::string hashText(uint64_t hash);

// A per-rank file's path from a pattern (STRATA_FLIGHT_RECORDER_FILE, STRATA_TRACE): as
// STRATA_DEBUG_FILE's (%h host, %p pid, %% a percent sign), plus %r, `rank` (the rank in its
// communicator); %h is `hostName` (Settings::hostName).
std::string rankFilePath(const std::string& pattern, int rank, const std::string& hostName);

}  // namespace strata::core
