// The last guard of every tool's main: nothing may escape it.
#pragma once

#include <mpi.h>

#include <cstdio>
#include <exception>

#include "tool_cli.h"  // kNoGpuExit, kExitUsage, UsageError

namespace strata::tools {

// Runs `body` (which returns the exit code). An exception becomes a message on stderr and exit
// code 1 (kExitUsage for a UsageError); under mpirun the job is aborted, since the other ranks
// may be waiting in a collective.
template <typename Body>
int guardedMain(const char* tool, Body body) {
  int code = kExitFailure;
  try {
    return body();
  } catch (const UsageError& e) {
    std::fprintf(stderr, "%s: error: %s\n", tool, e.what());
    code = kExitUsage;
  } catch (const std::exception& e) {
    std::fprintf(stderr, "%s: error: %s\n", tool, e.what());
  } catch (...) {
    std::fprintf(stderr, "%s: error: unknown exception\n", tool);
  }
  int initialized = 0, finalized = 0, size = 1;
  MPI_Initialized(&initialized);
  MPI_Finalized(&finalized);
  if (initialized && !finalized) {
    MPI_Comm_size(MPI_COMM_WORLD, &size);
    if (size > 1) MPI_Abort(MPI_COMM_WORLD, code);
    MPI_Finalize();
  }
  return code;
}

}  // namespace strata::tools
