// Point-to-point exchanges over MPI (Fabric::exchange of the mpi fabric and of the fabrics
// that run on an MPI communicator): every operation becomes nonblocking messages, all posted
// before any is waited for, so that pairs never deadlock whatever order each side lists them
// in. An operation longer than an MPI count is cut into pieces at the same places on both
// sides; MPI's non-overtaking rule keeps the pieces, and the operations between two members,
// in order. The tag is the exchange's own, so its messages never match the ring allreduce's.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <vector>

#include "common/status.h"
#include "fabrics/fabric.h"

namespace strata::fabric {

class PeerExchange {
 public:
  explicit PeerExchange(MPI_Comm comm) : comm_(comm) {}
  // Posts every operation and waits for all within the thread's deadline. rank/size: this
  // member's position, for messages.
  Status run(const PeerOp* ops, size_t n, int rank, int size);
  // Fabric::probe: MPI_Iprobe on the exchange's tag. An operation cut into pieces shows its
  // first piece's length.
  Status probe(int peer, bool* found, int* source, size_t* bytes);

 private:
  Status checkCounts(const PeerOp* ops, size_t n);
  MPI_Comm comm_;
  std::vector<MPI_Request> requests_;  // reused: no allocation when steady
  std::vector<MPI_Status> statuses_;
};

}  // namespace strata::fabric
