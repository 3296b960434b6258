// Creating and freeing communicators.
#pragma once

#include <mpi.h>

#include <memory>

#include "common/status.h"
#include "core/comm.h"

namespace strata::core {

// Collective over `user`. On failure every rank returns an error with the same code: local
// failures (a bad topology file on one rank) are agreed on before anything else is built.
StatusOr<std::unique_ptr<strataComm>> initComm(MPI_Comm user);

// Frees the communicator's MPI objects. `collective` is false for strataCommAbort, which must
// not wait on other ranks.
void freeComm(strataComm& comm, bool collective);

// Makes a local outcome collective: if any rank's `local` failed, every rank returns the
// failure of the lowest failing rank (its code, and its message prefixed with its rank on the
// other ranks). Collective over `comm`.
Status agree(MPI_Comm comm, const Status& local);

}  // namespace strata::core
