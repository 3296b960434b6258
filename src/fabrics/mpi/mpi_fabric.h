// The `mpi` fabric: a level's group runs on its MPI communicator (the group's bootstrap), using
// MPI's own collectives (MPI_Reduce_scatter, MPI_Allgatherv, MPI_Allreduce), which Open MPI
// tunes per size and transport.
#pragma once

#include <memory>

#include "bootstrap/bootstrap.h"
#include "common/fabric_traits.h"
#include "fabrics/fabric.h"

namespace strata::fabric {

// Host memory, any members, asynchronous (allReduceStart posts a nonblocking ring); messages
// between ranks of one host go through MPI's shared FIFOs: a copy in and a copy out per byte
// and a handshake per fragment, a third of the copy rate (what strata-perf measured for
// MPI_Allreduce against the shm fabric), twice the latency.
FabricTraits mpiTraits();

// Fails when `group` is not an MPI bootstrap.
StatusOr<std::unique_ptr<Fabric>> createMpiFabric(boot::Bootstrap& group, Fabric* host,
                                                  const FabricOptions& options);

}  // namespace strata::fabric
