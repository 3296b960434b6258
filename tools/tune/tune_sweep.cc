#include "tune_sweep.h"

#include <mpi.h>

#include <algorithm>
#include <numeric>

#include "common/mpi_check.h"
#include "decompose/planner.h"
#include "tune_measure.h"

namespace strata::tools {
namespace {

struct Buffers {
  std::vector<float> send, recv;
};

// One call of `call` on every rank, timed between a barrier and the slowest rank's finish.
// Every rank returns the same time, or the same error (a failure on one rank fails them all, so
// no rank is left waiting in the next call).
StatusOr<double> timedOnEveryRank(tools_iface::ToolsComm& c, const char* what,
                                  const std::function<Status()>& call) {
  STRATA_MPI_CHECK(MPI_Barrier(MPI_COMM_WORLD));
  const double t0 = MPI_Wtime();
  const Status st = call();
  const double local[2] = {(MPI_Wtime() - t0) * 1e6, st.isOk() ? 0.0 : 1.0};
  double slowest[2] = {0, 0};
  STRATA_MPI_CHECK(MPI_Allreduce(local, slowest, 2, MPI_DOUBLE, MPI_MAX, MPI_COMM_WORLD));
  if (slowest[1] != 0) {
    STRATA_RETURN_IF_ERROR(c.agree(st));
    return internalError(std::string(what) + " failed on some rank without an agreed error");
  }
  return slowest[0];
}

// Whether every rank got the exact sum. Collective.
StatusOr<bool> resultCorrect(tools_iface::ToolsComm& c, const Buffers& b, size_t count) {
  const int rankSum = c.size() * (c.size() + 1) / 2;
  int ok = 1;
  for (size_t i = 0; i < count && ok; ++i) {
    ok = b.recv[i] == static_cast<float>(rankSum * static_cast<int>(i % 7 + 1));
  }
  int all = 0;
  STRATA_MPI_CHECK(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
  return all == 1;
}

Buffers buffersFor(int rank, size_t count) {
  Buffers b;
  b.send.resize(count);
  b.recv.resize(count);
  for (size_t i = 0; i < count; ++i) b.send[i] = sweepInput(rank, i);
  return b;
}

// The plans as timeInterleaved's candidates: float32 sum allreduces of `count` under each.
Status timeRounds(tools_iface::ToolsComm& c, Buffers& b, size_t count, int warmup, int iters,
                  double budgetUs, const std::vector<PlanTiming*>& plans) {
  std::vector<Candidate> candidates;
  for (PlanTiming* t : plans) {
    candidates.push_back(Candidate{t,
                                   [&c, &b, t, count] {
                                     return c.allReduceWithPlan(t->plan, b.send.data(),
                                                                b.recv.data(), count, strataFloat32,
                                                                strataSum);
                                   },
                                   [&c, &b, count] { return resultCorrect(c, b, count); }});
  }
  return timeInterleaved(c, "allreduce", candidates, warmup, iters, budgetUs);
}

// The runoff (SweepOptions::runoffWithin): the plans close to the fastest get more interleaved
// calls, so that noise in a few calls does not decide between plans that are nearly equal.
Status runoff(tools_iface::ToolsComm& c, const SweepOptions& o, Buffers& b, SizeResult* r) {
  r->fastest = fastestOf(r->plans);
  if (r->fastest < 0 || o.runoffIters <= 0) return Status::ok();
  const double bound = r->plans[r->fastest].medianUs * (1 + o.runoffWithin);
  std::vector<PlanTiming*> close;
  for (PlanTiming& t : r->plans) {
    if (t.correct && !t.us.empty() && t.medianUs <= bound) close.push_back(&t);
  }
  if (close.size() < 2) return Status::ok();
  r->runoff = static_cast<int>(close.size());
  STRATA_RETURN_IF_ERROR(
      timeRounds(c, b, r->bytes / sizeof(float), 0, o.runoffIters, o.planSeconds * 1e6, close));
  r->fastest = fastestOf(r->plans);
  return Status::ok();
}

}  // namespace

float sweepInput(int rank, size_t i) { return static_cast<float>((rank + 1) * (i % 7 + 1)); }

Status timeInterleaved(tools_iface::ToolsComm& c, const char* what,
                       const std::vector<Candidate>& candidates, int warmup, int iters,
                       double budgetUs) {
  std::vector<double> spentUs(candidates.size(), 0);
  std::vector<bool> stopped(candidates.size(), false);
  for (int i = 0; i < warmup + iters; ++i) {
    const bool warm = i < warmup;
    for (size_t k = 0; k < candidates.size(); ++k) {
      Timing* t = candidates[k].timing;
      const bool overBudget = budgetUs > 0 && spentUs[k] > budgetUs;
      if (!t->correct || stopped[k] || (warm && overBudget)) continue;
      STRATA_ASSIGN_OR_RETURN(double us, timedOnEveryRank(c, what, candidates[k].call));
      spentUs[k] += us;
      if (!t->checked) {
        STRATA_ASSIGN_OR_RETURN(t->correct, candidates[k].correct());
        t->checked = true;
        if (!t->correct) continue;  // a wrong candidate is not worth timing
      }
      if (warm) continue;
      t->us.push_back(us);
      if (budgetUs > 0 && spentUs[k] > budgetUs && i + 1 < warmup + iters) {
        stopped[k] = true;
        t->cutShort = true;
      }
    }
  }
  for (const Candidate& cand : candidates) cand.timing->medianUs = median(cand.timing->us);
  return Status::ok();
}

int fastestOf(const std::vector<PlanTiming>& plans) {
  int best = -1;
  for (size_t i = 0; i < plans.size(); ++i) {
    const PlanTiming& t = plans[i];
    if (!t.correct || t.us.empty()) continue;
    // Ties keep the earlier plan, the one the model ranks better.
    if (best < 0 || t.medianUs < plans[best].medianUs) best = static_cast<int>(i);
  }
  return best;
}

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

StatusOr<std::vector<SizeResult>> runSweep(tools_iface::ToolsComm& c,
                                           const topo::Hierarchy& measured, const SweepOptions& o,
                                           const SweepProgress& progress) {
  // Make every candidate's stage groups now (collective, same order on every rank), so no
  // timed call pays for a communicator split.
  for (const plan::Plan& p : plan::candidatePlans(c.hierarchy(), c.costParams())) {
    STRATA_RETURN_IF_ERROR(c.preparePlan(p));
  }
  const size_t maxCount = o.sizes.empty() ? 0 : o.sizes.back() / sizeof(float);
  Buffers b = buffersFor(c.rank(), maxCount);
  // A few untimed calls of every candidate at the smallest size first: the first messages of a
  // group connect its endpoints, which would otherwise count against the first size's plans.
  if (!o.sizes.empty()) {
    std::vector<PlanTiming> warm;
    for (const plan::Plan& p : plan::candidatePlans(c.hierarchy(), c.costParams())) {
      warm.emplace_back();
      warm.back().plan = p;
    }
    std::vector<PlanTiming*> all;
    for (PlanTiming& t : warm) all.push_back(&t);
    STRATA_RETURN_IF_ERROR(
        timeRounds(c, b, o.sizes.front() / sizeof(float), 5, 0, o.planSeconds * 1e6, all));
  }

  std::vector<SizeResult> out;
  for (size_t s = 0; s < o.sizes.size(); ++s) {
    SizeResult r;
    r.bytes = o.sizes[s];
    r.plans = plansToTime(measured, static_cast<double>(r.bytes), c.costParams(), o.top);
    if (c.rank() == 0 && progress.sizeStarted) progress.sizeStarted(s, r);
    std::vector<PlanTiming*> all;
    for (PlanTiming& t : r.plans) all.push_back(&t);
    STRATA_RETURN_IF_ERROR(
        timeRounds(c, b, r.bytes / sizeof(float), o.warmup, o.iters, o.planSeconds * 1e6, all));
    STRATA_RETURN_IF_ERROR(runoff(c, o, b, &r));
    if (c.rank() == 0 && progress.sizeDone) progress.sizeDone(s, r);
    out.push_back(std::move(r));
  }
  return out;
}

StatusOr<bool> timeAddedPlan(tools_iface::ToolsComm& c, const SweepOptions& o, const plan::Plan& p,
                             double predictedUs, SizeResult* r) {
  PlanTiming t;
  t.plan = p;
  t.description = plan::describePlan(c.hierarchy(), p);
  t.predictedUs = predictedUs;
  t.added = true;
  for (const PlanTiming& have : r->plans) {
    if (have.description == t.description) return false;
  }
  STRATA_RETURN_IF_ERROR(c.preparePlan(p));
  Buffers b = buffersFor(c.rank(), r->bytes / sizeof(float));
  const int best = fastestOf(r->plans);
  r->plans.push_back(t);
  PlanTiming* added = &r->plans.back();
  std::vector<PlanTiming*> both = {added};
  if (best >= 0) both.push_back(&r->plans[best]);
  // Its warm-ups alone, then rounds against the fastest so far.
  STRATA_RETURN_IF_ERROR(
      timeRounds(c, b, r->bytes / sizeof(float), o.warmup, 0, o.planSeconds * 1e6, {added}));
  STRATA_RETURN_IF_ERROR(timeRounds(c, b, r->bytes / sizeof(float), 0,
                                    std::max(o.iters, o.runoffIters), o.planSeconds * 1e6, both));
  r->fastest = fastestOf(r->plans);
  return true;
}

Status retime(tools_iface::ToolsComm& c, size_t bytes, int warmup, int iters,
              std::vector<PlanTiming>* plans) {
  for (const PlanTiming& t : *plans) STRATA_RETURN_IF_ERROR(c.preparePlan(t.plan));
  Buffers b = buffersFor(c.rank(), bytes / sizeof(float));
  std::vector<PlanTiming*> all;
  for (PlanTiming& t : *plans) all.push_back(&t);
  return timeRounds(c, b, bytes / sizeof(float), warmup, iters, 0, all);
}

}  // namespace strata::tools
