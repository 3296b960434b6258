// The MPI launcher's world, as the backend sees it: MPI initialised on demand (with
// MPI_THREAD_MULTIPLE, which strata's progress thread and the backend's threads need), the
// world's rank and size for strata_torch.init(), and the MPI communicator of a group's members.
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
// The MPI communicator of a group's members, after checking that torch.distributed's view of
// the group (rank, size, the members' world ranks; none: the whole world) is the launcher's.
// Collective over the members only. MPI_COMM_WORLD for the whole world (do not free it).
MPI_Comm membersComm(int rank, int size, const std::vector<int64_t>& globalRanks);

}  // namespace strata::torch_backend
