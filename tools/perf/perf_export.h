// strata-perf's files: the rows as JSON (--json) and CSV (--csv), written by rank 0. The JSON
// keys are a contract with the benchmark suite's report generator and tools/plot: add keys,
// never rename or remove one.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "perf_report.h"

namespace strata::tools {

// `error` is empty for a complete run; otherwise the rows are those done before it.
Status writeJson(const std::string& path, const PerfOptions& o, const PerfMeta& m,
                 const std::vector<PerfRow>& rows, const PerfSummary& s, const std::string& error);
Status writeCsv(const std::string& path, const PerfOptions& o, const PerfMeta& m,
                const std::vector<PerfRow>& rows);

// Whether `path` can be written: it exists and is writable, or its directory is.
Status checkWritable(const std::string& flag, const std::string& path);

}  // namespace strata::tools
