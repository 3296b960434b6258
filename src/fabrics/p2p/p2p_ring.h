// A ring allreduce over point-to-point messages (p2p_link.h), advanced by test() calls: the
// allReduceStart of fabrics built on p2p_collectives.h, and the large blocking allreduce on
// its own channel. The protocol is fabrics/mpi/mpi_ring.h's, on a Link instead of MPI:
//
// For p members and this member r, the range is split into p blocks (the first count % p one
// element longer):
//   reduce-scatter step s = 0..p-2: send block (r - s) mod p to r+1, receive block
//     (r - s - 1) mod p from r-1 into scratch, then reduce it into that block;
//   all-gather step t = 0..p-2: send block (r + 1 - t) mod p, receive block (r - t) mod p
//     straight into place.
// After the reduce-scatter, member r holds the whole reduction of block (r + 1) mod p. One
// step's two messages complete before the next step is posted, and the Link matches messages
// of one channel between two members in order, so every step of every ring on the channel
// pairs up with its peer's same step.
#pragma once

#include <cstddef>
#include <vector>

#include "common/status.h"
#include "fabrics/p2p/p2p_link.h"
#include "strata/strata.h"

namespace strata::fabric::p2p {

class RingAllReduce {
 public:
  RingAllReduce(Link& link, Channel ch)
      : link_(link), ch_(ch), rank_(link.rank()), size_(link.size()) {}

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
  size_t blockStart(int b) const;
  size_t blockCount(int b) const { return blockStart(b + 1) - blockStart(b); }
  int mod(int x) const { return ((x % size_) + size_) % size_; }

  Link& link_;
  Channel ch_;
  int rank_, size_;
  bool active_ = false;
  char* out_ = nullptr;
  size_t count_ = 0, ts_ = 0;
  strataDataType_t type_ = strataFloat32;
  strataRedOp_t op_ = strataSum;
  int step_ = 0;               // 0..2(p-1)
  std::vector<char> scratch_;  // one block; grows, never shrinks
};

}  // namespace strata::fabric::p2p
