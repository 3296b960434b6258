// strata-tune, step 5: the forms of the reduce-scatter and the all-gather (flat: one ring over
// every rank; hierarchical: one stage per level, decompose/schedule.h) timed on the job's ranks
// at each size of the sweep, next to the cost model's choice (decompose/blocks_cost.h), and the
// faster form per size written as the plan file's reduce_scatter:/all_gather: rules.
//
// A size is the whole vector, every rank's block together (as nccl-tests and the plan file's
// form rules count it), in float32 elements: count = bytes / (4 x ranks) per block, so sizes
// under 4 bytes per rank are left out. The two forms run in interleaved rounds, as the plans do
// (tune_sweep.h), and each form's first call is checked against the exact result.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "common/collective.h"
#include "common/status.h"
#include "decompose/cost_model.h"
#include "decompose/plan_file.h"
#include "decompose/schedule.h"
#include "tools_iface/tools_comm.h"
#include "topology/hierarchy.h"
#include "tune_fit.h"
#include "tune_sweep.h"

namespace strata::tools {

struct FormTiming : Timing {
  plan::BlockForm form = plan::BlockForm::kFlat;
  double predictedUs = 0;  // the cost model with the measured links
  double fittedUs = 0;     // the cost model fitted to the allreduce sweep; 0: not fitted
};

struct FormSizeResult {
  Collective coll = Collective::kReduceScatter;
  size_t bytes = 0;               // the whole vector: count x ranks x 4
  size_t count = 0;               // float32 elements of one rank's block
  std::vector<FormTiming> forms;  // flat, then hierarchical
  int fastest = -1;               // index of the lower median among the correct forms (ties: flat)
  // The form the plan file gets: the fastest, or the cost model's pick (measured links) when
  // it is within 5% of the fastest (a smaller lead is within one launch's noise on a small
  // machine); -1 when no form was correct.
  int chosen = -1;
};

// Whether the forms can be compared on `h`: the hierarchical form needs a regular layout of two
// levels or more (plan::hierarchicalBlocksPossible).
bool formsComparable(const topo::Hierarchy& h);

// Times both forms of `coll` (kReduceScatter or kAllGather) at every size of `o` that gives each
// rank at least one element: o.warmup untimed rounds, then o.iters + o.runoffIters timed ones,
// o.planSeconds at most per form and size (after one timed call). Collective over
// MPI_COMM_WORLD; every rank returns the same timings. `progress` (may be empty) runs on rank 0
// after each size.
StatusOr<std::vector<FormSizeResult>> runFormSweep(
    tools_iface::ToolsComm& c, const topo::Hierarchy& measured, Collective coll,
    const SweepOptions& o, const std::function<void(const FormSizeResult&)>& progress);

// Fills every form's fittedUs from the fitted model.
void predictFitted(const FitResult& fit, std::vector<FormSizeResult>* results);

// Re-times both forms of `coll` at `bytes` (--check): o.warmup untimed rounds, then o.iters
// interleaved ones, no time budget. Collective.
StatusOr<FormSizeResult> retimeForms(tools_iface::ToolsComm& c, const topo::Hierarchy& measured,
                                     Collective coll, size_t bytes, int warmup, int iters);

// The chosen form per size over ranges split at the geometric midpoints between the
// measured sizes, as winnerRules does for plans, adjacent ranges with the same form merged.
// Fails when a size has no form that gave the exact result.
StatusOr<std::vector<plan::BlockRule>> formRules(const std::vector<FormSizeResult>& results);

// One row per size: each form's predicted (ping-pong links) and fitted time, its measured
// median, the cost model's picks, the measured fastest, the chosen form and what the fitted
// pick costs against the fastest. `disagree` gets the sizes where the fitted model's pick is not
// the measured fastest.
std::string formatFormSweep(const std::vector<FormSizeResult>& results, int* disagree);

// --check: per size the form `rules` gives against the other form, and file / other. `worst`
// gets the largest file / other ratio (below 1: the file's form was the faster one).
std::string formatFormCheck(const std::vector<FormSizeResult>& results,
                            const std::vector<plan::BlockRule>& rules, double* worst);

}  // namespace strata::tools
