// strata-tune, step 3: the cost model fitted to the sweep's timings. Ping-pong measures what one
// message costs between two idle ranks; a stage of a real allreduce also pays for the progress
// engine, for the groups that run at once and, where ranks outnumber cores, for a scheduler slice
// per step. The fit finds the per-level latency (alpha) and bandwidth, and one step overhead
// (plan::CostParams::stepOverheadUs), that make predict() agree best with the timed plans.
//
// Method: for a fixed plan and size the model is linear in each level's alpha, in each level's
// beta = 1 / bandwidth and in the step overhead, apart from a few maxima (the slowest link of a
// merged stage, the cheapest allreduce algorithm, overlapping pipeline pieces) where the active
// term switches. So the fit is Gauss-Newton on that piecewise-linear model: take the local
// linear model (exact finite differences), solve a non-negative least-squares problem for the
// parameters on it (Lawson-Hanson), keep the step if the true model's error went down (else
// halve it), repeat. Residuals are relative, (predicted - measured) / measured, so a 4 MiB call
// counts as much as a 4 KiB one. A weak pull towards the start (the ping-pong values and the
// given params.stepOverheadUs, 0 in strata-tune) settles the directions the timings cannot tell
// apart (the overhead and the alphas are added together in every step) and keeps a level whose
// stages were never timed where it was.
// Local minima: a stage over several levels is costed at its slowest link, so when the timings
// rank two levels' bandwidths the other way round from ping-pong, a descent from ping-pong stops
// at the switch-over. So the fit also descends from a start per pair of levels with those two
// bandwidths swapped and keeps the lowest objective (tests/unit/tools/test_tune_fit.cc has the
// case). Orders that differ from ping-pong in more than one swap (three levels in reverse) are
// not started from. strata-tune reports the fitted model's error, and picks plans by
// measurement, not by the fit. Pure code: no MPI.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "decompose/cost_model.h"
#include "decompose/plan.h"
#include "topology/hierarchy.h"

namespace strata::tools {

// One timed (plan, size): what the fit tries to predict.
struct FitPoint {
  plan::Plan plan;
  double bytes = 0;
  double measuredUs = 0;
};

struct FitOptions {
  int maxIterations = 40;
  // Weight of the pull towards the start, per parameter, in units of relative error: moving
  // alpha by its scale (the start, at least 1 us), or beta by its start, costs as much as a
  // prediction off by this fraction.
  double prior = 0.03;
  // beta's lower bound: a stage moves data at most this many times as fast as the start's link
  // (ping-pong's large messages, between two otherwise idle ranks, are near the best case).
  double maxBandwidthFactor = 2;
};

struct FitResult {
  topo::Hierarchy fitted;   // the start with each level's fitted link (source "fitted")
  plan::CostParams params;  // the start's params with the fitted stepOverheadUs
  double rmsBefore = 0;     // root mean square of (predicted / measured - 1), start
  double rmsAfter = 0;      // the same, fitted
  double worstBefore = 0;   // largest |predicted / measured - 1|, start
  double worstAfter = 0;    // the same, fitted
  int iterations = 0;       // of the descent that won
  int starts = 0;           // descents run: the ping-pong start, then one per pair of levels
};

// The relative errors (predicted / measured - 1) of `points` under h and params.
std::vector<double> relativeErrors(const topo::Hierarchy& h, const plan::CostParams& params,
                                   const std::vector<FitPoint>& points);

// Fits every level's link and params.stepOverheadUs of `start` / `params` to `points` (points
// with measuredUs <= 0 are left out). Fails only when no point is usable.
StatusOr<FitResult> fitCostModel(const topo::Hierarchy& start, const plan::CostParams& params,
                                 const std::vector<FitPoint>& points, const FitOptions& o = {});

// Non-negative least squares (Lawson and Hanson, 1974): x >= 0 minimising |A x - b|, A given as
// rows. Exposed for its test.
std::vector<double> nonNegativeLeastSquares(const std::vector<std::vector<double>>& a,
                                            const std::vector<double>& b);

}  // namespace strata::tools
