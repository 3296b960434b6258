// A ring allreduce over point-to-point messages (p2p_link.h), advanced by test() calls: the
// allReduceStart of fabrics built on p2p_collectives.h, and their large blocking allreduce on
// a channel of its own. The schedule is ring_schedule.h's (the mpi fabric's ring runs the
// same one over MPI); the Link's in-order matching per channel pairs every step with the
// neighbours' same step.
#pragma once

#include <cstddef>
#include <vector>

#include "common/status.h"
#include "fabrics/p2p/p2p_link.h"
#include "fabrics/p2p/ring_schedule.h"
#include "strata/strata.h"

namespace strata::fabric::p2p {

class RingAllReduce {
 public:
  RingAllReduce(Link& link, Channel ch) : link_(link), ch_(ch) {
    ring_.rank = link.rank();
    ring_.size = link.size();
  }

  // Starts the allreduce of `in` into `out` (in == out: in place). Both stay in use until
  // active() turns false or wait() returns.
  Status start(const void* in, void* out, size_t count, strataDataType_t type, strataRedOp_t op);
  // Advances it as far as completed messages allow.
  Status test();
  // Until done, within the thread's deadline. On any failure the messages in flight are
  // abandoned (p2p_link.h) and the ring is inactive. A received block of the wrong length
  // (peers that disagree on the count) is strataInvalidUsage.
  Status wait();
  bool active() const { return active_; }
  // The receive block, for keepUntilExit when the fabric goes after an abort.
  std::vector<char> takeScratch() { return std::move(scratch_); }

 private:
  Status post();    // the current step's send and receive
  Status finish();  // after both completed: reduces (reduce-scatter) and moves on
  Status failed(const Status& st);

  Link& link_;
  Channel ch_;
  RingSchedule ring_;  // this member's place and the current count
  bool active_ = false;
  char* out_ = nullptr;
  size_t ts_ = 0;
  strataDataType_t type_ = strataFloat32;
  strataRedOp_t op_ = strataSum;
  int step_ = 0;               // 0..ring_.steps()
  std::vector<char> scratch_;  // one block; grows, never shrinks
};

}  // namespace strata::fabric::p2p
