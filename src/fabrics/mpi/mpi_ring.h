// A ring allreduce over nonblocking point-to-point messages, advanced by test() calls: the mpi
// fabric's allReduceStart for large calls.
//
// Why not MPI_Iallreduce: Open MPI 4.1's libnbc runs a binomial reduce then broadcast for
// fewer than 4 ranks, so on the 2-rank inter-host groups of a 2-host job every byte crosses
// the link one way and then the other, one direction idle at a time: half the link. The ring
// sends and receives at once in every step, using both directions of every link.
//
// The schedule (which block each step sends and receives) is fabrics/p2p/ring_schedule.h's,
// which the ucx fabric's ring runs too. One step's two messages complete before the next step
// is posted; messages between two members are matched in order (MPI's non-overtaking rule),
// so one tag serves every step.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <vector>

#include "common/status.h"
#include "fabrics/p2p/ring_schedule.h"
#include "strata/strata.h"

namespace strata::fabric {

class RingAllReduce {
 public:
  RingAllReduce(MPI_Comm comm, int rank, int size) : comm_(comm), rank_(rank), size_(size) {
    ring_.rank = rank;
    ring_.size = size;
  }

  // Starts the allreduce of `in` into `out` (in == out: in place). Both stay in use until
  // done() turns true or wait() returns.
  Status start(const void* in, void* out, size_t count, strataDataType_t type, strataRedOp_t op);
  // Advances it as far as completed messages allow; returns an error from MPI.
  Status test();
  // Waits until done, within the thread's deadline (common/deadline.h); `idle` runs between
  // polls. On expiry or any failure the messages in flight are abandoned and the ring is
  // inactive (it may be started again only after the peers have failed too: the communicator
  // is then in its error state anyway). A received block of the wrong length (peers that
  // disagree on the count) is strataInvalidUsage.
  Status wait(void (*idle)() = nullptr);
  bool active() const { return active_; }
  // The receive block, handed over when the fabric goes after an abort (common/mpi_wait.h:
  // keepUntilExit): an abandoned receive may still name it.
  std::vector<char> takeScratch() { return std::move(scratch_); }

 private:
  Status post();    // posts the current step's send and receive
  Status finish();  // after both completed: reduces (reduce-scatter) and moves on
  Status checkReceived(const MPI_Status& st);  // the receive of the current step
  size_t blockStart(int b) const { return ring_.blockStart(b); }
  size_t blockCount(int b) const { return ring_.blockCount(b); }

  MPI_Comm comm_;
  int rank_, size_;
  RingSchedule ring_;  // this member's place and the current count
  bool active_ = false;
  char* out_ = nullptr;
  size_t count_ = 0, ts_ = 0;
  strataDataType_t type_ = strataFloat32;
  strataRedOp_t op_ = strataSum;
  int step_ = 0;  // 0..2(p-1)
  MPI_Request reqs_[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  std::vector<char> scratch_;  // one block; grows, never shrinks: no allocation when steady
};

}  // namespace strata::fabric
