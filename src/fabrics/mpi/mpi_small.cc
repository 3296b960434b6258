#include "fabrics/mpi/mpi_small.h"

#include <climits>
#include <cstring>
#include <string>

#include "common/datatype.h"
#include "common/mpi_wait.h"
#include "common/reduce.h"
#include "fabrics/fabric.h"
#include "fabrics/mpi/mpi_types.h"

namespace strata::fabric {
namespace {

constexpr int kSmallTag = 0x5352;  // "SR": its own, apart from the ring's and exchanges'

struct Step {
  MPI_Comm comm;
  int rank, size;
  size_t count;
  strataDataType_t type;
  MPI_Datatype dt;

  // Sends `send` to `to` (unless -1) and receives into `recv` from `from` (unless -1), both
  // `count` elements; waits for both within the deadline and checks the received length.
  Status run(const void* send, int to, void* recv, int from, int step) const {
    MPI_Request reqs[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
    MPI_Status st[2];
    const int n = static_cast<int>(count);
    if (from >= 0) {
      const int rc = MPI_Irecv(recv, n, dt, from, kSmallTag, comm, &reqs[0]);
      if (rc != MPI_SUCCESS) return mpiRequestError("MPI_Irecv (mpi small allreduce)", rc);
    }
    if (to >= 0) {
      const int rc = MPI_Isend(send, n, dt, to, kSmallTag, comm, &reqs[1]);
      if (rc != MPI_SUCCESS) {
        MpiWhat none;
        (void)mpiWaitAll(1, &reqs[0], MPI_STATUSES_IGNORE, MpiRequestKind::kPointToPoint, none);
        return mpiRequestError("MPI_Isend (mpi small allreduce)", rc);
      }
    }
    MpiWhat what;
    what.call = "MPI_Isend/MPI_Irecv of the small allreduce";
    what.count = count;
    what.type = dataTypeName(type);
    what.owner = step < 0 ? "mpi small allreduce, fold" : "mpi small allreduce, doubling";
    what.rank = rank;
    what.size = size;
    what.peer = from >= 0 ? from : to;
    STRATA_RETURN_IF_ERROR(
        mpiWaitAll(2, reqs, st, MpiRequestKind::kPointToPoint, what, &IdleHook::idle));
    if (from < 0) return Status::ok();
    int got = 0;
    MPI_Get_count(&st[0], dt, &got);
    if (got == n) return Status::ok();
    return invalidUsage("mpi small allreduce: member " + std::to_string(from) + " sent " +
                        std::to_string(got) + " elements where this member has " +
                        std::to_string(count) +
                        "; the ranks disagree on the allreduce's count or type");
  }
};

}  // namespace

Status smallAllReduce(MPI_Comm comm, int rank, int size, const void* in, void* out, size_t count,
                      strataDataType_t type, strataRedOp_t op, std::vector<char>& scratch) {
  const size_t bytes = count * dataTypeSize(type);
  if (in != out && bytes > 0) std::memcpy(out, in, bytes);
  if (size == 1 || count == 0) return Status::ok();
  if (count > static_cast<size_t>(INT_MAX)) {
    return internalError("mpi small allreduce: " + std::to_string(count) + " elements");
  }
  if (scratch.size() < bytes) scratch.resize(bytes);
  const Step s{comm, rank, size, count, type, mpiDatatype(type)};
  int q = 1;
  while (q * 2 <= size) q *= 2;
  if (rank >= q) {
    STRATA_RETURN_IF_ERROR(s.run(out, rank - q, nullptr, -1, -1));
    return s.run(nullptr, -1, out, rank - q, -1);
  }
  if (rank + q < size) {
    STRATA_RETURN_IF_ERROR(s.run(nullptr, -1, scratch.data(), rank + q, -1));
    reduceInto(out, scratch.data(), count, type, op);
  }
  for (int mask = 1, step = 0; mask < q; mask <<= 1, ++step) {
    const int peer = rank ^ mask;
    STRATA_RETURN_IF_ERROR(s.run(out, peer, scratch.data(), peer, step));
    reduceInto(out, scratch.data(), count, type, op);
  }
  if (rank + q < size) return s.run(out, rank + q, nullptr, -1, -1);
  return Status::ok();
}

}  // namespace strata::fabric
