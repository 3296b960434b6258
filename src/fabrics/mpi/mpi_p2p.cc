#include "fabrics/mpi/mpi_p2p.h"

#include <climits>

#include "common/datatype.h"
#include "common/mpi_check.h"
#include "fabrics/mpi/mpi_types.h"

namespace strata::fabric {
namespace {

constexpr int kPeerTag = 0x5350;  // "SP"; the ring allreduce uses its own tag
constexpr size_t kMaxPiece = INT_MAX;

}  // namespace

Status PeerExchange::run(const PeerOp* ops, size_t n) {
  requests_.clear();
  Status posted = Status::ok();
  for (size_t i = 0; i < n && posted.isOk(); ++i) {
    const PeerOp& op = ops[i];
    const size_t ts = dataTypeSize(op.type);
    const MPI_Datatype dt = mpiDatatype(op.type);
    for (size_t off = 0; off < op.count; off += kMaxPiece) {
      const int piece = static_cast<int>(op.count - off < kMaxPiece ? op.count - off : kMaxPiece);
      char* at = static_cast<char*>(op.buf) + off * ts;
      MPI_Request r = MPI_REQUEST_NULL;
      const int rc = op.send ? MPI_Isend(at, piece, dt, op.peer, kPeerTag, comm_, &r)
                             : MPI_Irecv(at, piece, dt, op.peer, kPeerTag, comm_, &r);
      if (rc != MPI_SUCCESS) {
        posted = mpiError(op.send ? "MPI_Isend" : "MPI_Irecv", rc, __FILE__, __LINE__);
        break;
      }
      requests_.push_back(r);
    }
  }
  // Whatever was posted completes before returning: buffers are the caller's again.
  if (!requests_.empty()) {
    const int rc =
        MPI_Waitall(static_cast<int>(requests_.size()), requests_.data(), MPI_STATUSES_IGNORE);
    if (rc != MPI_SUCCESS && posted.isOk())
      posted = mpiError("MPI_Waitall", rc, __FILE__, __LINE__);
  }
  return posted;
}

}  // namespace strata::fabric
