// The rendezvous root of a unique id (NCCL's bootstrap root): a thread that listens on the
// id's address, collects every rank's registration (its rank, the job size and the address it
// listens on for its peers), and once all have arrived sends each the table of every rank's
// address, then closes and ends. It runs in the process that made the id (strataGetUniqueId),
// or, for STRATA_COMM_ID, in rank 0's strataCommInitRank.
//
// Protocol invariants:
//   - A connection counts only after a Hello of kind Register with the id's secret and a rank
//     in range; anything else is dropped and logged, and the job goes on.
//   - Every registration agrees on the job size with the first, and no rank registers twice.
//     Either mistake dooms the job: the rank that made it, every rank registered before it
//     and every rank that registers after it get an error naming the mistake at once, never a
//     timeout. The root then ends once every rank up to the largest size claimed was told,
//     or at its deadline.
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
