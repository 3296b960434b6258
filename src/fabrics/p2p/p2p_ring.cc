#include "fabrics/p2p/p2p_ring.h"

#include <cstring>
#include <string>

#include "common/datatype.h"
#include "common/reduce.h"

namespace strata::fabric::p2p {

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
  // Even a count of 0 runs the steps (empty messages): a peer with another count then fails
  // on the length instead of waiting for steps this member skipped.
  if (size_ == 1) return Status::ok();
  if (scratch_.size() < blockCount(0) * ts_) scratch_.resize(blockCount(0) * ts_);
  active_ = true;
  return post();
}

Status RingAllReduce::failed(const Status& st) {
  active_ = false;
  return st.withContext("ring allreduce of " + std::to_string(count_) + " " +
                        dataTypeName(type_) + ", step " + std::to_string(step_) + " of " +
                        std::to_string(2 * (size_ - 1)) +
                        (step_ < size_ - 1 ? " (reduce-scatter)" : " (all-gather)"));
}

Status RingAllReduce::post() {
  const int p = size_, r = rank_;
  const bool rs = step_ < p - 1;
  const int t = rs ? step_ : step_ - (p - 1);
  const int sendBlock = rs ? mod(r - t) : mod(r + 1 - t);
  const int recvBlock = rs ? mod(r - t - 1) : mod(r - t);
  char* recvTo = rs ? scratch_.data() : out_ + blockStart(recvBlock) * ts_;
  // The receive first: a transport may match an arriving message to it at once.
  Status st = link_.postRecv(ch_, mod(r - 1), recvTo, blockCount(recvBlock) * ts_);
  if (st.isOk()) {
    st = link_.postSend(ch_, mod(r + 1), out_ + blockStart(sendBlock) * ts_,
                        blockCount(sendBlock) * ts_);
  }
  return st.isOk() ? st : failed(st);
}

Status RingAllReduce::finish() {
  if (step_ < size_ - 1) {
    const int recvBlock = mod(rank_ - step_ - 1);
    reduceInto(out_ + blockStart(recvBlock) * ts_, scratch_.data(), blockCount(recvBlock), type_,
               op_);
  }
  if (++step_ == 2 * (size_ - 1)) {
    active_ = false;
    return Status::ok();
  }
  return post();
}

Status RingAllReduce::test() {
  while (active_) {
    bool done = false;
    const Status st = link_.test(ch_, &done);
    if (!st.isOk()) return failed(st);
    if (!done) return Status::ok();
    STRATA_RETURN_IF_ERROR(finish());
  }
  return Status::ok();
}

Status RingAllReduce::wait() {
  while (active_) {
    const Status st = link_.wait(ch_, "ring allreduce");
    if (!st.isOk()) return failed(st);
    STRATA_RETURN_IF_ERROR(finish());
  }
  return Status::ok();
}

}  // namespace strata::fabric::p2p
