#include "tune_forms.h"

#include <mpi.h>

#include <algorithm>
#include <cmath>

#include "common/mpi_check.h"
#include "decompose/blocks_cost.h"
#include "decompose/planner.h"
#include "tune_report.h"

namespace strata::tools {
namespace {

using plan::BlockForm;

constexpr BlockForm kForms[] = {BlockForm::kFlat, BlockForm::kHierarchical};

// A form that measured faster than the cost model's pick by less than this keeps the model's
// pick. On the 2-core lab one launch's medians of the same form and size differ by more than
// this (a 256 KiB flat reduce-scatter: 504 us in one tune, 679-751 us in four other launches),
// so a smaller lead is not evidence that the form is faster.
constexpr double kFormMargin = 0.05;

const char* collLabel(Collective coll) {
  return coll == Collective::kReduceScatter ? "reduce-scatter" : "all-gather";
}

// A reduce-scatter sends every rank's whole vector (ranks x count) and receives its block; an
// all-gather sends its block and receives every rank's.
struct Buffers {
  std::vector<float> send, recv;
};

Buffers buffersFor(Collective coll, int rank, int ranks, size_t count) {
  const size_t all = count * static_cast<size_t>(ranks);
  Buffers b;
  b.send.resize(coll == Collective::kReduceScatter ? all : count);
  b.recv.resize(coll == Collective::kReduceScatter ? count : all);
  for (size_t i = 0; i < b.send.size(); ++i) b.send[i] = sweepInput(rank, i);
  return b;
}

// Whether every rank got the exact result of a call of `count` elements per block (the buffers
// may be larger, made for the sweep's largest size). Collective.
StatusOr<bool> resultCorrect(tools_iface::ToolsComm& c, Collective coll, const Buffers& b,
                             size_t count) {
  const int rankSum = c.size() * (c.size() + 1) / 2;
  const size_t received =
      coll == Collective::kReduceScatter ? count : count * static_cast<size_t>(c.size());
  int ok = 1;
  for (size_t i = 0; i < received && ok; ++i) {
    float want = 0;
    if (coll == Collective::kReduceScatter) {
      // Element i of this rank's block is element rank * count + i of every rank's vector.
      const size_t at = static_cast<size_t>(c.rank()) * count + i;
      want = static_cast<float>(rankSum * static_cast<int>(at % 7 + 1));
    } else {
      want = sweepInput(static_cast<int>(i / count), i % count);
    }
    ok = b.recv[i] == want;
  }
  int all = 0;
  STRATA_MPI_CHECK(MPI_Allreduce(&ok, &all, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD));
  return all == 1;
}

// The index of the lower of `us(form)` over r's forms (ties: flat, the earlier).
template <typename F>
int pickBy(const FormSizeResult& r, F us) {
  int best = -1;
  for (size_t k = 0; k < r.forms.size(); ++k) {
    if (best < 0 || us(r.forms[k]) < us(r.forms[best])) best = static_cast<int>(k);
  }
  return best;
}

// Both forms in timeInterleaved's rounds, then the fastest and the chosen form.
Status timeRounds(tools_iface::ToolsComm& c, FormSizeResult* r, Buffers& b, int warmup, int iters,
                  double budgetUs) {
  std::vector<Candidate> candidates;
  for (FormTiming& t : r->forms) {
    candidates.push_back(Candidate{&t,
                                   [&c, &b, &t, r] {
                                     return c.blocksWithForm(r->coll, t.form, b.send.data(),
                                                             b.recv.data(), r->count, strataFloat32,
                                                             strataSum);
                                   },
                                   [&c, &b, r] { return resultCorrect(c, r->coll, b, r->count); }});
  }
  STRATA_RETURN_IF_ERROR(
      timeInterleaved(c, collLabel(r->coll), candidates, warmup, iters, budgetUs));
  r->fastest = -1;
  for (size_t k = 0; k < r->forms.size(); ++k) {
    const FormTiming& t = r->forms[k];
    if (!t.correct || t.us.empty()) continue;
    if (r->fastest < 0 || t.medianUs < r->forms[r->fastest].medianUs)
      r->fastest = static_cast<int>(k);
  }
  r->chosen = r->fastest;
  const int model = pickBy(*r, [](const FormTiming& t) { return t.predictedUs; });
  const FormTiming& m = r->forms[model];
  if (r->fastest >= 0 && model != r->fastest && m.correct && !m.us.empty() &&
      m.medianUs <= r->forms[r->fastest].medianUs * (1 + kFormMargin)) {
    r->chosen = model;
  }
  return Status::ok();
}

FormSizeResult planned(const tools_iface::ToolsComm& c, const topo::Hierarchy& measured,
                       Collective coll, size_t bytes) {
  FormSizeResult r;
  r.coll = coll;
  r.count = bytes / (sizeof(float) * static_cast<size_t>(c.size()));
  r.bytes = r.count * sizeof(float) * static_cast<size_t>(c.size());
  for (BlockForm f : kForms) {
    FormTiming t;
    t.form = f;
    t.predictedUs =
        plan::predictBlocks(measured, coll, f, static_cast<double>(r.bytes), c.costParams())
            .totalUs;
    r.forms.push_back(t);
  }
  return r;
}

std::string formName(const FormSizeResult& r, int k) {
  return k < 0 ? "-" : plan::blockFormName(r.forms[k].form);
}

}  // namespace

bool formsComparable(const topo::Hierarchy& h) { return plan::hierarchicalBlocksPossible(h); }

StatusOr<std::vector<FormSizeResult>> runFormSweep(
    tools_iface::ToolsComm& c, const topo::Hierarchy& measured, Collective coll,
    const SweepOptions& o, const std::function<void(const FormSizeResult&)>& progress) {
  std::vector<FormSizeResult> out;
  if (o.sizes.empty()) return out;
  const size_t maxCount = o.sizes.back() / (sizeof(float) * static_cast<size_t>(c.size()));
  Buffers b = buffersFor(coll, c.rank(), c.size(), std::max<size_t>(1, maxCount));
  bool warmed = false;
  for (size_t bytes : o.sizes) {
    FormSizeResult r = planned(c, measured, coll, bytes);
    if (r.count == 0) continue;  // under one element per rank
    if (!warmed) {
      // The first calls of each form connect its groups' endpoints: not timed.
      FormSizeResult warm = r;
      STRATA_RETURN_IF_ERROR(timeRounds(c, &warm, b, 5, 0, o.planSeconds * 1e6));
      warmed = true;
    }
    STRATA_RETURN_IF_ERROR(
        timeRounds(c, &r, b, o.warmup, o.iters + o.runoffIters, o.planSeconds * 1e6));
    if (c.rank() == 0 && progress) progress(r);
    out.push_back(std::move(r));
  }
  return out;
}

void predictFitted(const FitResult& fit, std::vector<FormSizeResult>* results) {
  for (FormSizeResult& r : *results) {
    for (FormTiming& t : r.forms) {
      t.fittedUs =
          plan::predictBlocks(fit.fitted, r.coll, t.form, static_cast<double>(r.bytes), fit.params)
              .totalUs;
    }
  }
}

StatusOr<FormSizeResult> retimeForms(tools_iface::ToolsComm& c, const topo::Hierarchy& measured,
                                     Collective coll, size_t bytes, int warmup, int iters) {
  FormSizeResult r = planned(c, measured, coll, bytes);
  if (r.count == 0) return r;
  Buffers b = buffersFor(coll, c.rank(), c.size(), r.count);
  STRATA_RETURN_IF_ERROR(timeRounds(c, &r, b, warmup, iters, 0));
  return r;
}

StatusOr<std::vector<plan::BlockRule>> formRules(const std::vector<FormSizeResult>& results) {
  std::vector<plan::BlockRule> rules;
  for (size_t i = 0; i < results.size(); ++i) {
    const FormSizeResult& r = results[i];
    if (r.chosen < 0) {
      return internalError(std::string("no form of the ") + collLabel(r.coll) +
                           " gave the exact result at " + humanBytes(r.bytes) +
                           "; not writing a plan file");
    }
    const BlockForm form = r.forms[r.chosen].form;
    const size_t lo = i == 0 ? 0
                             : static_cast<size_t>(std::llround(
                                   std::sqrt(static_cast<double>(results[i - 1].bytes) * r.bytes)));
    if (!rules.empty() && rules.back().form == form) continue;
    if (!rules.empty()) rules.back().maxBytes = lo;
    plan::BlockRule rule;
    rule.minBytes = lo;
    rule.form = form;
    rules.push_back(rule);
  }
  return rules;
}

std::string formatFormSweep(const std::vector<FormSizeResult>& results, int* disagree) {
  std::vector<std::vector<std::string>> rows = {
      {"size", "flat us", "predicted", "fitted", "hier. us", "predicted", "fitted", "model picks",
       "fitted picks", "fastest", "chosen", "fitted pick / fastest"}};
  *disagree = 0;
  for (const FormSizeResult& r : results) {
    const FormTiming& flat = r.forms[0];
    const FormTiming& hier = r.forms[1];
    auto us = [](const FormTiming& t) { return t.correct ? num(t.medianUs) : "WRONG"; };
    const int model = pickBy(r, [](const FormTiming& t) { return t.predictedUs; });
    const int fitted = pickBy(r, [](const FormTiming& t) { return t.fittedUs; });
    std::string cost = "-";
    if (r.fastest >= 0 && fitted >= 0 && r.forms[fitted].correct) {
      cost = num(r.forms[fitted].medianUs / r.forms[r.fastest].medianUs);
      if (fitted != r.fastest) ++*disagree;
    }
    rows.push_back({humanBytes(r.bytes), us(flat), num(flat.predictedUs),
                    flat.fittedUs > 0 ? num(flat.fittedUs) : "-", us(hier), num(hier.predictedUs),
                    hier.fittedUs > 0 ? num(hier.fittedUs) : "-", formName(r, model),
                    formName(r, fitted), formName(r, r.fastest), formName(r, r.chosen), cost});
  }
  return alignTable(rows,
                    {false, true, true, true, true, true, true, false, false, false, false, true});
}

std::string formatFormCheck(const std::vector<FormSizeResult>& results,
                            const std::vector<plan::BlockRule>& rules, double* worst) {
  std::vector<std::vector<std::string>> rows = {
      {"size", "file's form", "us", "other form", "us", "file / other"}};
  *worst = 0;
  for (const FormSizeResult& r : results) {
    const plan::BlockRule* rule = plan::blockRuleFor(rules, r.bytes);
    const BlockForm fileForm = rule != nullptr ? rule->form : BlockForm::kFlat;
    const FormTiming& file = r.forms[fileForm == BlockForm::kFlat ? 0 : 1];
    const FormTiming& other = r.forms[fileForm == BlockForm::kFlat ? 1 : 0];
    std::string ratio = "-";
    if (file.correct && other.correct && file.medianUs > 0 && other.medianUs > 0) {
      const double x = file.medianUs / other.medianUs;
      *worst = std::max(*worst, x);
      ratio = num(x);
    }
    rows.push_back({humanBytes(r.bytes), plan::blockFormName(file.form),
                    file.correct ? num(file.medianUs) : "WRONG", plan::blockFormName(other.form),
                    other.correct ? num(other.medianUs) : "WRONG", ratio});
  }
  return alignTable(rows, {false, false, true, false, true, true});
}

}  // namespace strata::tools
