// strata-perf --overlap: how much of a nonblocking collective a computation hides. For each
// size, out of place, every repeat times in turn
//   (a) the blocking call alone, -n calls back to back;
//   (b) the computation alone (perf_compute.h), -n times;
//   (c) -n times: the nonblocking call, the computation, then strataWait;
// and the fraction hidden is (a + b - c) / a: 1 when (c) costs no more than the computation
// (the collective ran entirely behind it), 0 when it costs a + b (nothing overlapped). Unless
// --compute-us sizes it, the computation is calibrated on each rank to that rank's time of (a),
// measured (twice, the lower kept) once per size after the warm-up.
#include <algorithm>
#include <cmath>

#include "perf_bench.h"

namespace strata::tools {

bool Bench::overlapped(const Geometry& g, long long passes, double* checksum) {
  strataRequest_t request = nullptr;
  if (!callStrata(kOutOfPlace, g, 0, &request)) return false;
  *checksum = compute_->run(passes);
  return waitStrata(&request, g);
}

Status Bench::runOverlap(const Geometry& g, PerfRow* row) {
  OverlapResult& r = row->overlap;
  const int reps = o_.repeat;
  bool ok = true;
  double checksum = 0;
  for (int w = 0; w < o_.warmup && ok; ++w) ok = callStrata(kOutOfPlace, g, 0, nullptr);
  for (int w = 0; w < o_.warmup && ok; ++w) ok = overlapped(g, 1, &checksum);
  // The lower of two timings: the first may still pay for setup the warm-up did not reach.
  double targetUs = o_.computeUs;
  if (targetUs == 0 && ok) {
    const double first = timeIterations(kStrata, kOutOfPlace, g, &ok);
    const double second = ok ? timeIterations(kStrata, kOutOfPlace, g, &ok) : first;
    targetUs = std::min(first, second) * 1e6;
  }
  STRATA_RETURN_IF_ERROR(agreeOk(ok));
  const long long passes = compute_->passesFor(targetUs);
  const double reference = compute_->run(passes);

  // times: (a), (b), (c) per repeat, in seconds per call.
  std::vector<double> times(3 * static_cast<size_t>(reps), 0.0);
  bool computeOk = true;
  for (int rep = 0; rep < reps && ok; ++rep) {
    times[rep] = timeIterations(kStrata, kOutOfPlace, g, &ok);
    MPI_Barrier(mpi_);
    double t0 = MPI_Wtime();
    for (int i = 0; i < o_.iters; ++i) computeOk = compute_->run(passes) == reference && computeOk;
    times[reps + rep] = (MPI_Wtime() - t0) / o_.iters;
    MPI_Barrier(mpi_);
    t0 = MPI_Wtime();
    for (int i = 0; i < o_.iters && ok; ++i) {
      ok = overlapped(g, passes, &checksum);
      computeOk = checksum == reference && computeOk;
    }
    times[2 * reps + rep] = (MPI_Wtime() - t0) / o_.iters;
  }
  STRATA_RETURN_IF_ERROR(agreeOk(ok));
  reduceTimes(&times);
  for (int rep = 0; rep < reps; ++rep) {
    r.collSamplesUs.push_back(times[rep] * 1e6);
    r.compSamplesUs.push_back(times[reps + rep] * 1e6);
    r.bothSamplesUs.push_back(times[2 * reps + rep] * 1e6);
  }
  r.collUs = median(r.collSamplesUs);
  r.compUs = median(r.compSamplesUs);
  r.bothUs = median(r.bothSamplesUs);
  r.hiddenRaw = r.collUs > 0 ? (r.collUs + r.compUs - r.bothUs) / r.collUs : 0;
  r.hidden = std::clamp(r.hiddenRaw, 0.0, 1.0);
  long long passesMinMax[2] = {passes, -passes};
  MPI_Allreduce(MPI_IN_PLACE, passesMinMax, 2, MPI_LONG_LONG, MPI_MIN, mpi_);
  r.passesMin = passesMinMax[0];
  r.passesMax = -passesMinMax[1];

  // The blocking call alone is the row's strata measurement (busbw, the plot).
  Measurement& m = row->strata[kOutOfPlace];
  m.samplesUs = r.collSamplesUs;
  m.timeUs = r.collUs;
  m.algbw = m.timeUs > 0 ? static_cast<double>(g.bytes) / 1e3 / m.timeUs : 0;
  m.busbw = m.algbw * busFactor(o_.coll, nranks_);

  // The check: (c) on fresh inputs, its result compared element by element.
  if (o_.check > 0) {
    long long wrong = 0;
    for (int c = 0; c < o_.check && ok; ++c) {
      prepareCheck(kOutOfPlace, g, 0);
      MPI_Barrier(mpi_);
      ok = overlapped(g, passes, &checksum);
      computeOk = checksum == reference && computeOk;
      if (ok) wrong = std::max(wrong, wrongIn(kNonblocking, kOutOfPlace, g, 0));
    }
    STRATA_RETURN_IF_ERROR(agreeOk(ok));
    MPI_Allreduce(MPI_IN_PLACE, &wrong, 1, MPI_LONG_LONG, MPI_SUM, mpi_);
    r.wrong = wrong;
  }
  int allOk = computeOk ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &allOk, 1, MPI_INT, MPI_LAND, mpi_);
  r.computeOk = allOk != 0;
  return Status::ok();
}

}  // namespace strata::tools
