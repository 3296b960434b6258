// STRATA_MPI_CHECK: turns a failed MPI call into a Status where it happens (NCCL's *CHECK style).
// Communicators strata owns use MPI_ERRORS_RETURN, so a failure returns here instead of
// aborting the job.
#pragma once

#include <mpi.h>

#include <string>

#include "common/log.h"
#include "common/status.h"

namespace strata {

inline Status mpiError(const char* call, int code, const char* file, int line) {
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) len = 0;
  text[len] = '\0';
  STRATA_WARN(kSubsysFabric, "%s failed at %s:%d: %s", call, file, line, text);
  return systemError(std::string(call) + " failed: " + text);
}

}  // namespace strata

#define STRATA_MPI_CHECK(call)                                              \
  do {                                                                      \
    int strata_mpi_rc_ = (call);                                            \
    if (strata_mpi_rc_ != MPI_SUCCESS)                                      \
      return ::strata::mpiError(#call, strata_mpi_rc_, __FILE__, __LINE__); \
  } while (0)
