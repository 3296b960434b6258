#include "core/run_steps.h"

#include <algorithm>
#include <string>

#include "common/buffer.h"
#include "common/datatype.h"
#include "common/log.h"
#include "core/nvtx.h"
#include "core/wire_steps.h"

namespace strata::core {
namespace {

using plan::Step;

// The fabric of a step: the whole communicator's, or that of the step's level group (the
// comm's own levels, or a plan's stage groups), on the executor's memory.
StatusOr<fabric::Fabric*> fabricFor(Comm& c, Executor& x, const std::vector<LevelGroup*>& groups,
                                    int level) {
  return x.fabricOf(level == plan::kFlatLevel ? c.groups().flat() : *groups[level]);
}

// A piece's schedule split around its allreduce step: [begin, ar) the reduce-scatters, then
// the allreduce when hasAr, then [gather, end) the all-gathers. A rank outside every top group
// (irregular layouts) has no allreduce step.
struct Split {
  const Step* begin = nullptr;
  const Step* ar = nullptr;
  bool hasAr = false;
  const Step* gather = nullptr;
  const Step* end = nullptr;
};

Split split(const std::vector<Step>& steps) {
  Split s;
  s.begin = steps.data();
  s.end = s.begin + steps.size();
  s.ar = std::find_if(s.begin, s.end,
                      [](const Step& x) { return x.kind != Collective::kReduceScatter; });
  s.hasAr = s.ar != s.end && s.ar->kind == Collective::kAllReduce;
  s.gather = s.hasAr ? s.ar + 1 : s.ar;
  return s;
}

// The wire type step `s` runs in: its level's, for a float32 sum or average on a level that
// has one (core/wire_steps.h), else none.
// What a step moves, for the timeline: its range, and what this rank sends over the level's link
// for it, as nccl-tests counts bus bandwidth (a ring reduce-scatter or all-gather sends all but
// its own block, an allreduce twice that; a rooted step or a send its whole range).
void describeStep(TimelineEvent& e, const Step& s, size_t ts, const fabric::Fabric& f, int index,
                  int total) {
  const size_t n = static_cast<size_t>(std::max(1, f.size()));
  const size_t own = s.index >= 0 && static_cast<size_t>(s.index) < s.counts.size()
                         ? s.counts[static_cast<size_t>(s.index)]
                         : s.count / n;
  e.coll = s.kind;
  e.level = s.level;
  e.fabric = f.name();
  e.step = index;
  e.steps = total;
  e.groupSize = f.size();
  e.member = f.rank();
  e.bytes = s.count * ts;
  switch (s.kind) {
    case Collective::kReduceScatter:
    case Collective::kAllGather:
    case Collective::kScatter:
    case Collective::kGather:
      e.wireBytes = (s.count - std::min(own, s.count)) * ts;
      break;
    case Collective::kAllReduce:
      e.wireBytes = 2 * (s.count * (n - 1) / n) * ts;
      break;
    default:
      e.wireBytes = s.count * ts;
      break;
  }
}

WireType stepWire(const std::vector<WireType>* wire, const Step& s, strataDataType_t type,
                  strataRedOp_t op) {
  if (wire == nullptr || s.level < 0 || s.level >= static_cast<int>(wire->size())) {
    return WireType::kNone;
  }
  const bool movable = s.kind == Collective::kReduceScatter || s.kind == Collective::kAllReduce ||
                       s.kind == Collective::kAllGather;
  const WireType w = (*wire)[s.level];
  return movable && wireApplies(w, type, op) ? w : WireType::kNone;
}

}  // namespace

Status runSteps(Comm& c, Executor& x, const std::vector<LevelGroup*>& groups, const Step* begin,
                const Step* end, const void* src, void* work, strataDataType_t type,
                strataRedOp_t op, const std::vector<WireType>* wire) {
  const size_t ts = dataTypeSize(type);
  const strataRedOp_t fop = op == strataAvg ? strataSum : op;
  const void* in = src;
  for (const Step* s = begin; s != end; ++s) {
    c.flightRecorder().step(static_cast<int>(s - begin + 1), static_cast<int>(end - begin), s->kind,
                            s->level);
    STRATA_ASSIGN_OR_RETURN(fabric::Fabric * f, fabricFor(c, x, groups, s->level));
    Timeline* t = c.timeline();
    TimelineSpan span(t, [&](TimelineEvent& e) {
      e.cat = TimelineEvent::Cat::kStep;
      e.seq = t->running();
      describeStep(e, *s, ts, *f, static_cast<int>(s - begin + 1), static_cast<int>(end - begin));
    });
    // A compressed step's wire-type copy; none where the executor has no host scratch for it.
    WireType w = stepWire(wire, *s, type, op);
    void* wireBuf = w == WireType::kNone ? nullptr : x.wireScratch(0, wireBytes(*s));
    if (wireBuf == nullptr) w = WireType::kNone;
    // Where a failure happened: the stage (step) of the schedule, its level and fabric. The
    // text is built only for a failure: every step of every call passes through here.
    auto where = [&](const Status& st) {
      if (st.isOk()) return st;
      return st.withContext(
          "step " + std::to_string(s - begin + 1) + " of " + std::to_string(end - begin) + " (" +
          collectiveName(s->kind) + " at level " +
          (s->level == plan::kFlatLevel ? std::string("flat") : std::to_string(s->level)) +
          ", fabric " + f->name() + ", member " + std::to_string(f->rank()) + " of " +
          std::to_string(f->size()) + ")");
    };
    switch (s->kind) {
      case Collective::kReduceScatter:
        STRATA_RETURN_IF_ERROR(
            where(w != WireType::kNone
                      ? runWireStep(*f, *s, in, work, w, wireBuf, t)
                      : f->reduceScatter(at(in, s->offset, ts),
                                         at(work, s->offset + s->displs[s->index], ts),
                                         s->counts.data(), s->displs.data(), type, fop)));
        if (op == strataAvg && s->finishesReduction) {
          STRATA_RETURN_IF_ERROR(x.divide(at(work, s->offset + s->displs[s->index], ts),
                                          s->counts[s->index], type, c.size()));
        }
        break;
      case Collective::kAllReduce:
        STRATA_RETURN_IF_ERROR(where(
            w != WireType::kNone ? runWireStep(*f, *s, in, work, w, wireBuf, t)
                                 : f->allReduce(at(in, s->offset, ts), at(work, s->offset, ts),
                                                s->count, type, fop)));
        if (op == strataAvg && s->finishesReduction) {
          STRATA_RETURN_IF_ERROR(x.divide(at(work, s->offset, ts), s->count, type, c.size()));
        }
        break;
      case Collective::kAllGather:
        STRATA_RETURN_IF_ERROR(
            where(w != WireType::kNone ? runWireStep(*f, *s, in, work, w, wireBuf, t)
                                       : f->allGather(at(work, s->offset + s->displs[s->index], ts),
                                                      at(work, s->offset, ts), s->counts.data(),
                                                      s->displs.data(), type)));
        break;
      // The rooted kinds (decompose/rooted.h): the broadcast and scatter move the root's
      // range in place; the reduce reads `in` like the reduce-scatter; the gather collects
      // every member's block in place; send and recv move the whole range.
      case Collective::kBroadcast:
        STRATA_RETURN_IF_ERROR(where(f->broadcast(at(work, s->offset, ts), at(work, s->offset, ts),
                                                  s->count, type, s->root)));
        break;
      case Collective::kReduce:
        STRATA_RETURN_IF_ERROR(where(f->reduce(at(in, s->offset, ts), at(work, s->offset, ts),
                                               s->count, type, fop, s->root)));
        break;
      case Collective::kScatter:
        STRATA_RETURN_IF_ERROR(
            where(f->scatter(at(work, s->offset, ts), at(work, s->offset + s->displs[s->index], ts),
                             s->counts.data(), s->displs.data(), type, s->root)));
        break;
      case Collective::kGather:
        STRATA_RETURN_IF_ERROR(
            where(f->gather(at(work, s->offset + s->displs[s->index], ts), at(work, s->offset, ts),
                            s->counts.data(), s->displs.data(), type, s->root)));
        break;
      case Collective::kSend:
      case Collective::kRecv: {
        fabric::PeerOp peer;
        peer.send = s->kind == Collective::kSend;
        peer.buf = at(work, s->offset, ts);
        peer.count = s->count;
        peer.type = type;
        peer.peer = s->root;
        STRATA_RETURN_IF_ERROR(where(f->exchange(&peer, 1)));
        break;
      }
    }
    in = work;  // every later step works in place
  }
  return Status::ok();
}

// The pipeline, for pieces k = 0..K-1:
//   for k = 0..K: RS(k) [k < K]; wait AR(k-1) [k > 0]; start AR(k) [k < K]; AG(k-1) [k > 0]
// so AR(k) is in flight during AG(k-1) and RS(k+1), progressed by their fabrics' waits
// (IdleHook). Invariants: each fabric sees its collectives in the same order on every member
// (pieces in order, RS before AG of one piece, one AR in flight per fabric); a piece's AG starts
// only after its AR finished on this rank; and the pieces of one rank's buffer are disjoint, so
// overlapping stages never touch the same bytes.
Status runPipelined(Comm& c, Executor& x, const ProgramPass& pass, const void* send, void* recv,
                    strataDataType_t type, strataRedOp_t op) {
  const PlanExec& exec = *pass.exec;
  const size_t ts = dataTypeSize(type);
  const size_t count = pass.count, piece = pass.pieceElements;
  const size_t pieces = (count + piece - 1) / piece;
  const std::vector<Step>& full = *pass.steps;
  const std::vector<Step>& last = *pass.lastPiece;
  const Split fullSplit = split(full);
  if (!pass.overlap) {
    // Nothing to overlap: whole pieces one after another.
    for (size_t k = 0; k < pieces; ++k) {
      const size_t off = k * piece;
      const std::vector<Step>& steps = k + 1 == pieces ? last : full;
      STRATA_RETURN_IF_ERROR(runSteps(c, x, exec.groups, steps, at(send, off, ts),
                                      at(recv, off, ts), type, op, &exec.wire));
    }
    return Status::ok();
  }
  const strataRedOp_t fop = op == strataAvg ? strataSum : op;
  auto splitOf = [&](size_t k) { return k + 1 == pieces ? split(last) : fullSplit; };
  fabric::Fabric* inFlight = nullptr;  // the fabric of AR(k-1), while it runs
  const Step* inFlightStep = nullptr;
  WireAllReduce inFlightWire;  // AR(k-1) compressed: its wire copy (slot 1) and scale
  Timeline* const t = c.timeline();
  TimelineEvent inFlightEvent;  // AR(k-1) on the timeline, from its start to its wait's end
  uint64_t inFlightRange = 0;   // and its NVTX range
  Status failed = Status::ok();
  for (size_t k = 0; k <= pieces && failed.isOk(); ++k) {
    const size_t off = k * piece;
    fabric::IdleHook hook(inFlight);
    Split sk{};
    if (k < pieces) {
      sk = splitOf(k);
      failed = runSteps(c, x, exec.groups, sk.begin, sk.ar, at(send, off, ts), at(recv, off, ts),
                        type, op, &exec.wire);
    }
    if (inFlight != nullptr) {
      Status st = Status::ok();
      {
        TimelineSpan wait(t, TimelineEvent::Cat::kWait, "pipelined allreduce wait",
                          inFlightEvent.seq);
        wait.event.fabric = inFlight->name();
        st = inFlightWire.wire != WireType::kNone ? finishWireAllReduce(*inFlight, inFlightWire, t)
                                                  : inFlight->allReduceWait();
      }
      if (t != nullptr) {
        inFlightEvent.endNs = Timeline::nowNs();
        nvtx::end(inFlightRange);
        inFlightRange = 0;
        t->add(inFlightEvent);
      }
      if (!st.isOk()) {
        st = st.withContext("pipelined allreduce of piece " + std::to_string(k) + " of " +
                            std::to_string(pieces) + " (fabric " + inFlight->name() + ")");
      }
      if (failed.isOk()) failed = st;
      if (failed.isOk() && op == strataAvg && inFlightStep->finishesReduction) {
        failed = x.divide(at(recv, off - piece + inFlightStep->offset, ts), inFlightStep->count,
                          type, c.size());
      }
      inFlight = nullptr;
    }
    if (!failed.isOk()) break;
    if (k < pieces && sk.hasAr) {
      // Its input is the reduce-scatters' output, or the caller's buffer when there were none.
      const void* in = sk.ar == sk.begin ? at(send, off, ts) : at(recv, off, ts);
      StatusOr<fabric::Fabric*> f = fabricFor(c, x, exec.groups, sk.ar->level);
      if (!f.isOk()) {
        failed = f.status();
        break;
      }
      if (t != nullptr) {
        inFlightEvent = TimelineEvent{};
        inFlightEvent.cat = TimelineEvent::Cat::kStep;
        inFlightEvent.inFlight = true;
        inFlightEvent.seq = t->running();
        const Split& whole = splitOf(k);
        describeStep(inFlightEvent, *sk.ar, ts, *f.value(),
                     static_cast<int>(sk.ar - whole.begin + 1),
                     static_cast<int>(whole.end - whole.begin));
        inFlightRange = t->nvtxStart(inFlightEvent);
        inFlightEvent.beginNs = Timeline::nowNs();
      }
      // Compressed, its wire copy lives in slot 1: slot 0 serves the steps run meanwhile.
      const WireType w = stepWire(&exec.wire, *sk.ar, type, op);
      void* wireBuf = w == WireType::kNone ? nullptr : x.wireScratch(1, wireBytes(*sk.ar));
      inFlightWire = WireAllReduce{};
      if (wireBuf != nullptr) {
        StatusOr<WireAllReduce> started =
            startWireAllReduce(*f.value(), at(in, sk.ar->offset, ts),
                               at(recv, off + sk.ar->offset, ts), sk.ar->count, w, wireBuf, t);
        failed = started.status();
        if (failed.isOk()) inFlightWire = started.value();
      } else {
        failed = f.value()->allReduceStart(
            at(in, sk.ar->offset, ts), at(recv, off + sk.ar->offset, ts), sk.ar->count, type, fop);
      }
      if (!failed.isOk()) break;
      inFlight = f.value();
      inFlightStep = sk.ar;
    }
    if (k > 0) {
      fabric::IdleHook agHook(inFlight);
      const Split prev = splitOf(k - 1);
      failed = runSteps(c, x, exec.groups, prev.gather, prev.end, at(recv, off - piece, ts),
                        at(recv, off - piece, ts), type, op, &exec.wire);
    }
  }
  if (inFlight != nullptr) {
    // After a failure: leave nothing running. The first error is the one to report.
    Status drained = inFlight->allReduceWait();
    (void)drained;
  }
  nvtx::end(inFlightRange);  // a range still open after a failure
  return failed;
}

}  // namespace strata::core
