#include "fabrics/p2p/p2p_ring.h"

#include <cstring>
#include <string>

#include "common/datatype.h"
#include "common/reduce.h"

namespace strata::fabric::p2p {

Status RingAllReduce::start(const void* in, void* out, size_t count, strataDataType_t type,
                            strataRedOp_t op) {
  out_ = static_cast<char*>(out);
  ring_.count = count;
  ts_ = dataTypeSize(type);
  type_ = type;
  op_ = op;
  step_ = 0;
  if (in != out) copyBytes(out, in, count * ts_);
  // Even a count of 0 runs the steps (empty messages): a peer with another count then fails
  // on the length instead of waiting for steps this member skipped.
  if (ring_.size == 1) return Status::ok();
  if (scratch_.size() < ring_.blockCount(0) * ts_) scratch_.resize(ring_.blockCount(0) * ts_);
  active_ = true;
  return post();
}

Status RingAllReduce::failed(const Status& st) {
  active_ = false;
  return st.withContext("ring allreduce of " + std::to_string(ring_.count) + " " +
                        dataTypeName(type_) + ", step " + std::to_string(step_ + 1) + " of " +
                        std::to_string(ring_.steps()) +
                        (ring_.reducing(step_) ? " (reduce-scatter)" : " (all-gather)"));
}

Status RingAllReduce::post() {
  const int sendBlock = ring_.sendBlock(step_), recvBlock = ring_.recvBlock(step_);
  char* recvTo = ring_.reducing(step_) ? scratch_.data() : out_ + ring_.blockStart(recvBlock) * ts_;
  // The receive first: a transport may match an arriving message to it at once.
  Status st = link_.postRecv(ch_, ring_.left(), recvTo, ring_.blockCount(recvBlock) * ts_);
  if (st.isOk()) {
    st = link_.postSend(ch_, ring_.right(), out_ + ring_.blockStart(sendBlock) * ts_,
                        ring_.blockCount(sendBlock) * ts_);
  }
  return st.isOk() ? st : failed(st);
}

Status RingAllReduce::finish() {
  if (ring_.reducing(step_)) {
    const int b = ring_.recvBlock(step_);
    reduceInto(out_ + ring_.blockStart(b) * ts_, scratch_.data(), ring_.blockCount(b), type_, op_);
  }
  if (++step_ == ring_.steps()) {
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
