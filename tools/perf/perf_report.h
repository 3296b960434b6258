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
  // Per rank, nccl-tests' device field ("0 [0000:06:00] NVIDIA H100 ..." with --device); ""
  // on the host path, where the header says cpu.
  std::vector<std::string> rankDevices;
  std::vector<std::string> hosts;  // distinct, in order of first rank
  std::string hierarchy;           // strataCommDescribe
  std::vector<std::string> argv;
  int threadLevel = 0;          // what MPI_Init_thread provided (MPI_THREAD_*)
  bool progressThread = false;  // MPI_THREAD_MULTIPLE and STRATA_PROGRESS=1
};

// "MPI_THREAD_MULTIPLE", ...
const char* threadLevelName(int level);

struct PerfSummary {
  int outOfBounds = 0;       // results (size, implementation, placement) with wrong elements
  long long wrongTotal = 0;  // wrong elements over every result
  double avgBusbw = 0;       // strata, over every size, out of place and in place (nccl-tests)
  double avgBusbwVs = 0;     // the same for the comparison
  double ratioGeomean = 0;   // geometric mean of vs time / strata time (0 when none)
  double avgBusbwNonblocking = 0;  // --nonblocking: the nonblocking calls' avgBusbw
  double avgDeltaUs = 0;           // --nonblocking: mean of nonblocking - blocking time per call
  double avgHidden = 0;            // --overlap: mean clamped fraction hidden, over sizes
  int computeFailures = 0;         // --overlap: sizes whose computation's checksum changed
};

PerfSummary summarize(const PerfOptions& o, const std::vector<PerfRow>& rows);

// The '#' lines before the table: version, options, the mode (--nonblocking, --overlap: how
// calls are issued and timed, and whether the progress thread runs them), hosts, hierarchy,
// ranks.
std::string formatPreamble(const PerfOptions& o, const PerfMeta& m);
// nccl-tests' three header lines, plus the comparison's columns with --vs or --nonblocking.
// --overlap has a table of its own: t_coll, t_comp, t_both and the fraction hidden.
std::string formatTableHeader(const PerfOptions& o);
std::string formatRow(const PerfOptions& o, const PerfRow& row);
// "# Out of bounds values : 0 OK", "# Avg bus bandwidth    : X", ...
std::string formatFooter(const PerfOptions& o, const PerfSummary& s);

}  // namespace strata::tools
