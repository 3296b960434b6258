// bench/trace_cost's paired measurement: one job, two communicators over the same ranks, one
// made with STRATA_TRACE set and one without (strata reads its environment once per process:
// the cache's test hook, common/env.h, lets the second one see the change; hence a build
// target, tests/CMakeLists.txt, linked to strata_core), used in alternating blocks of calls, so that
// both see the same machine at the same moments (on a shared virtual machine the time of a
// call drifts by far more than the timeline costs: runs of separate jobs compare badly).
//
//   paired BYTES BLOCKS CALLS_PER_BLOCK TRACE_PATTERN
//
// Prints, on rank 0, one line per size: bytes, the median over blocks of the mean time per call
// off and on, their ratio, and the median of the per-block ratios (each "on" block against the
// "off" block just before it).
#include <mpi.h>
#include <strata/strata.h>
#include <strata/strata_mpi.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "common/env.h"

namespace {

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

bool ok(strataResult_t r, const char* what) {
  if (r == strataSuccess) return true;
  std::fprintf(stderr, "paired: %s: %s\n", what, strataGetLastError(nullptr));
  return false;
}

// The mean microseconds per allreduce over `calls` calls, the ranks in step at both ends.
double block(strataComm_t comm, std::vector<float>& in, std::vector<float>& out, int calls) {
  MPI_Barrier(MPI_COMM_WORLD);
  const double t0 = MPI_Wtime();
  for (int i = 0; i < calls; ++i) {
    if (!ok(strataAllReduce(in.data(), out.data(), in.size(), strataFloat32, strataSum, comm,
                            nullptr),
            "allreduce"))
      std::exit(1);
  }
  MPI_Barrier(MPI_COMM_WORLD);
  return (MPI_Wtime() - t0) / calls * 1e6;
}

}  // namespace

int main(int argc, char** argv) {
  int provided = 0;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  if (argc != 5) {
    std::fprintf(stderr, "usage: paired BYTES BLOCKS CALLS_PER_BLOCK TRACE_PATTERN\n");
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  const size_t bytes = std::strtoull(argv[1], nullptr, 10);
  const int blocks = std::atoi(argv[2]);
  const int calls = std::atoi(argv[3]);
  strataComm_t off = nullptr, on = nullptr;
  unsetenv("STRATA_TRACE");
  strata::env::detail::resetForTesting();
  if (!ok(strataCommInitMPI(&off, MPI_COMM_WORLD), "init off")) MPI_Abort(MPI_COMM_WORLD, 1);
  setenv("STRATA_TRACE", argv[4], 1);
  strata::env::detail::resetForTesting();
  if (!ok(strataCommInitMPI(&on, MPI_COMM_WORLD), "init on")) MPI_Abort(MPI_COMM_WORLD, 1);
  std::vector<float> in(std::max<size_t>(bytes / sizeof(float), 1), 1.0f), out(in.size());
  (void)block(off, in, out, calls);  // warm-up: buffers, plans, the timeline's first pages
  (void)block(on, in, out, calls);
  std::vector<double> tOff, tOn, ratio;
  for (int b = 0; b < blocks; ++b) {
    tOff.push_back(block(off, in, out, calls));
    tOn.push_back(block(on, in, out, calls));
    ratio.push_back(tOn.back() / tOff.back());
  }
  int rank = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (rank == 0) {
    std::printf("%zu %.3f %.3f %.4f %.4f\n", in.size() * sizeof(float), median(tOff),
                median(tOn), median(tOn) / median(tOff), median(ratio));
  }
  strataCommDestroy(on);
  strataCommDestroy(off);
  MPI_Finalize();
  return 0;
}
