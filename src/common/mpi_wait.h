// Waiting on MPI requests with a deadline (common/deadline.h) instead of in a blocking call.
//
// A blocking MPI call waits for ever on a peer that stalls; strata posts the nonblocking form
// and polls it here with MPI_Testall, letting the pipeline progress (the idle callback) and
// reading the clock every few polls. On expiry the requests are abandoned, never waited on
// again: point-to-point receives are cancelled and freed (MPI allows both); sends and
// collective requests are left to MPI (freeing an active collective request is erroneous, and
// MPI_Cancel does not apply to it). Their buffers may then still be written or read by MPI
// when a late peer arrives, which is why the communicator enters its error state and must be
// aborted or destroyed (docs/errors.md, "The error state").
//
// Errors: communicators strata owns use MPI_ERRORS_RETURN, so a failed request returns its
// code here. A truncation (a peer sent more than this rank posted: the ranks disagree on a
// count) is strataInvalidUsage; other failures are strataSystemError.
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "common/status.h"

namespace strata {

// What kind of requests are waited on: how they may be abandoned.
enum class MpiRequestKind { kCollective, kPointToPoint };

// What the requests are, for an error message; formatted only on failure (no allocation on the
// fast path). "MPI_Iallreduce of 10 float32 (mpi fabric, member 1 of 4)".
struct MpiWhat {
  const char* call = "";    // the MPI call that posted them
  size_t count = 0;         // elements
  const char* type = "";    // element type's name
  const char* owner = "";   // "mpi fabric", "bootstrap", "mpi ring (step 3)", ...
  int rank = -1, size = 0;  // this member, of how many
  int peer = -1;            // point-to-point: the peer (-1: several or none)
  std::string describe() const;
};

// Waits until all `n` requests completed (statuses may be MPI_STATUSES_IGNORE), or the
// thread's deadline passed. `idle` (may be null) runs between polls.
Status mpiWaitAll(int n, MPI_Request* reqs, MPI_Status* statuses, MpiRequestKind kind,
                  const MpiWhat& what, void (*idle)() = nullptr);

// The Status of a failed MPI call or request, truncation told apart (see above).
Status mpiRequestError(const std::string& what, int code);

// Keeps `bytes` allocated until the process ends instead of freeing it: strata's own buffers
// (scratch, receive blocks) that abandoned requests may still name, when their owner goes
// after an abort. A late peer's arrival then makes MPI read or write memory that is still
// there, instead of freed memory (a crash in some later, unrelated MPI call). Costs the memory
// of an aborted communicator's scratch, once per abort; the list is reachable, not a leak.
void keepUntilExit(std::vector<char>&& bytes);

}  // namespace strata
