// The `shm` fabric: the ranks of one host combine through an MPI-3 shared window
// (MPI_Win_allocate_shared), without MPI on the fast path.
//
// Each member owns two slots of `slotBytes` in the window (double buffering: see the protocol
// in shm_fabric.cc). An allreduce copies its input into its slot once; then every member
// reduces its own shard straight from all members' slots in one pass (reduceMany) and everyone
// copies the whole result out. Calls larger than a slot run slot-sized pieces.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <memory>

#include "fabrics/fabric.h"

namespace strata::fabric {

// Collective over `group`. Fails (on every member) when the group's ranks do not all share
// memory, i.e. span hosts.
StatusOr<std::unique_ptr<Fabric>> createShmFabric(MPI_Comm group, size_t slotBytes);

}  // namespace strata::fabric
