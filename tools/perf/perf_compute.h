// strata-perf --overlap's computation: a deterministic, CPU-bound loop over a private buffer,
// standing in for the work a training step does while its gradients are reduced. It never
// calls strata or MPI, so whatever progress the collective makes meanwhile is strata's own
// (its progress thread's).
//
// One pass updates every element of a 64 KiB float buffer (x = x * a + b), which stays in the
// core's caches: the loop costs CPU time, not memory bandwidth. A run starts from the same
// buffer every time, so the same number of passes gives the same checksum, bit for bit.
#pragma once

#include <vector>

namespace strata::tools {

class Compute {
 public:
  // Measures the time of one pass on the calling thread (a few milliseconds).
  Compute();

  // The passes whose time is nearest `us` microseconds on this thread now; at least 1. Starts
  // from the calibrated pass time, then runs the loop and rescales twice, so a pass time that
  // differs at this length (caches, frequency, other load) is taken into account.
  long long passesFor(double us);
  // Runs `passes` passes from the starting buffer; returns the buffer's sum.
  double run(long long passes);
  double passUs() const { return passUs_; }

 private:
  std::vector<float> buf_;
  double passUs_ = 1;
};

}  // namespace strata::tools
