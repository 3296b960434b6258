// strata-tune, step 2: the candidate plans timed on the job's ranks across a sweep of message
// sizes (float32 sum allreduces through ToolsView::allReduceWithPlan).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "common/status.h"
#include "core/tools_view.h"
#include "decompose/cost_model.h"
#include "decompose/plan.h"
#include "topology/hierarchy.h"

namespace strata::tools {

struct SweepOptions {
  std::vector<size_t> sizes;  // bytes, ascending, multiples of 4 (float32 elements)
  int warmup = 2;             // untimed calls per plan and size
  int iters = 5;              // timed calls per plan and size
  int top = 4;                // candidates by predicted time per size (plus passthrough)
  double planSeconds = 2.0;   // a plan stops early (after one timed call) past this many seconds
  // The runoff: plans whose median is within this fraction of the fastest get runoffIters more
  // timed calls, interleaved, and the fastest is chosen again on all their calls.
  double runoffWithin = 0.5;
  int runoffIters = 10;
};

struct PlanTiming {
  plan::Plan plan;
  std::string description;  // describePlan
  double predictedUs = 0;   // the cost model with the measured links
  double fittedUs = 0;      // the cost model fitted to the sweep (tune_fit.h); 0: not yet
  std::vector<double> us;   // each timed call: the slowest rank's time
  double medianUs = 0;
  bool correct = true;    // the first call's result was the exact sum on every rank
  bool checked = false;   // the result has been checked
  bool cutShort = false;  // fewer calls than asked for: the time budget ran out
  bool added = false;     // not among the model's candidates at first: added by the fitted model
};

struct SizeResult {
  size_t bytes = 0;
  std::vector<PlanTiming> plans;  // by predicted time; plans[0] is the model's choice
  int fastest = -1;               // index of the lowest median among the correct plans
  int runoff = 0;                 // plans that went into the runoff (0: none was needed)
};

// The plans to time for `bytes`: the `top` cheapest candidates by predict() on `h` (ties in
// candidate order), then passthrough when it is not among them. Deterministic, so that every
// rank times the same plans in the same order.
std::vector<PlanTiming> plansToTime(const topo::Hierarchy& h, double bytes,
                                    const plan::CostParams& params, int top);

struct SweepProgress {
  std::function<void(size_t index, const SizeResult& planned)> sizeStarted;
  std::function<void(size_t index, const SizeResult& done)> sizeDone;
};

// Times the plans of every size of `o` on c (the predictions use `measured`, which must have
// c.hierarchy's shape). A size's plans are timed in interleaved rounds (one call of each plan,
// then the next round), so a machine whose load drifts favours none of them; then the runoff
// (SweepOptions). Collective over MPI_COMM_WORLD; every rank returns the same timings (each
// call's time is the maximum over ranks). The progress callbacks run on rank 0 only.
StatusOr<std::vector<SizeResult>> runSweep(core::ToolsView& c, const topo::Hierarchy& measured,
                                           const SweepOptions& o, const SweepProgress& progress);

// Adds `p` to r's plans (marked added) when no plan of r has its description, times it against
// the fastest in a runoff of o.runoffIters interleaved calls each, and chooses the fastest
// again. Collective. Returns whether it was added.
StatusOr<bool> timeAddedPlan(core::ToolsView& c, const SweepOptions& o, const plan::Plan& p,
                             double predictedUs, SizeResult* r);

// The sweep's inputs: small integers, so every partial sum is exact in float32 and the check of
// a result can be exact. Rank `rank`'s element i.
float sweepInput(int rank, size_t i);

// One call of `call` on every rank, timed between a barrier and the slowest rank's finish.
// Every rank returns the same time, or the same error (a failure on one rank fails them all, so
// no rank is left waiting in the next call). `what` names the call in an unagreed failure.
StatusOr<double> timedOnEveryRank(core::ToolsView& c, const char* what,
                                  const std::function<Status()>& call);

// The index of the plan with the lowest median among the correct ones of `plans`, or -1.
int fastestOf(const std::vector<PlanTiming>& plans);

// Re-times `plans` at `bytes`: `warmup` untimed calls each, then `iters` interleaved rounds
// (no time budget). Collective. For the tool's --check mode.
Status retime(core::ToolsView& c, size_t bytes, int warmup, int iters,
              std::vector<PlanTiming>* plans);

}  // namespace strata::tools
