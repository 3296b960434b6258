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

Status RingAllReduce::start(const void* in, void* out, size_t count, strataDataType_t type,
                            strataRedOp_t op) {
  out_ = static_cast<char*>(out);
  count_ = count;
  ring_.count = count;
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
  const int sendBlock = ring_.sendBlock(step_), recvBlock = ring_.recvBlock(step_);
  char* recvTo = ring_.reducing(step_) ? scratch_.data() : out_ + blockStart(recvBlock) * ts_;
  const MPI_Datatype dt = mpiDatatype(type_);
  STRATA_MPI_CHECK(MPI_Irecv(recvTo, static_cast<int>(blockCount(recvBlock)), dt, ring_.left(),
                             kRingTag, comm_, &reqs_[0]));
  STRATA_MPI_CHECK(MPI_Isend(out_ + blockStart(sendBlock) * ts_,
                             static_cast<int>(blockCount(sendBlock)), dt, ring_.right(), kRingTag,
                             comm_, &reqs_[1]));
  return Status::ok();
}

Status RingAllReduce::finish() {
  if (ring_.reducing(step_)) {
    const int recvBlock = ring_.recvBlock(step_);
    reduceInto(out_ + blockStart(recvBlock) * ts_, scratch_.data(), blockCount(recvBlock), type_,
               op_);
  }
  if (++step_ == ring_.steps()) {
    active_ = false;
    return Status::ok();
  }
  Status posted = post();
  if (!posted.isOk()) active_ = false;
  return posted;
}

Status RingAllReduce::checkReceived(const MPI_Status& st) {
  const int recvBlock = ring_.recvBlock(step_);
  int got = 0;
  MPI_Get_count(&st, mpiDatatype(type_), &got);
  if (static_cast<size_t>(got) == blockCount(recvBlock)) return Status::ok();
  // A shorter message than the block: the peer's allreduce has another count.
  active_ = false;
  return invalidUsage("mpi ring allreduce (step " + std::to_string(step_) + "): member " +
                      std::to_string(ring_.left()) + " sent " + std::to_string(got) +
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
    what.peer = ring_.left();  // the one this member waits to hear from
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
