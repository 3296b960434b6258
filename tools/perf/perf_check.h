// strata-perf's check (-c) around one call on one buffer set: where each collective reads its
// input and leaves its result, in place and out of place (NCCL's conventions for strata's calls,
// MPI's for --vs mpi); the inputs written and the output poisoned before the call, the wrong
// elements counted after it. Which values are right is perf_data.h's Pattern; where they are,
// this.
#pragma once

#include <cstddef>

#include "common/collective.h"
#include "perf_args.h"
#include "perf_data.h"
#include "perf_row.h"

namespace strata::tools {

class PerfCheck {
 public:
  // `pattern` must outlive the check.
  PerfCheck(const Pattern& pattern, Collective coll, int root, int rank, size_t typeSize)
      : pattern_(pattern), coll_(coll), root_(root), rank_(rank), typeSize_(typeSize) {}

  // Before a call of geometry `g`: this rank's input where the call reads it (send, or recv in
  // place), and a poison no pattern produces where it writes.
  void prepare(Placement p, const Geometry& g, unsigned char* send, unsigned char* recv) const;
  // After it: the wrong elements of the result in `recv` of `impl`'s call.
  long long wrongIn(Impl impl, Placement p, const Geometry& g, const unsigned char* recv) const;

 private:
  const Pattern& pattern_;
  Collective coll_;
  int root_, rank_;
  size_t typeSize_;
};

}  // namespace strata::tools
