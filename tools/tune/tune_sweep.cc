#include "tune_sweep.h"

#include <mpi.h>

#include <algorithm>
#include <numeric>

#include "bootstrap/bootstrap.h"
#include "common/mpi_check.h"
#include "decompose/planner.h"
#include "fabrics/registry.h"
#include "tune_measure.h"

namespace strata::tools {
namespace {

// Small integers, so every partial sum is exact in float32 and the check can be exact.
float inputOf(int rank, size_t i) { return static_cast<float>((rank + 1) * (i % 7 + 1)); }

struct Buffers {
  std::vector<float> send, recv;
};

// One allreduce under `p`, timed between a barrier and the slowest rank's finish. Every rank
// returns the same time, or the same error (a failure on one rank fails them all, so no rank is
// left waiting in the next call).
StatusOr<double> timedCall(core::ToolsView& c, const plan::Plan& p, Buffers& b, size_t count) {
  STRATA_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  const double t0 = MPI_Wtime();
  const Status st =
      c.allReduceWithPlan(p, b.send.data(), b.recv.data(), count, strataFloat32, strataSum);
  const double local[2] = {(MPI_Wtime() - t0) * 1e6, st.isOk() ? 0.0 : 1.0};
  double slowest[2] = {0, 0};
  STRATA_MPI_CHECK(MPI_Allreduce(local, slowest, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
  if (slowest[1] != 0) {
    STRATA_RETURN_IF_ERROR(boot::agree(c.bootstrap(), st));
    return internalError("allreduce failed on some rank without an agreed error");
  }
  return slowest[0];
}

// Whether every rank got the exact sum. Collective.
StatusOr<bool> resultCorrect(core::ToolsView& c, const Buffers& b, size_t count) {
  const int rankSum = c.size() * (c.size() + 1) / 2;
  int ok = 1;
  for (size_t i = 0; i < count && ok; ++i) {
    ok = b.recv[i] == static_cast<float>(rankSum * static_cast<int>(i % 7 + 1));
  }
  int all = 0;
  STRATA_MPI_CHECK(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
  return all == 1;
}

// Warm-ups, then timed calls, until --iters or the plan's time budget runs out. The budget
// counts the agreed (max over ranks) times, so every rank stops after the same call.
Status timePlan(core::ToolsView& c, const SweepOptions& o, Buffers& b, size_t count,
                PlanTiming* t) {
  double spentUs = 0;
  const double budgetUs = o.planSeconds * 1e6;
  bool checked = false;
  for (int i = 0; i < o.warmup + o.iters; ++i) {
    const bool warm = i < o.warmup;
    if (warm && spentUs > budgetUs) continue;  // skip the rest of the warm-ups, keep one timing
    STRATA_ASSIGN_OR_RETURN(double us, timedCall(c, t->plan, b, count));
    spentUs += us;
    if (!checked) {
      STRATA_ASSIGN_OR_RETURN(t->correct, resultCorrect(c, b, count));
      checked = true;
      if (!t->correct) return Status::ok();  // a wrong plan is not worth timing
    }
    if (!warm) t->us.push_back(us);
    if (!warm && spentUs > budgetUs && i + 1 < o.warmup + o.iters) {
      t->cutShort = true;
      break;
    }
  }
  t->medianUs = median(t->us);
  return Status::ok();
}

}  // namespace

std::vector<PlanTiming> plansToTime(const topo::Hierarchy& h, double bytes,
                                    const plan::CostParams& params, int top) {
  std::vector<PlanTiming> all;
  for (const plan::Plan& p : plan::candidatePlans(h, params)) {
    PlanTiming t;
    t.plan = p;
    t.description = plan::describePlan(h, p);
    t.predictedUs = plan::predict(h, p, bytes, params).totalUs;
    all.push_back(t);
  }
  std::stable_sort(all.begin(), all.end(), [](const PlanTiming& a, const PlanTiming& b) {
    return a.predictedUs < b.predictedUs;
  });
  std::vector<PlanTiming> out;
  bool havePassthrough = false;
  for (const PlanTiming& t : all) {
    if (static_cast<int>(out.size()) >= top) break;
    havePassthrough = havePassthrough || t.plan.passthrough;
    out.push_back(t);
  }
  for (const PlanTiming& t : all) {
    if (t.plan.passthrough && !havePassthrough) out.push_back(t);
  }
  return out;
}

StatusOr<std::vector<SizeResult>> runSweep(core::ToolsView& c, const topo::Hierarchy& measured,
                                           const SweepOptions& o, const SweepProgress& progress) {
  // Make every candidate's stage groups now (collective, same order on every rank), so no
  // timed call pays for a communicator split.
  for (const plan::Plan& p : plan::candidatePlans(c.hierarchy(), c.costParams())) {
    STRATA_RETURN_IF_ERROR(c.preparePlan(p));
  }
  const size_t maxCount = o.sizes.empty() ? 0 : o.sizes.back() / sizeof(float);
  Buffers b;
  b.send.resize(maxCount);
  b.recv.resize(maxCount);
  for (size_t i = 0; i < maxCount; ++i) b.send[i] = inputOf(c.rank(), i);

  std::vector<SizeResult> out;
  for (size_t s = 0; s < o.sizes.size(); ++s) {
    SizeResult r;
    r.bytes = o.sizes[s];
    r.plans = plansToTime(measured, static_cast<double>(r.bytes), c.costParams(), o.top);
    if (c.rank() == 0 && progress.sizeStarted) progress.sizeStarted(s, r);
    for (PlanTiming& t : r.plans) {
      STRATA_RETURN_IF_ERROR(timePlan(c, o, b, r.bytes / sizeof(float), &t));
    }
    for (size_t i = 0; i < r.plans.size(); ++i) {
      const PlanTiming& t = r.plans[i];
      if (t.correct && (r.fastest < 0 || t.medianUs < r.plans[r.fastest].medianUs)) {
        r.fastest = static_cast<int>(i);
      }
    }
    if (c.rank() == 0 && progress.sizeDone) progress.sizeDone(s, r);
    out.push_back(std::move(r));
  }
  return out;
}

}  // namespace strata::tools
