// strata-tune's fit of the cost model to timed plans (tools/tune/tune_fit.h): the non-negative
// least-squares solver on hand-worked problems and against every active set, and the fit itself
// on timings the cost model made from known parameters: it recovers them where the timings can
// tell them apart, and never leaves the model worse than it started.
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <string>
#include <vector>

#include "decompose/cost_model.h"
#include "decompose/plan.h"
#include "decompose/planner.h"
#include "topology/hierarchy.h"
#include "tune_fit.h"

namespace strata::tools {
namespace {

using Matrix = std::vector<std::vector<double>>;
using topo::Hierarchy;
using topo::Level;
using topo::LinkKind;
using topo::LinkModel;

double residualNorm2(const Matrix& a, const std::vector<double>& b, const std::vector<double>& x) {
  double s = 0;
  for (size_t i = 0; i < a.size(); ++i) {
    double r = -b[i];
    for (size_t j = 0; j < x.size(); ++j) r += a[i][j] * x[j];
    s += r * r;
  }
  return s;
}

// --- Non-negative least squares -------------------------------------------------------------

TEST_CASE("nnls: an exact system with a positive solution is solved exactly", "[tune_fit]") {
  // [1 2; 3 4] x = [5 11]: x = (1, 2).
  const std::vector<double> x = nonNegativeLeastSquares({{1, 2}, {3, 4}}, {5, 11});
  REQUIRE(x.size() == 2);
  CHECK(x[0] == Approx(1).epsilon(1e-9));
  CHECK(x[1] == Approx(2).epsilon(1e-9));
}

TEST_CASE("nnls: a negative unconstrained coordinate is held at 0, the other refitted",
          "[tune_fit]") {
  // The line x0 + x1 t through (1, 3), (2, 2), (3, 1): unconstrained x = (4, -1). With x1 >= 0
  // the best is x1 = 0 and x0 = the mean of b, 2 (not 4, which clipping would give): at (2, 0)
  // the residual b - A x is (1, 0, -1) and A's second column (1, 2, 3) has a negative product
  // with it, so raising x1 cannot help (Kuhn-Tucker).
  const Matrix a = {{1, 1}, {1, 2}, {1, 3}};
  const std::vector<double> b = {3, 2, 1};
  const std::vector<double> x = nonNegativeLeastSquares(a, b);
  REQUIRE(x.size() == 2);
  CHECK(x[0] == Approx(2).epsilon(1e-9));
  CHECK(x[1] == 0);
  CHECK(residualNorm2(a, b, x) == Approx(2).epsilon(1e-9));
}

TEST_CASE("nnls: the first coordinate negative, the second positive", "[tune_fit]") {
  // The identity with b = (-1, 3): x = (0, 3); and a coupled case, [1 1; 0 1] x = (1, 3) whose
  // unconstrained solution is (-2, 3): with x0 = 0 the best x1 minimises (x1 - 1)^2 + (x1 - 3)^2,
  // x1 = 2, and then raising x0 would only add to the first residual (1 - 2 = -1 < 0).
  std::vector<double> x = nonNegativeLeastSquares({{1, 0}, {0, 1}}, {-1, 3});
  REQUIRE(x.size() == 2);
  CHECK(x[0] == 0);
  CHECK(x[1] == Approx(3).epsilon(1e-12));
  x = nonNegativeLeastSquares({{1, 1}, {0, 1}}, {1, 3});
  REQUIRE(x.size() == 2);
  CHECK(x[0] == 0);
  CHECK(x[1] == Approx(2).epsilon(1e-9));
}

TEST_CASE("nnls: a right-hand side no non-negative x can approach gives x = 0", "[tune_fit]") {
  const std::vector<double> x = nonNegativeLeastSquares({{1, 2}, {3, 1}, {1, 1}}, {-1, -2, -3});
  REQUIRE(x.size() == 2);
  CHECK(x[0] == 0);
  CHECK(x[1] == 0);
  CHECK(nonNegativeLeastSquares({}, {}).empty());
}

// The exact answer by brute force: the least-squares solution on every subset of the columns
// (the others at 0), the best of those that are non-negative. The optimum is one of them.
std::vector<double> bruteForceNnls(const Matrix& a, const std::vector<double>& b) {
  const size_t n = a[0].size();
  std::vector<double> best(n, 0);
  double bestNorm = residualNorm2(a, b, best);
  for (unsigned mask = 1; mask < (1u << n); ++mask) {
    std::vector<size_t> cols;
    for (size_t j = 0; j < n; ++j) {
      if (mask & (1u << j)) cols.push_back(j);
    }
    // Normal equations on those columns, by Gauss-Jordan (small and well conditioned here).
    const size_t k = cols.size();
    Matrix m(k, std::vector<double>(k + 1, 0));
    for (const auto& row : a) {
      for (size_t p = 0; p < k; ++p) {
        for (size_t q = 0; q < k; ++q) m[p][q] += row[cols[p]] * row[cols[q]];
      }
    }
    for (size_t i = 0; i < a.size(); ++i) {
      for (size_t p = 0; p < k; ++p) m[p][k] += a[i][cols[p]] * b[i];
    }
    bool singular = false;
    for (size_t c = 0; c < k && !singular; ++c) {
      size_t piv = c;
      for (size_t r = c + 1; r < k; ++r) {
        if (std::fabs(m[r][c]) > std::fabs(m[piv][c])) piv = r;
      }
      std::swap(m[c], m[piv]);
      if (std::fabs(m[c][c]) < 1e-12) {
        singular = true;
        break;
      }
      for (size_t r = 0; r < k; ++r) {
        if (r == c) continue;
        const double f = m[r][c] / m[c][c];
        for (size_t q = c; q <= k; ++q) m[r][q] -= f * m[c][q];
      }
    }
    if (singular) continue;
    std::vector<double> x(n, 0);
    bool feasible = true;
    for (size_t p = 0; p < k; ++p) {
      x[cols[p]] = m[p][k] / m[p][p];
      feasible = feasible && x[cols[p]] >= 0;
    }
    if (!feasible) continue;
    const double norm = residualNorm2(a, b, x);
    if (norm < bestNorm) {
      bestNorm = norm;
      best = x;
    }
  }
  return best;
}

TEST_CASE("nnls: agrees with every-active-set brute force on random problems", "[tune_fit]") {
  uint64_t state = 12345;
  auto uniform = [&state] {  // in [-1, 1), a fixed sequence
    state = state * 6364136223846793005ull + 1442695040888963407ull;
    return static_cast<double>(state >> 11) / static_cast<double>(1ull << 53) * 2 - 1;
  };
  int withZeros = 0;
  for (int trial = 0; trial < 300; ++trial) {
    const size_t n = 2 + trial % 4;  // 2..5 unknowns
    const size_t rows = n + 1 + trial % 3;
    Matrix a(rows, std::vector<double>(n));
    std::vector<double> b(rows);
    for (size_t i = 0; i < rows; ++i) {
      for (size_t j = 0; j < n; ++j) a[i][j] = uniform();
      b[i] = uniform();
    }
    const std::vector<double> x = nonNegativeLeastSquares(a, b);
    const std::vector<double> want = bruteForceNnls(a, b);
    INFO("trial " << trial);
    REQUIRE(x.size() == n);
    for (size_t j = 0; j < n; ++j) {
      CHECK(x[j] >= 0);
      CHECK(x[j] == Approx(want[j]).margin(1e-6));
      if (want[j] == 0) ++withZeros;
    }
    CHECK(residualNorm2(a, b, x) == Approx(residualNorm2(a, b, want)).epsilon(1e-9).margin(1e-12));
  }
  CHECK(withZeros > 100);  // the bounds were active in many of them
}

// --- The fit -------------------------------------------------------------------------------

// node(2) x network(2): what ping-pong measured (the fit's start). LinkModel{kind, GB/s, us}.
constexpr double kNodeAlpha = 2, kNodeGBps = 10;
constexpr double kNetAlpha = 25, kNetGBps = 5;

Hierarchy twoByTwo(double nodeAlpha, double nodeGBps, double netAlpha, double netGBps) {
  auto h = Hierarchy::regular(
      {Level("node", "mpi", LinkModel{LinkKind::kPcie, nodeGBps, nodeAlpha, "test"}),
       Level("network", "mpi", LinkModel{LinkKind::kEthernet, netGBps, netAlpha, "test"})},
      {2, 2});
  REQUIRE(h.isOk());
  return h.value();
}

plan::CostParams withOverhead(double o) {
  plan::CostParams p;
  p.stepOverheadUs = o;
  return p;
}

// Every candidate plan at sizes from 8 B to 16 MiB, timed as `truth` / `truthParams` predict.
std::vector<FitPoint> timings(const Hierarchy& truth, const plan::CostParams& truthParams) {
  std::vector<FitPoint> points;
  for (const plan::Plan& p : plan::candidatePlans(truth, truthParams)) {
    for (double bytes : {8.0, 4096.0, 65536.0, 1048576.0, 16777216.0}) {
      FitPoint fp;
      fp.plan = p;
      fp.bytes = bytes;
      fp.measuredUs = plan::predict(truth, p, bytes, truthParams).totalUs;
      points.push_back(fp);
    }
  }
  return points;
}

double rmsOf(const std::vector<double>& e) {
  double s = 0;
  for (double x : e) s += x * x;
  return std::sqrt(s / e.size());
}

TEST_CASE("fit: recovers a faster network, its bandwidth and a step overhead", "[tune_fit]") {
  const Hierarchy start = twoByTwo(kNodeAlpha, kNodeGBps, kNetAlpha, kNetGBps);
  // The truth: the network's latency 5x smaller than ping-pong's, its bandwidth 1.6x and the
  // node's 1.4x higher (both inside the fit's cap of maxBandwidthFactor = 2 times the start's),
  // and 7 us per step. The node stays the faster link, as at the start (the next test swaps
  // the order).
  constexpr double kTrueNetAlpha = 5, kTrueNetGBps = 8, kTrueNodeGBps = 14, kOverhead = 7;
  const Hierarchy truth = twoByTwo(kNodeAlpha, kTrueNodeGBps, kTrueNetAlpha, kTrueNetGBps);
  const plan::CostParams params = withOverhead(0);
  const std::vector<FitPoint> points = timings(truth, withOverhead(kOverhead));
  REQUIRE(points.size() >= 10);

  auto fit = fitCostModel(start, params, points);
  REQUIRE(fit.isOk());
  const FitResult& r = fit.value();
  const LinkModel& node = r.fitted.level(0).link;
  const LinkModel& net = r.fitted.level(1).link;
  INFO("node " << node.latencyUs << " us " << node.bandwidthGBps << " GB/s, network "
               << net.latencyUs << " us " << net.bandwidthGBps << " GB/s, overhead "
               << r.params.stepOverheadUs << " us; rms " << r.rmsBefore << " -> " << r.rmsAfter
               << ", worst " << r.worstBefore << " -> " << r.worstAfter << ", " << r.iterations
               << " iterations");

  // The start is far off; the fit all but removes the error.
  CHECK(r.rmsBefore > 0.2);
  CHECK(r.rmsAfter < 0.02);
  CHECK(r.worstAfter < 0.02);
  CHECK(r.iterations >= 1);
  // The reported errors are the fitted model's.
  const std::vector<double> e = relativeErrors(r.fitted, r.params, points);
  CHECK(rmsOf(e) == Approx(r.rmsAfter).epsilon(1e-9));
  CHECK(node.source == "fitted");
  CHECK(net.source == "fitted");

  // Bandwidths: each level's bytes are timed separately (plans with and without a node stage).
  CHECK(node.bandwidthGBps == Approx(kTrueNodeGBps).epsilon(0.03));
  CHECK(net.bandwidthGBps == Approx(kTrueNetGBps).epsilon(0.03));
  // Latencies: every step pays its level's alpha plus the overhead, so the timings fix only
  // alpha_l + o per level; those sums are recovered.
  CHECK(node.latencyUs + r.params.stepOverheadUs == Approx(kNodeAlpha + kOverhead).epsilon(0.03));
  CHECK(net.latencyUs + r.params.stepOverheadUs == Approx(kTrueNetAlpha + kOverhead).epsilon(0.03));
  // How the sums split is the prior's choice: the cheapest move from the start in units of each
  // parameter's scale (node alpha 2 us, network alpha 25 us, overhead the largest alpha, 25 us).
  // Minimising ((7 - o) / 2)^2 + ((13 + o) / 25)^2 + (o / 25)^2 gives o = 4323 / 633 = 6.83 us:
  // the node's small scale makes moving its alpha dear, so nearly all of the 7 us lands in o.
  CHECK(r.params.stepOverheadUs == Approx(4323.0 / 633).epsilon(0.05));
  CHECK(node.latencyUs == Approx(kNodeAlpha).margin(0.5));
  CHECK(net.latencyUs == Approx(kTrueNetAlpha).margin(0.5));
}

TEST_CASE("fit: recovers two levels' bandwidths ordered the other way round from ping-pong",
          "[tune_fit]") {
  // Ping-pong: node 10 GB/s, network 5. The truth: node 6, network 8. A merged stage
  // (flat-ring, passthrough) is costed at its slowest link, a maximum whose kink local
  // Gauss-Newton steps do not cross back over: from the ping-pong start alone the fit stopped
  // at 2.8% rms (worst 7.5%) with both bandwidths wrong, on the start's side of the kink. The
  // start with the two bandwidths swapped (node 5, network 10) lies on the truth's side.
  const Hierarchy start = twoByTwo(kNodeAlpha, kNodeGBps, kNetAlpha, kNetGBps);
  constexpr double kTrueNodeGBps = 6, kTrueNetAlpha = 5, kTrueNetGBps = 8, kOverhead = 7;
  const Hierarchy truth = twoByTwo(kNodeAlpha, kTrueNodeGBps, kTrueNetAlpha, kTrueNetGBps);
  const std::vector<FitPoint> points = timings(truth, withOverhead(kOverhead));

  auto fit = fitCostModel(start, withOverhead(0), points);
  REQUIRE(fit.isOk());
  const FitResult& r = fit.value();
  const LinkModel& node = r.fitted.level(0).link;
  const LinkModel& net = r.fitted.level(1).link;
  INFO("node " << node.bandwidthGBps << " GB/s, network " << net.bandwidthGBps << " GB/s; rms "
               << r.rmsBefore << " -> " << r.rmsAfter << ", worst " << r.worstAfter << ", "
               << r.starts << " starts");
  CHECK(r.starts == 2);  // the ping-pong start and the swapped one
  CHECK(r.rmsAfter < 0.02);
  CHECK(r.worstAfter < 0.03);
  CHECK(node.bandwidthGBps == Approx(kTrueNodeGBps).epsilon(0.03));
  CHECK(net.bandwidthGBps == Approx(kTrueNetGBps).epsilon(0.03));
  CHECK(node.bandwidthGBps < net.bandwidthGBps);
}

TEST_CASE("fit: an exact start stays where it is", "[tune_fit]") {
  for (double overhead : {0.0, 3.0}) {
    INFO("start overhead " << overhead << " us");
    const Hierarchy start = twoByTwo(kNodeAlpha, kNodeGBps, kNetAlpha, kNetGBps);
    const plan::CostParams params = withOverhead(overhead);
    const std::vector<FitPoint> points = timings(start, params);
    auto fit = fitCostModel(start, params, points);
    REQUIRE(fit.isOk());
    const FitResult& r = fit.value();
    CHECK(r.rmsBefore < 1e-12);
    CHECK(r.rmsAfter <= r.rmsBefore + 1e-12);
    CHECK(r.worstAfter < 1e-12);
    for (int l = 0; l < 2; ++l) {
      CHECK(r.fitted.level(l).link.latencyUs ==
            Approx(start.level(l).link.latencyUs).epsilon(1e-9));
      CHECK(r.fitted.level(l).link.bandwidthGBps ==
            Approx(start.level(l).link.bandwidthGBps).epsilon(1e-9));
    }
    CHECK(r.params.stepOverheadUs == Approx(overhead).margin(1e-9));
  }
}

TEST_CASE("fit: never worse than the start on timings no parameters explain", "[tune_fit]") {
  // The truth as in the recovery test, each timing then off by up to +-20% (a fixed pattern):
  // no parameters fit them all, and the fit must still not leave them worse explained.
  const Hierarchy start = twoByTwo(kNodeAlpha, kNodeGBps, kNetAlpha, kNetGBps);
  const Hierarchy truth = twoByTwo(kNodeAlpha, 14, 5, 8);
  std::vector<FitPoint> points = timings(truth, withOverhead(7));
  for (size_t i = 0; i < points.size(); ++i)
    points[i].measuredUs *= 1 + 0.2 * std::sin(1.7 * static_cast<double>(i));
  auto fit = fitCostModel(start, withOverhead(0), points);
  REQUIRE(fit.isOk());
  const FitResult& r = fit.value();
  INFO("rms " << r.rmsBefore << " -> " << r.rmsAfter);
  CHECK(r.rmsAfter < r.rmsBefore);
  CHECK(r.rmsAfter > 0.02);  // the noise stays
  CHECK(r.rmsAfter < 0.2);
}

TEST_CASE("fit: a stage is never fitted faster than the cap allows", "[tune_fit]") {
  // Ping-pong said 2 GB/s for the network, it really is 4x as fast: beyond maxBandwidthFactor
  // (2), so the fit stops at the bound, 4 GB/s, and the large sizes stay too slow. (The truth,
  // 8 GB/s, stays below the node's 10 so that the slowest link of merged stages is the network
  // throughout: see the recovery test.)
  const Hierarchy start = twoByTwo(kNodeAlpha, kNodeGBps, kNetAlpha, 2);
  const Hierarchy truth = twoByTwo(kNodeAlpha, kNodeGBps, kNetAlpha, 8);
  const std::vector<FitPoint> points = timings(truth, withOverhead(0));
  auto fit = fitCostModel(start, withOverhead(0), points);
  REQUIRE(fit.isOk());
  const FitResult& r = fit.value();
  INFO("network " << r.fitted.level(1).link.bandwidthGBps << " GB/s, rms " << r.rmsBefore << " -> "
                  << r.rmsAfter << ", worst " << r.worstAfter);
  CHECK(r.fitted.level(1).link.bandwidthGBps <= 4 * (1 + 1e-9));
  CHECK(r.fitted.level(1).link.bandwidthGBps == Approx(4).epsilon(0.01));
  CHECK(r.rmsAfter < r.rmsBefore);
  CHECK(r.worstAfter > 0.05);
  // With the cap raised to 5x, the same timings are fitted.
  FitOptions wide;
  wide.maxBandwidthFactor = 5;
  auto wider = fitCostModel(start, withOverhead(0), points, wide);
  REQUIRE(wider.isOk());
  INFO("cap 5x: network " << wider.value().fitted.level(1).link.bandwidthGBps << " GB/s, rms "
                          << wider.value().rmsAfter);
  CHECK(wider.value().fitted.level(1).link.bandwidthGBps == Approx(8).epsilon(0.03));
  CHECK(wider.value().rmsAfter < 0.01);
}

TEST_CASE("fit: untimed points are left out, and none at all is an error", "[tune_fit]") {
  const Hierarchy start = twoByTwo(kNodeAlpha, kNodeGBps, kNetAlpha, kNetGBps);
  std::vector<FitPoint> points = timings(start, withOverhead(0));
  FitPoint bad = points.front();
  bad.measuredUs = 0;
  std::vector<FitPoint> withBad = points;
  withBad.push_back(bad);
  bad.measuredUs = -5;
  withBad.push_back(bad);
  bad.measuredUs = std::nan("");
  withBad.push_back(bad);
  auto fit = fitCostModel(start, withOverhead(0), withBad);
  REQUIRE(fit.isOk());
  CHECK(fit.value().rmsBefore < 1e-12);
  CHECK(fit.value().rmsAfter < 1e-12);

  CHECK_FALSE(fitCostModel(start, withOverhead(0), {}).isOk());
  bad.measuredUs = 0;
  CHECK_FALSE(fitCostModel(start, withOverhead(0), {bad, bad}).isOk());
}

}  // namespace
}  // namespace strata::tools
