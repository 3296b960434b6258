// strata-perf's command line: nccl-tests' flags (its short and long names and defaults, so
// scripts written for all_reduce_perf run unchanged) and strata's own, all long-only where
// nccl-tests has the short name.
#pragma once

#include <CLI/CLI.hpp>
#include <string>

#include "perf_args.h"

namespace strata::tools {

// Registers every option of strata-perf on `app`, writing into *o.
void addPerfOptions(CLI::App& app, PerfOptions* o);

// After parsing: what only the parser knows (which options were given).
void notePerfGiven(const CLI::App& app, PerfOptions* o);

// --help's text after the options: the output's columns, the modes, examples.
std::string perfFooter();

}  // namespace strata::tools
