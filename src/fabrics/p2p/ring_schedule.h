// The schedule of the ring allreduce, shared by the transports that run it (the mpi fabric's
// mpi_ring.h and p2p_ring.h over any Link): which block each step sends and receives.
//
// For p members and this member r, the range is split into p blocks (the first count % p one
// element longer):
//   reduce-scatter step s = 0..p-2: send block (r - s) mod p to r+1, receive block
//     (r - s - 1) mod p from r-1 into scratch, then reduce it into that block;
//   all-gather step t = 0..p-2: send block (r + 1 - t) mod p, receive block (r - t) mod p
//     straight into place.
// After the reduce-scatter, member r holds the whole reduction of block (r + 1) mod p. One
// step's two messages complete before the next step is posted, and messages between two
// members match in order, so every step pairs up with its neighbours' same step.
#pragma once

#include <cstddef>

namespace strata::fabric {

struct RingSchedule {
  int rank = 0, size = 1;
  size_t count = 0;  // elements of the whole range

  int steps() const { return 2 * (size - 1); }
  bool reducing(int step) const { return step < size - 1; }  // a reduce-scatter step
  int sendBlock(int step) const {
    return reducing(step) ? mod(rank - step) : mod(rank + 1 - (step - (size - 1)));
  }
  int recvBlock(int step) const {
    return reducing(step) ? mod(rank - step - 1) : mod(rank - (step - (size - 1)));
  }
  int right() const { return mod(rank + 1); }  // where every step sends
  int left() const { return mod(rank - 1); }   // where every step receives from
  size_t blockStart(int b) const {
    const size_t p = static_cast<size_t>(size), base = count / p, extra = count % p;
    const size_t bb = static_cast<size_t>(b);
    return bb * base + (bb < extra ? bb : extra);
  }
  size_t blockCount(int b) const { return blockStart(b + 1) - blockStart(b); }
  int mod(int x) const { return ((x % size) + size) % size; }
};

}  // namespace strata::fabric
