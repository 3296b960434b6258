// Small allreduces of the mpi fabric's blocking path: recursive doubling over point-to-point
// messages, polled within the thread's deadline (common/mpi_wait.h).
//
// Why not MPI_Iallreduce: polling Open MPI 4.1's nonblocking allreduce (libnbc) costs several
// times the latency of its blocking MPI_Allreduce at small sizes (2 ranks over vader: 6.5 us
// against 0.8 us at 64 B, 148 us against 40 us at 4 KiB), and the blocking call cannot be
// bounded. One exchange per doubling step, posted as MPI_Isend/MPI_Irecv, costs what the
// blocking call does.
//
// Protocol, for p members: q = the largest power of two <= p. Members q..p-1 first send their
// range to member r - q, which reduces it in, and at the end receive the result from it; the
// first q run log2(q) steps, exchanging the whole range with r ^ 2^k and reducing it in. Every
// member of a step combines the same two partial results (the ops are commutative, IEEE
// addition and multiplication exactly so), so every member ends with the same bits.
// A received message shorter than the range (members that disagree on the count) is
// strataInvalidUsage; a longer one is MPI's truncation error, reported the same way.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <vector>

#include "common/status.h"
#include "strata/strata.h"

namespace strata::fabric {

// `scratch` grows to the range's bytes and is reused. In place when in == out.
Status smallAllReduce(MPI_Comm comm, int rank, int size, const void* in, void* out, size_t count,
                      strataDataType_t type, strataRedOp_t op, std::vector<char>& scratch);

}  // namespace strata::fabric
