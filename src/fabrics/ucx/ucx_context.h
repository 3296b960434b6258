// The process's UCP context, and UCX's check wrapper (as common/mpi_check.h is MPI's).
#pragma once

#include <ucp/api/ucp.h>

#include "common/status.h"

namespace strata::fabric {

// Made on first use (thread-safe) with the tag feature and workers usable from several
// threads, then kept for the life of the process: every ucx fabric's worker is made from it,
// and reading UCX's configuration (UCX_* variables) and opening its transports' domains once
// is cheaper than once per fabric. A failure is returned to every later caller too.
StatusOr<ucp_context_h> ucxContext();

// The Status of a failed UCX call, logged where it happened (strataSystemError).
Status ucxError(const char* call, ucs_status_t st, const char* file, int line);

}  // namespace strata::fabric

// Evaluates a UCX call returning ucs_status_t; returns its Status from the enclosing function
// when it failed.
#define STRATA_UCS_CHECK(call)                                                   \
  do {                                                                           \
    const ucs_status_t strata_ucs_ = (call);                                     \
    if (strata_ucs_ != UCS_OK) {                                                 \
      return ::strata::fabric::ucxError(#call, strata_ucs_, __FILE__, __LINE__); \
    }                                                                            \
  } while (0)
