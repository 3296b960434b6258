// How a communicator is named in logs and per-rank file names, apart from the communicator
// itself (core/describe.h describes one), so that the owners and the timeline, which
// core/comm.h includes, can name it without including core/comm.h back.
#pragma once

#include <cstdint>
#include <string>

namespace strata::core {

// "0x" and 16 hex digits: how logs print Comm::hash().
std::string hashText(uint64_t hash);

// A per-rank file's path from a pattern (STRATA_FLIGHT_RECORDER_FILE, STRATA_TRACE): as
// STRATA_DEBUG_FILE's (%h host, %p pid, %% a percent sign), plus %r, `rank` (the rank in its
// communicator); %h is `hostName` (Settings::hostName).
std::string rankFilePath(const std::string& pattern, int rank, const std::string& hostName);

}  // namespace strata::core
