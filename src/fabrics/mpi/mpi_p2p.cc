#include "fabrics/mpi/mpi_p2p.h"

#include <climits>

#include "common/datatype.h"
#include "common/mpi_check.h"
#include "common/mpi_wait.h"
#include "fabrics/mpi/mpi_types.h"

namespace strata::fabric {
namespace {

constexpr int kPeerTag = 0x5350;  // "SP"; the ring allreduce uses its own tag
constexpr size_t kMaxPiece = INT_MAX;

}  // namespace

// A receive that got fewer elements than posted: the sender's count differs (more is a
// truncation, which MPI reports itself). Requests were pushed in the order of the operations
// and their pieces.
Status PeerExchange::checkCounts(const PeerOp* ops, size_t n) {
  size_t k = 0;
  for (size_t i = 0; i < n; ++i) {
    const PeerOp& op = ops[i];
    for (size_t off = 0; off < op.count; off += kMaxPiece) {
      const size_t piece = op.count - off < kMaxPiece ? op.count - off : kMaxPiece;
      if (!op.send && k < statuses_.size()) {
        int got = 0;
        MPI_Get_count(&statuses_[k], mpiDatatype(op.type), &got);
        if (static_cast<size_t>(got) != piece) {
          return invalidUsage("a receive from member " + std::to_string(op.peer) + " got " +
                              std::to_string(got) + " elements where " + std::to_string(piece) +
                              " were expected; the send and its receive must have the same "
                              "count and type");
        }
      }
      ++k;
    }
  }
  return Status::ok();
}

Status PeerExchange::run(const PeerOp* ops, size_t n, int rank, int size) {
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
  // Whatever was posted completes (or is abandoned, mpi_wait.h) before returning: buffers
  // are the caller's again, and a peer that never matches fails the call at the deadline.
  if (!requests_.empty()) {
    statuses_.resize(requests_.size());
    MpiWhat what;
    what.call = "MPI_Isend/MPI_Irecv of an exchange";
    what.count = n;
    what.type = "operations";
    what.owner = "mpi point-to-point";
    what.rank = rank;
    what.size = size;
    if (n == 1) what.peer = ops[0].peer;
    Status st = mpiWaitAll(static_cast<int>(requests_.size()), requests_.data(), statuses_.data(),
                           MpiRequestKind::kPointToPoint, what, &IdleHook::idle);
    if (posted.isOk()) posted = st;
    if (posted.isOk()) posted = checkCounts(ops, n);
  }
  return posted;
}

Status PeerExchange::probe(int peer, bool* found, int* source, size_t* bytes) {
  int flag = 0;
  MPI_Status status;
  const int rc = MPI_Iprobe(peer < 0 ? MPI_ANY_SOURCE : peer, kPeerTag, comm_, &flag, &status);
  if (rc != MPI_SUCCESS) return mpiError("MPI_Iprobe", rc, __FILE__, __LINE__);
  *found = flag != 0;
  *source = flag != 0 ? status.MPI_SOURCE : -1;
  MPI_Count n = 0;
  if (flag != 0) MPI_Get_elements_x(&status, MPI_BYTE, &n);
  *bytes = n > 0 ? static_cast<size_t>(n) : 0;
  return Status::ok();
}

}  // namespace strata::fabric
