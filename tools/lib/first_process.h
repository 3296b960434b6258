// Which process of a job speaks before MPI_Init: tools that parse their command line first
// (strata-perf, strata-tune) print help and argument errors once, not once per rank.
#pragma once

namespace strata::tools {

// True on the launcher's rank 0, and in a process started without a launcher. Before MPI_Init
// only the launcher's environment tells ranks apart (Open MPI's, PMIx's or PMI's rank).
bool firstProcess();

}  // namespace strata::tools
