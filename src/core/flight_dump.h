// Dumping a communicator's flight recorder (core/flight_recorder.h). With
// STRATA_FLIGHT_RECORDER_FILE set (%h host, %r rank, %p pid, %% a percent sign), each dump
// appends one JSON line to that file:
//   {"reason": "...", "rank": 0, "size": 4, "host": "...", "pid": 123, "commHash": "0x...",
//    "epochUs": ..., "calls": [{"id":, "collective":, "seq":, "count":, "type":, "op":, "root":,
//    "state": "issued|running|done|failed", "step":, "steps":, "stepKind":, "stepLevel":,
//    "issuedUs":, "startedUs":, "endedUs":, "error":}, ...]}
// (times in microseconds from epochUs, the Unix time of the recorder's zero), one line per dump
// and communicator, so several communicators and several dumps share one file. Without it, a
// short summary goes to the log at WARN: the last calls and the one in flight.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "core/flight_recorder.h"

namespace strata::core {

class Comm;

// The JSON line of one dump (no newline).
std::string flightJson(const Comm& c, const std::vector<FlightRecord>& calls,
                       const std::string& reason);
// The summary's text: up to `last` calls, newest last, one per line.
std::string flightSummary(const std::vector<FlightRecord>& calls, size_t last);
// Dumps `c`'s recorder as the top says; `reason` says why ("strataCommDump", the error).
// Errors writing the file are returned (and logged), never thrown.
Status dumpFlightRecorder(Comm& c, const std::string& reason, bool reasonLogged = false);

}  // namespace strata::core
