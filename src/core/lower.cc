#include "core/lower.h"

#include <algorithm>

#include "core/plan_book.h"

namespace strata::core {

using plan::Step;

namespace {

// A piece's schedule split around its allreduce step: [begin, ar) the reduce-scatters, then
// the allreduce when hasAr, then [gather, end) the all-gathers. A rank outside every top group
// (irregular layouts) has no allreduce step.
struct Split {
  size_t begin = 0, ar = 0, gather = 0, end = 0;
  bool hasAr = false;
};

Split split(const std::vector<Step>& steps) {
  Split s;
  s.end = steps.size();
  s.ar = static_cast<size_t>(
      std::find_if(steps.begin(), steps.end(),
                   [](const Step& x) { return x.kind != Collective::kReduceScatter; }) -
      steps.begin());
  s.hasAr = s.ar != s.end && steps[s.ar].kind == Collective::kAllReduce;
  s.gather = s.hasAr ? s.ar + 1 : s.ar;
  return s;
}

}  // namespace

void Lowering::keep(const Schedule& s) {
  if (std::find(prog_.keep.begin(), prog_.keep.end(), s) == prog_.keep.end()) {
    prog_.keep.push_back(s);
  }
}

LevelGroup* Lowering::groupOf(const std::vector<LevelGroup*>& groups, int level) const {
  return level == plan::kFlatLevel ? lc_.flat : groups[static_cast<size_t>(level)];
}

WireType Lowering::wireOf(const std::vector<WireType>* wire, const Step& s) const {
  if (lc_.device || wire == nullptr || s.count == 0 || s.level < 0 ||
      s.level >= static_cast<int>(wire->size())) {
    return WireType::kNone;
  }
  const bool movable = s.kind == Collective::kReduceScatter || s.kind == Collective::kAllReduce ||
                       s.kind == Collective::kAllGather;
  const WireType w = (*wire)[static_cast<size_t>(s.level)];
  return movable && wireApplies(w, type_, op_) ? w : WireType::kNone;
}

void Lowering::steps(const Schedule& sched, size_t begin, size_t end, BufRef in, BufRef work,
                     const std::vector<LevelGroup*>& groups, strataRedOp_t op,
                     const std::vector<WireType>* wire) {
  keep(sched);
  const std::vector<Step>& all = *sched;
  for (size_t i = begin; i < end; ++i) {
    const Step& s = all[i];
    Instr x;
    x.op = Op::kStep;
    x.step = &s;
    x.group = groupOf(groups, s.level);
    x.wire = wireOf(wire, s);
    x.in = in;
    x.work = work;
    x.index = static_cast<int>(i - begin + 1);
    x.total = static_cast<int>(end - begin);
    add(x);
    if (op == strataAvg && s.finishesReduction) {
      if (s.kind == Collective::kReduceScatter) {
        divide(work + (s.offset + s.displs[static_cast<size_t>(s.index)]),
               s.counts[static_cast<size_t>(s.index)]);
      } else if (s.kind == Collective::kAllReduce) {
        divide(work + s.offset, s.count);
      }
    }
    in = work;  // every later step works in place
  }
}

// The pipeline, for pieces k = 0..K-1:
//   for k = 0..K: RS(k) [k < K]; wait AR(k-1) [k > 0]; start AR(k) [k < K]; AG(k-1) [k > 0]
// so AR(k) is in flight during AG(k-1) and RS(k+1), progressed by their fabrics' waits
// (IdleHook). Invariants: each fabric sees its collectives in the same order on every member
// (pieces in order, RS before AG of one piece, one AR in flight per fabric); a piece's AG starts
// only after its AR finished on this rank; and the pieces of one rank's buffer are disjoint, so
// overlapping stages never touch the same bytes.
void Lowering::allReducePass(const AllReducePass& pass, Buf inBuf, Buf outBuf) {
  const PlanExec& exec = *pass.exec;
  const size_t piece = pass.pieceElements;
  const size_t pieces = (pass.count + piece - 1) / piece;
  const BufRef in{inBuf, pass.offset}, out{outBuf, pass.offset};
  auto schedOf = [&](size_t k) { return k + 1 == pieces ? pass.lastPiece : pass.steps; };
  if (!pass.overlap) {
    // Nothing to overlap: whole pieces one after another.
    for (size_t k = 0; k < pieces; ++k) {
      const Schedule s = schedOf(k);
      steps(s, 0, s->size(), in + k * piece, out + k * piece, exec.groups, op_, &exec.wire);
    }
    return;
  }
  const Step* inFlight = nullptr;  // AR(k-1)'s step, while it runs
  for (size_t k = 0; k <= pieces; ++k) {
    const size_t off = k * piece;
    Split sk{};
    Schedule sched;
    if (k < pieces) {
      sched = schedOf(k);
      sk = split(*sched);
      steps(sched, sk.begin, sk.ar, in + off, out + off, exec.groups, op_, &exec.wire);
    }
    if (inFlight != nullptr) {
      Instr w;
      w.op = Op::kWait;
      w.index = static_cast<int>(k);
      w.total = static_cast<int>(pieces);
      add(w);
      if (op_ == strataAvg && inFlight->finishesReduction) {
        divide(out + (off - piece + inFlight->offset), inFlight->count);
      }
      inFlight = nullptr;
    }
    if (k < pieces && sk.hasAr) {
      const Step& ar = (*sched)[sk.ar];
      Instr x;
      x.op = Op::kStart;
      x.step = &ar;
      x.group = groupOf(exec.groups, ar.level);
      x.wire = wireOf(&exec.wire, ar);
      // Its input is the reduce-scatters' output, or the caller's buffer when there were none.
      x.in = sk.ar == sk.begin ? in + off : out + off;
      x.work = out + off;
      x.index = static_cast<int>(sk.ar - sk.begin + 1);
      x.total = static_cast<int>(sk.end - sk.begin);
      add(x);
      inFlight = &ar;
    }
    if (k > 0) {
      const Schedule prev = schedOf(k - 1);
      const Split sp = split(*prev);
      steps(prev, sp.gather, sp.end, out + (off - piece), out + (off - piece), exec.groups, op_,
            &exec.wire);
    }
  }
}

void Lowering::copy(BufRef dst, BufRef src, size_t count) {
  Instr x;
  x.op = Op::kCopy;
  x.in = src;
  x.work = dst;
  x.count = count;
  add(x);
}

void Lowering::divide(BufRef dst, size_t count) {
  Instr x;
  x.op = Op::kDivide;
  x.work = dst;
  x.count = count;
  add(x);
}

}  // namespace strata::core
