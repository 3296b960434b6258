// strata-perf's check (-c): inputs whose results are exactly predictable in every type, and the
// count of wrong elements, as nccl-tests' verifiable kernels do.
//
// Every input is a small integer, so every partial result of sum, avg, max, min and prod is an
// integer that the type represents exactly, whatever order the ranks combine in (bf16 holds
// every integer up to 256, fp16 up to 2048; int8 never overflows). Hence results are compared
// bit for bit, with no tolerance:
//   sum   rank r < K adds (q % 4), where q = (i*(r+1) + r) % 127 varies with the element i and
//         the rank, and K ranks keep the total within the type's exact range; the other ranks
//         add 0.
//   avg   rank r < K adds nranks * (q % m), so the sum is a multiple of nranks and the division
//         is exact; m is 4, or 2 when nranks is large for the type. Beyond the type's exact
//         range (bf16 over 256 ranks, int8 over 127) m is 1: all zeros, a weak check.
//   max/min  one rank owns each element (rank (i % 127) % nranks) and wins it with a value
//         from -1..3 (max) or -3..1 (min); the others give -3..-2 (max) or 2..3 (min). Values
//         are shifted up by 3 for unsigned types.
//   prod  mostly 1, with a 2 from the element's owner (as for max) and from up to five more
//         ranks (|product| <= 64), and -1s for signed types.
//   allgather, broadcast  q itself (0..126), so every rank's block differs from the others' (a
//         broadcast that delivers a rank other than the root's input is caught).
// Inputs depend on i only through i % 127, which no power-of-two block size is a multiple of,
// so a block delivered to the wrong rank is caught.
#pragma once

#include <cstddef>
#include <vector>

#include "perf_args.h"
#include "strata/strata.h"

namespace strata::tools {

class Pattern {
 public:
  Pattern(Collective coll, strataDataType_t type, strataRedOp_t op, int nranks);

  // Writes `rank`'s input elements [first, first + n) to buf (n elements).
  void fill(int rank, void* buf, size_t first, size_t n) const;

  // Elements of buf (n of them) that differ from the reduction of all ranks' inputs at
  // positions [first, first + n) (allreduce, reduce: first 0; reduce-scatter: rank * recvcount).
  size_t wrongReduced(const void* buf, size_t first, size_t n) const;

  // Elements of an all-gather's result (nranks blocks of sendCount) that differ from each rank's
  // input.
  size_t wrongGathered(const void* buf, size_t sendCount) const;

  // Elements of a broadcast's result (n elements) that differ from `root`'s input.
  size_t wrongBroadcast(const void* buf, int root, size_t n) const;

 private:
  static constexpr size_t kPeriod = 127;

  double input(int rank, size_t phase) const;
  std::vector<unsigned char> encodeRow(const std::vector<double>& values) const;
  std::vector<unsigned char> inputRow(int rank) const;
  size_t wrong(const void* buf, const std::vector<unsigned char>& row, size_t first,
               size_t n) const;

  Collective coll_;
  strataDataType_t type_;
  strataRedOp_t op_;
  int nranks_;
  size_t typeSize_;
  bool signed_;
  int contributors_ = 0;                 // K above
  int avgModulus_ = 4;                   // m above
  std::vector<unsigned char> expected_;  // kPeriod reduced elements, encoded
};

}  // namespace strata::tools
