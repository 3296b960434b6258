#include "fabrics/mpi/mpi_ring.h"

#include <climits>
#include <cstring>
#include <string>

#include "common/datatype.h"
#include "common/mpi_check.h"
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
  return post();
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
  return post();
}

Status RingAllReduce::test() {
  while (active_) {
    int done = 0;
    STRATA_MPI_CHECK(MPI_Testall(2, reqs_, &done, MPI_STATUSES_IGNORE));
    if (!done) return Status::ok();
    STRATA_RETURN_IF_ERROR(finish());
  }
  return Status::ok();
}

Status RingAllReduce::wait() {
  while (active_) {
    STRATA_MPI_CHECK(MPI_Waitall(2, reqs_, MPI_STATUSES_IGNORE));
    STRATA_RETURN_IF_ERROR(finish());
  }
  return Status::ok();
}

}  // namespace strata::fabric
