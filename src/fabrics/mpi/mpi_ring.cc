#include "fabrics/mpi/mpi_ring.h"

#include <climits>
#include <cstring>
#include <string>

#include "common/datatype.h"
#include "common/mpi_check.h"
#include "common/mpi_wait.h"
#include "common/reduce.h"
#include "fabrics/mpi/mpi_types.h"

namespace strata::fabric {

constexpr int kRingTag = 0x5354;  // "ST": the only point-to-point traffic on the fabric's comm

size_t RingAllReduce::blockStart(int b) const {
  const size_t p = static_cast<size_t>(size_), base = count_ / p, extra = count_ % p;
  const size_t bb = static_cast<size_t>(b);
  return bb * base + (bb < extra ? bb : extra);
}

Status RingAllReduce::start(const void* in, void* out, size_t count, strataDataType_t type,
                            strataRedOp_t op) {
  out_ = static_cast<char*>(out);
  count_ = count;
  ts_ = dataTypeSize(type);
  type_ = type;
  op_ = op;
  step_ = 0;
  if (in != out) std::memcpy(out, in, count * ts_);
  if (size_ == 1 || count == 0) return Status::ok();
  if (blockCount(0) > static_cast<size_t>(INT_MAX)) {
    return internalError("mpi ring: a block of " + std::to_string(blockCount(0)) +
                         " elements exceeds an MPI count");
  }
  if (scratch_.size() < blockCount(0) * ts_) scratch_.resize(blockCount(0) * ts_);
  active_ = true;
  Status posted = post();
  if (!posted.isOk()) active_ = false;
  return posted;
}

Status RingAllReduce::post() {
  const int p = size_, r = rank_;
  const bool rs = step_ < p - 1;
  const int t = rs ? step_ : step_ - (p - 1);
  const int sendBlock = rs ? mod(r - t) : mod(r + 1 - t);
  const int recvBlock = rs ? mod(r - t - 1) : mod(r - t);
  char* recvTo = rs ? scratch_.data() : out_ + blockStart(recvBlock) * ts_;
  const MPI_Datatype dt = mpiDatatype(type_);
  STRATA_MPI_CHECK(MPI_Irecv(recvTo, static_cast<int>(blockCount(recvBlock)), dt, mod(r - 1),
                             kRingTag, comm_, &reqs_[0]));
  STRATA_MPI_CHECK(MPI_Isend(out_ + blockStart(sendBlock) * ts_,
                             static_cast<int>(blockCount(sendBlock)), dt, mod(r + 1), kRingTag,
                             comm_, &reqs_[1]));
  return Status::ok();
}

Status RingAllReduce::finish() {
  const int p = size_;
  if (step_ < p - 1) {
    const int recvBlock = mod(rank_ - step_ - 1);
    reduceInto(out_ + blockStart(recvBlock) * ts_, scratch_.data(), blockCount(recvBlock), type_,
               op_);
  }
  if (++step_ == 2 * (p - 1)) {
    active_ = false;
    return Status::ok();
  }
  Status posted = post();
  if (!posted.isOk()) active_ = false;
  return posted;
}

Status RingAllReduce::checkReceived(const MPI_Status& st) {
  const bool rs = step_ < size_ - 1;
  const int t = rs ? step_ : step_ - (size_ - 1);
  const int recvBlock = rs ? mod(rank_ - t - 1) : mod(rank_ - t);
  int got = 0;
  MPI_Get_count(&st, mpiDatatype(type_), &got);
  if (static_cast<size_t>(got) == blockCount(recvBlock)) return Status::ok();
  // A shorter message than the block: the peer's allreduce has another count.
  active_ = false;
  return invalidUsage("mpi ring allreduce (step " + std::to_string(step_) + "): member " +
                      std::to_string(mod(rank_ - 1)) + " sent " + std::to_string(got) +
                      " elements where this member expects " +
                      std::to_string(blockCount(recvBlock)) + " of its " + std::to_string(count_) +
                      "; the ranks disagree on the allreduce's count or type");
}

Status RingAllReduce::test() {
  while (active_) {
    int done = 0;
    MPI_Status st[2];
    const int rc = MPI_Testall(2, reqs_, &done, st);
    if (rc != MPI_SUCCESS) {
      active_ = false;
      return mpiRequestError("mpi ring allreduce (step " + std::to_string(step_) + ")", rc);
    }
    if (!done) return Status::ok();
    STRATA_RETURN_IF_ERROR(checkReceived(st[0]));
    STRATA_RETURN_IF_ERROR(finish());
  }
  return Status::ok();
}

Status RingAllReduce::wait(void (*idle)()) {
  while (active_) {
    MPI_Status st[2];
    MpiWhat what;
    what.call = "MPI_Irecv/MPI_Isend of the ring allreduce";
    what.count = count_;
    what.type = dataTypeName(type_);
    what.owner = step_ < size_ - 1 ? "mpi ring, reduce-scatter" : "mpi ring, all-gather";
    what.rank = rank_;
    what.size = size_;
    what.peer = mod(rank_ - 1);  // the one this member waits to hear from
    const Status waited = mpiWaitAll(2, reqs_, st, MpiRequestKind::kPointToPoint, what, idle);
    if (!waited.isOk()) {
      active_ = false;  // abandoned (mpi_wait.h): never waited on again
      return waited.withContext("ring step " + std::to_string(step_) + " of " +
                                std::to_string(2 * (size_ - 1)));
    }
    STRATA_RETURN_IF_ERROR(checkReceived(st[0]));
    STRATA_RETURN_IF_ERROR(finish());
  }
  return Status::ok();
}

}  // namespace strata::fabric
