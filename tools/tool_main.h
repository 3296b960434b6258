// The last guard of every tool's main: nothing may escape it.
#pragma once

#include <mpi.h>

#include <cstdio>
#include <exception>

namespace strata::tools {

// A tool's exit status when its --device mode finds no GPU: 77, which ctest (SKIP_RETURN_CODE)
// and automake's test drivers read as "skipped" rather than failed.
constexpr int kNoGpuExit = 77;

// Runs `body` (which returns the exit code). An exception becomes a message on stderr and exit
// code 1; under mpirun the job is aborted, since the other ranks may be waiting in a
// collective.
template <typename Body>
int guardedMain(const char* tool, Body body) {
  try {
    return body();
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
    if (size > 1) MPI_Abort(MPI_COMM_WORLD, 1);
    MPI_Finalize();
  }
  return 1;
}

}  // namespace strata::tools
