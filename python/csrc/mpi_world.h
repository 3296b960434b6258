// The MPI launcher's world, as the backend sees it: MPI initialised on demand (with
// MPI_THREAD_MULTIPLE, which strata's progress thread and the backend's threads need), the
// world's rank and size for strata_torch.init() under mpirun or srun.
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

namespace strata::torch_backend {

// Initialises MPI if the program has not (MPI_THREAD_MULTIPLE). Refuses an MPI that was
// initialised with a lower thread level, or finalised.
void ensureMpi();
// Finalises MPI if ensureMpi() initialised it (at the interpreter's exit).
void finalizeMpiIfOurs();
int worldRank();
int worldSize();
// `data` of rank `root` of the world, on every rank (collective over the world).
std::string broadcastString(const std::string& data, int root);

}  // namespace strata::torch_backend
