// A unique id (strataUniqueId, NCCL's ncclUniqueId): the rendezvous root's listening address
// and a random secret, 128 bytes that any channel can carry (a file, a store, MPI_Bcast).
//
// The id is a capability: whoever holds it can join the communicator being made, and every
// connection of the control plane must present its secret (tcp_bootstrap.h). An id formed from
// STRATA_COMM_ID has no random secret (every rank forms it alone), so such a job relies on its
// network to keep strangers off the port.
#pragma once

#include <array>
#include <cstdint>

#include "bootstrap/sockets.h"
#include "common/status.h"

namespace strata::boot {

constexpr size_t kUniqueIdBytes = 128;
using Secret = std::array<uint8_t, 32>;

struct UniqueId {
  net::SockAddr root;
  Secret secret{};
  bool fromEnv = false;  // formed from STRATA_COMM_ID: rank 0 of the job runs the root
};

void encodeId(const UniqueId& id, char out[kUniqueIdBytes]);
// Refuses bytes that are no strata id (all zeros, another library's id, a corrupted copy).
StatusOr<UniqueId> decodeId(const char in[kUniqueIdBytes]);

// strataGetUniqueId: from STRATA_COMM_ID when it is set (no root is started: rank 0 starts it
// in strataCommInitRank), else a new root listening on this host (tcp_root.h) with a fresh
// secret.
StatusOr<UniqueId> makeUniqueId();

// Random bytes from the kernel (getrandom).
Status randomBytes(void* out, size_t n);

}  // namespace strata::boot
