// strata-tune, step 2: the candidate plans timed on the job's ranks across a sweep of message
// sizes (float32 sum allreduces through ToolsComm::allReduceWithPlan).
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <vector>

#include "common/status.h"
#include "decompose/cost_model.h"
#include "decompose/plan.h"
#include "tools_iface/tools_comm.h"
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

// What timeInterleaved records for each candidate (a plan here, a form in tune_forms.h).
struct Timing {
  std::vector<double> us;  // each timed call: the slowest rank's time
  double medianUs = 0;
  bool correct = true;    // the first call's result was exact on every rank
  bool checked = false;   // the result has been checked
  bool cutShort = false;  // fewer calls than asked for: the time budget ran out
};

struct PlanTiming : Timing {
  plan::Plan plan;
  std::string description;  // describePlan
  double predictedUs = 0;   // the cost model with the measured links
  double fittedUs = 0;      // the cost model fitted to the sweep (tune_fit.h); 0: not yet
  bool added = false;       // not among the model's candidates at first: added by the fitted model
};

// One candidate of timeInterleaved: where its timings go, one call of it (made on every rank
// at once), and whether every rank's result of the call just made is exact (collective).
struct Candidate {
  Timing* timing = nullptr;
  std::function<Status()> call;
  std::function<StatusOr<bool>()> correct;
};

// Times `candidates` in interleaved rounds: `warmup` untimed rounds, then `iters` timed ones,
// each a call of every candidate in turn, so that a change in the machine's load hits them all
// alike. A call is timed between a barrier and the slowest rank's finish, and every rank gets
// the same time or the same error. A candidate's first call is checked (a wrong one is not
// timed further). A candidate whose calls here have used budgetUs (> 0) stops early, after at
// least one timed call, and is marked cutShort; the budget counts the agreed (max over ranks)
// times, so every rank stops after the same call. Sets each timing's medianUs. `what` names the
// collective in an unagreed failure. Collective over MPI_COMM_WORLD.
Status timeInterleaved(tools_iface::ToolsComm& c, const char* what,
                       const std::vector<Candidate>& candidates, int warmup, int iters,
                       double budgetUs);

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
StatusOr<std::vector<SizeResult>> runSweep(tools_iface::ToolsComm& c,
                                           const topo::Hierarchy& measured, const SweepOptions& o,
                                           const SweepProgress& progress);

// Adds `p` to r's plans (marked added) when no plan of r has its description, times it against
// the fastest in a runoff of o.runoffIters interleaved calls each, and chooses the fastest
// again. Collective. Returns whether it was added.
StatusOr<bool> timeAddedPlan(tools_iface::ToolsComm& c, const SweepOptions& o, const plan::Plan& p,
                             double predictedUs, SizeResult* r);

// The sweep's inputs: small integers, so every partial sum is exact in float32 and the check of
// a result can be exact. Rank `rank`'s element i.
float sweepInput(int rank, size_t i);

// The index of the plan with the lowest median among the correct ones of `plans`, or -1.
int fastestOf(const std::vector<PlanTiming>& plans);

// Re-times `plans` at `bytes`: `warmup` untimed calls each, then `iters` interleaved rounds
// (no time budget). Collective. For the tool's --check mode.
Status retime(tools_iface::ToolsComm& c, size_t bytes, int warmup, int iters,
              std::vector<PlanTiming>* plans);

}  // namespace strata::tools
