// strata-perf's output on stdout (rank 0): nccl-tests' table, with the comparison's columns
// after it. The files (JSON, CSV) are in perf_export.h.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "perf_args.h"
#include "perf_bench.h"

namespace strata::tools {

// What the run ran on, gathered to rank 0.
struct PerfMeta {
  std::string version;  // "0.1.0", from strataGetVersion
  int versionCode = 0;
  int nranks = 0;
  std::vector<std::string> rankHosts;  // per rank: the host name strata groups by
  std::vector<int> rankPids;
  std::vector<std::string> hosts;  // distinct, in order of first rank
  std::string hierarchy;           // strataCommDescribe
  std::vector<std::string> argv;
};

struct PerfSummary {
  int outOfBounds = 0;       // results (size, implementation, placement) with wrong elements
  long long wrongTotal = 0;  // wrong elements over every result
  double avgBusbw = 0;       // strata, over every size, out of place and in place (nccl-tests)
  double avgBusbwVs = 0;     // the same for the comparison
  double ratioGeomean = 0;   // geometric mean of vs time / strata time (0 when none)
};

PerfSummary summarize(const PerfOptions& o, const std::vector<PerfRow>& rows);

// The '#' lines before the table: version, options, hosts, hierarchy, ranks.
std::string formatPreamble(const PerfOptions& o, const PerfMeta& m);
// nccl-tests' three header lines, plus the comparison's columns with --vs.
std::string formatTableHeader(const PerfOptions& o);
std::string formatRow(const PerfOptions& o, const PerfRow& row);
// "# Out of bounds values : 0 OK", "# Avg bus bandwidth    : X", ...
std::string formatFooter(const PerfOptions& o, const PerfSummary& s);

}  // namespace strata::tools
