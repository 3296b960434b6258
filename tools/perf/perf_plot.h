// strata-perf --png: runs the plot script (tools/plot) on the JSON the run wrote.
#pragma once

#include <string>

#include "common/status.h"

namespace strata::tools {

// The plot script: strata-perf-plot next to this executable (where `cmake --install` puts it),
// else tools/plot in the source tree this binary was built from. "" when neither exists.
std::string plotScript();

// Whether --png can work: the script exists and gnuplot is on PATH. Checked before the sweep.
Status plotReady();

// Runs `script -o png [--title title] [--log-y] json` (both placements, error bars from the
// repeats; --log-y with `logBusbw`) and waits for it. Call it after MPI_Finalize: a child
// process under MPI is not portable.
Status runPlot(const std::string& json, const std::string& png, const std::string& title,
               bool logBusbw);

}  // namespace strata::tools
