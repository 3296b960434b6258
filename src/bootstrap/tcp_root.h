// The rendezvous root of a unique id (NCCL's bootstrap root): a thread that listens on the
// id's address, collects every rank's registration (its rank, the job size and the address it
// listens on for its peers), and once all have arrived sends each the table of every rank's
// address, then closes and ends. It runs in the process that made the id (strataGetUniqueId),
// or, for STRATA_COMM_ID, in rank 0's strataCommInitRank.
//
// Protocol invariants:
//   - A connection counts only after a Hello of kind Register with the id's secret and a rank
//     in range; anything else is dropped and logged, and the job goes on.
//   - Every registration agrees on the job size with the first; a rank registered twice, or a
//     size that disagrees, gets an error reply at once (a launch mistake, said loudly).
//   - The root waits STRATA_TIMEOUT for the first rank and then STRATA_TIMEOUT for the rest
//     (0: for ever); on expiry every registered rank gets an error naming the missing ranks.
#pragma once

#include "bootstrap/sockets.h"
#include "bootstrap/unique_id.h"
#include "common/status.h"

namespace strata::boot {

// Starts a root listening on `addr` (port 0: any free port; *addr becomes the bound address).
// Fails (nothing started) when it cannot listen there.
Status startRoot(net::SockAddr* addr, const Secret& secret);

}  // namespace strata::boot
