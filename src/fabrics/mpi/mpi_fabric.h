// The `mpi` fabric: a level's group runs on an MPI sub-communicator, using MPI's own
// collectives (MPI_Reduce_scatter, MPI_Allgatherv, MPI_Allreduce), which Open MPI tunes per
// size and transport.
#pragma once

#include <mpi.h>

#include <memory>

#include "fabrics/fabric.h"

namespace strata::fabric {

StatusOr<std::unique_ptr<Fabric>> createMpiFabric(MPI_Comm group);

}  // namespace strata::fabric
