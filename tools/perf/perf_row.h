// One row of strata-perf's table: what was measured at one size (per implementation and
// placement: times, bandwidths, the check's count; --overlap's three timings), and the
// arithmetic its columns share. perf_bench.h fills rows; perf_report.h and perf_export.h print
// them.
#pragma once

#include <cstddef>
#include <vector>

#include "common/collective.h"

namespace strata::tools {

enum Placement { kOutOfPlace = 0, kInPlace = 1 };
// The calls a row times: strata's blocking ones, and next to them MPI's (--vs mpi) or strata's
// nonblocking ones (--nonblocking).
enum Impl { kStrata = 0, kVs = 1, kNonblocking = 2 };

struct Measurement {
  double timeUs = 0;     // median over repeats of the mean time per call (reduced over ranks)
  double algbw = 0;      // GB/s (1e9 B/s): size / time
  double busbw = 0;      // algbw times the collective's factor
  long long wrong = -1;  // wrong elements, summed over ranks; -1 when not checked
  std::vector<double> samplesUs;  // the mean time per call of every repeat
};

// --overlap, one size (out of place). Times are per call, reduced over ranks as -a says, the
// median over repeats.
struct OverlapResult {
  double collUs = 0;  // (a) the blocking call alone
  double compUs = 0;  // (b) the computation alone
  double bothUs = 0;  // (c) the nonblocking call, the computation, then strataWait
  // Fraction of the collective hidden behind the computation: (a + b - c) / a, clamped to
  // [0, 1], and as measured (below 0: overlapping cost more than running one after the other;
  // above 1: noise, or the computation ran faster alongside).
  double hidden = 0;
  double hiddenRaw = 0;
  long long passesMin = 0, passesMax = 0;  // the computation's passes, over ranks
  long long wrong = -1;                    // the check of (c), summed over ranks
  bool computeOk = true;  // every rank's computation in (c) gave the same checksum as alone
  std::vector<double> collSamplesUs, compSamplesUs, bothSamplesUs;
};

struct PerfRow {
  size_t bytes = 0;       // the size column (nccl-tests': the whole array)
  size_t count = 0;       // the count column (the call's count: per rank for RS and AG)
  Measurement strata[2];  // by Placement: strata's blocking call (--overlap: out of place, (a))
  Measurement vs[2];      // --vs mpi
  Measurement nonblocking[2];  // --nonblocking
  OverlapResult overlap;       // --overlap

  Measurement& at(Impl impl, Placement p) {
    return impl == kStrata ? strata[p] : impl == kVs ? vs[p] : nonblocking[p];
  }
  const Measurement& at(Impl impl, Placement p) const {
    return impl == kStrata ? strata[p] : impl == kVs ? vs[p] : nonblocking[p];
  }
};

// busbw / algbw: 2(n-1)/n for allreduce, (n-1)/n for reduce-scatter and all-gather, 1 for
// broadcast and reduce (nccl-tests' GetBw).
double busFactor(Collective c, int nranks);

// "strataAllReduce", or with `nonblocking` "strataIAllReduce", ...: the call strata-perf times.
const char* strataCallName(Collective c, bool nonblocking);

// The median of v (0 when empty): what a row reports of its repeats.
double median(std::vector<double> v);

}  // namespace strata::tools
