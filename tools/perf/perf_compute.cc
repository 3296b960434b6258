#include "perf_compute.h"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <numeric>

namespace strata::tools {
namespace {

constexpr size_t kElements = 16384;  // 64 KiB: the core's L2
constexpr double kCalibrationSeconds = 0.002;
constexpr int kCalibrationTries = 3;
constexpr int kRescales = 2;

double secondsOf(Compute* c, long long passes) {
  const auto t0 = std::chrono::steady_clock::now();
  volatile double sink = c->run(passes);
  (void)sink;
  return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
}

}  // namespace

Compute::Compute() : buf_(kElements) {
  // Grow the run until it takes a couple of milliseconds, then keep the fastest of a few tries
  // (the others met an interruption).
  long long passes = 1;
  secondsOf(this, passes);
  while (secondsOf(this, passes) < kCalibrationSeconds && passes < (1LL << 30)) passes *= 2;
  double best = secondsOf(this, passes);
  for (int i = 1; i < kCalibrationTries; ++i) best = std::min(best, secondsOf(this, passes));
  passUs_ = std::max(best * 1e6 / static_cast<double>(passes), 1e-3);
}

long long Compute::passesFor(double us) {
  long long passes = std::max(1LL, std::llround(us / passUs_));
  for (int i = 0; i < kRescales; ++i) {
    const double took = secondsOf(this, passes) * 1e6;
    if (took <= 0) break;
    passes = std::max(1LL, std::llround(static_cast<double>(passes) * us / took));
  }
  return passes;
}

double Compute::run(long long passes) {
  float* x = buf_.data();
  for (size_t i = 0; i < kElements; ++i) x[i] = static_cast<float>(i % 251) / 251.0f;
  // Every pass reads the previous one's values: no pass can be skipped or reordered.
  for (long long p = 0; p < passes; ++p) {
    for (size_t i = 0; i < kElements; ++i) x[i] = x[i] * 0.9999f + 0.0001f;
  }
  return std::accumulate(buf_.begin(), buf_.end(), 0.0);
}

}  // namespace strata::tools
