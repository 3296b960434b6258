// The executor loop (core/run.h): one switch over core/instr.h's instructions.
#include "core/run.h"

#include <algorithm>
#include <cstring>
#include <string>

#include "common/buffer.h"
#include "common/datatype.h"
#include "core/nvtx.h"
#include "core/wire_steps.h"

namespace strata::core {

namespace {

using plan::Step;

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

// Where a step's failure happened: the stage (step) of the schedule, its level and fabric.
Status where(const Status& st, const Instr& i, const fabric::Fabric& f) {
  if (st.isOk()) return st;
  return st.withContext(stepText(i, f.name(), ", member " + std::to_string(f.rank()) + " of " +
                                                  std::to_string(f.size())));
}

// One fabric collective (Op::kStep) on `f`, reading `in` and working in `work` as
// decompose/schedule.h says for its kind; `fop`: the op the fabric combines with.
Status fabricStep(fabric::Fabric& f, const Instr& i, const void* in, void* work,
                  strataDataType_t type, strataRedOp_t fop) {
  const Step& s = *i.step;
  const size_t ts = dataTypeSize(type);
  if (i.whole) {
    // A flat reduce-scatter or all-gather straight between the call's buffers.
    if (s.kind == Collective::kAllGather) {
      return f.allGather(in, work, s.counts.data(), s.displs.data(), type);
    }
    return f.reduceScatter(in, work, s.counts.data(), s.displs.data(), type, fop);
  }
  // This member's block within the step's range (the kinds that have blocks).
  auto mine = [&] { return s.displs[static_cast<size_t>(s.index)]; };
  switch (s.kind) {
    case Collective::kReduceScatter:
      return f.reduceScatter(at(in, s.offset, ts), at(work, s.offset + mine(), ts), s.counts.data(),
                             s.displs.data(), type, fop);
    case Collective::kAllReduce:
      return f.allReduce(at(in, s.offset, ts), at(work, s.offset, ts), s.count, type, fop);
    case Collective::kAllGather:
      return f.allGather(at(work, s.offset + mine(), ts), at(work, s.offset, ts), s.counts.data(),
                         s.displs.data(), type);
    // The rooted kinds (decompose/rooted.h): the broadcast and scatter move the root's range
    // in place; the reduce reads `in` like the reduce-scatter; the gather collects every
    // member's block in place; send and recv move the whole range.
    case Collective::kBroadcast:
      return f.broadcast(at(work, s.offset, ts), at(work, s.offset, ts), s.count, type, s.root);
    case Collective::kReduce:
      return f.reduce(at(in, s.offset, ts), at(work, s.offset, ts), s.count, type, fop, s.root);
    case Collective::kScatter:
      return f.scatter(at(work, s.offset, ts), at(work, s.offset + mine(), ts), s.counts.data(),
                       s.displs.data(), type, s.root);
    case Collective::kGather:
      return f.gather(at(work, s.offset + mine(), ts), at(work, s.offset, ts), s.counts.data(),
                      s.displs.data(), type, s.root);
    case Collective::kSend:
    case Collective::kRecv: {
      fabric::PeerOp peer;
      peer.send = s.kind == Collective::kSend;
      peer.buf = at(work, s.offset, ts);
      peer.count = s.count;
      peer.type = type;
      peer.peer = s.root;
      return f.exchange(&peer, 1);
    }
  }
  return internalError(std::string("no step for ") + collectiveName(s.kind));
}

// The loop's state: the call's buffers resolved, and the allreduce in flight.
class Loop {
 public:
  Loop(RunContext& rc, const Program& prog, const Call& k, const RunBuffers& b, size_t begin,
       size_t end)
      : rc_(rc), prog_(prog), k_(k), b_(b), ts_(dataTypeSize(k.type)),
        fop_(k.op == strataAvg ? strataSum : k.op), begin_(begin),
        end_(std::min(end, prog.code.size())) {}
  ~Loop() {
    if (inFlightRange_ != 0) nvtx::end(inFlightRange_);  // a range still open after a failure
  }

  Status run() {
    if (prog_.scratchBytes > 0) {
      STRATA_ASSIGN_OR_RETURN(scratch_, rc_.x.scratch(prog_.scratchBytes));
    }
    Status failed = Status::ok();
    for (size_t i = begin_; i < end_; ++i) {
      failed = one(prog_.code[i]);
      if (!failed.isOk()) break;
    }
    if (inFlight_ != nullptr) {
      // After a failure: leave nothing running. The first error is the one to report. On
      // success this is a lowering bug: an allreduce started but not waited for in the range.
      Status drained = inFlight_->allReduceWait();
      (void)drained;
      if (failed.isOk()) failed = internalError("an allreduce left in flight past a program part");
    }
    return failed;
  }

 private:
  char* base(Buf buf) const {
    switch (buf) {
      case Buf::kSend:
        return static_cast<char*>(const_cast<void*>(b_.send));
      case Buf::kRecv:
        return static_cast<char*>(b_.recv);
      case Buf::kScratch:
        return static_cast<char*>(scratch_);
      case Buf::kFusion:
        return b_.fusion;
      case Buf::kNone:
        break;
    }
    return nullptr;
  }
  char* ptr(BufRef r) const { return at(base(r.buf), r.at, ts_); }

  Status one(const Instr& i) {
    switch (i.op) {
      case Op::kStep:
        return step(i);
      case Op::kStart:
        return start(i);
      case Op::kWait:
        return wait(i);
      case Op::kCopy:
        return rc_.x.copy(ptr(i.work), ptr(i.in), i.count * ts_);
      case Op::kDivide:
        return rc_.x.divide(ptr(i.work), i.count, k_.type, rc_.size);
      case Op::kPack:
        if (!b_.packed) packInto(b_.fusion, *b_.fused, k_.type, rc_.timeline, k_.seq);
        return Status::ok();
      case Op::kUnpack:
        return unpack();
      case Op::kPeer: {
        const fabric::PeerOp op = peerOp(k_);
        STRATA_ASSIGN_OR_RETURN(fabric::Fabric * f, rc_.x.fabricOf(*i.group));
        return f->exchange(&op, 1);
      }
    }
    return internalError("an instruction the executor does not know");
  }

  Status step(const Instr& i) {
    const Step& s = *i.step;
    rc_.recorder.step(i.index, i.total, s.kind, s.level);
    STRATA_ASSIGN_OR_RETURN(fabric::Fabric * f, rc_.x.fabricOf(*i.group));
    // The allreduce in flight progresses while this step's fabric waits.
    fabric::IdleHook hook(inFlight_);
    Timeline* t = rc_.timeline;
    TimelineSpan span(t, [&](TimelineEvent& e) {
      e.cat = TimelineEvent::Cat::kStep;
      e.seq = t->running();
      describeStep(e, s, ts_, *f, i.index, i.total);
    });
    if (i.wire != WireType::kNone) {
      void* wireBuf = rc_.x.wireScratch(0, wireBytes(s));
      if (wireBuf == nullptr) return internalError("a compressed step on memory with no wire copy");
      return where(runWireStep(*f, s, ptr(i.in), ptr(i.work), i.wire, wireBuf, t), i, *f);
    }
    return where(fabricStep(*f, i, ptr(i.in), ptr(i.work), k_.type, fop_), i, *f);
  }

  Status start(const Instr& i) {
    const Step& s = *i.step;
    STRATA_ASSIGN_OR_RETURN(fabric::Fabric * f, rc_.x.fabricOf(*i.group));
    Timeline* const t = rc_.timeline;
    if (t != nullptr) {
      inFlightEvent_ = TimelineEvent{};
      inFlightEvent_.cat = TimelineEvent::Cat::kStep;
      inFlightEvent_.inFlight = true;
      inFlightEvent_.seq = t->running();
      describeStep(inFlightEvent_, s, ts_, *f, i.index, i.total);
      inFlightRange_ = t->nvtxStart(inFlightEvent_);
      inFlightEvent_.beginNs = Timeline::nowNs();
    }
    const void* in = at(ptr(i.in), s.offset, ts_);
    void* out = at(ptr(i.work), s.offset, ts_);
    inFlightWire_ = WireAllReduce{};
    if (i.wire != WireType::kNone) {
      // Compressed, its wire copy lives in slot 1: slot 0 serves the steps run meanwhile.
      void* wireBuf = rc_.x.wireScratch(1, wireBytes(s));
      if (wireBuf == nullptr) return internalError("a compressed step on memory with no wire copy");
      STRATA_ASSIGN_OR_RETURN(inFlightWire_,
                              startWireAllReduce(*f, in, out, s.count, i.wire, wireBuf, t));
    } else {
      STRATA_RETURN_IF_ERROR(f->allReduceStart(in, out, s.count, k_.type, fop_));
    }
    inFlight_ = f;
    return Status::ok();
  }

  Status wait(const Instr& i) {
    if (inFlight_ == nullptr) return internalError("a wait with no allreduce in flight");
    Timeline* const t = rc_.timeline;
    fabric::Fabric* f = inFlight_;
    inFlight_ = nullptr;
    Status st = Status::ok();
    {
      TimelineSpan span(t, TimelineEvent::Cat::kWait, "pipelined allreduce wait",
                        inFlightEvent_.seq);
      span.event.fabric = f->name();
      fabric::IdleHook hook(f);
      st = inFlightWire_.wire != WireType::kNone ? finishWireAllReduce(*f, inFlightWire_, t)
                                                 : f->allReduceWait();
    }
    if (t != nullptr) {
      inFlightEvent_.endNs = Timeline::nowNs();
      nvtx::end(inFlightRange_);
      inFlightRange_ = 0;
      t->add(inFlightEvent_);
    }
    if (st.isOk()) return st;
    return st.withContext("pipelined allreduce of piece " + std::to_string(i.index) + " of " +
                          std::to_string(i.total) + " (fabric " + f->name() + ")");
  }

  Status unpack() {
    TimelineSpan span(rc_.timeline, TimelineEvent::Cat::kFusion, "fusion unpack", k_.seq);
    span.event.bytes = k_.count * ts_;
    size_t off = 0;
    for (const Call& m : *b_.fused) {
      STRATA_RETURN_IF_ERROR(rc_.x.copy(m.recv, b_.fusion + off * ts_, m.count * ts_));
      off += m.count;
    }
    return Status::ok();
  }

  RunContext& rc_;
  const Program& prog_;
  const Call& k_;
  const RunBuffers& b_;
  const size_t ts_;
  const strataRedOp_t fop_;
  const size_t begin_, end_;  // the part of the code this loop runs
  void* scratch_ = nullptr;
  fabric::Fabric* inFlight_ = nullptr;  // the pipeline's allreduce, while it runs
  WireAllReduce inFlightWire_;          // and its wire copy and scale, compressed
  TimelineEvent inFlightEvent_;         // on the timeline, from its start to its wait's end
  uint64_t inFlightRange_ = 0;          // and its NVTX range
};

}  // namespace

fabric::PeerOp peerOp(const Call& k) {
  fabric::PeerOp op;
  op.send = k.coll == Collective::kSend;
  op.buf = op.send ? const_cast<void*>(k.send) : k.recv;
  op.count = k.count;
  op.type = k.type;
  op.peer = k.root;
  return op;
}

void packInto(char* buf, const std::vector<Call>& members, strataDataType_t type, Timeline* t,
              uint64_t seq) {
  const size_t ts = dataTypeSize(type);
  size_t total = 0;
  for (const Call& m : members) total += m.count;
  TimelineSpan span(t, TimelineEvent::Cat::kFusion, "fusion pack", seq);
  span.event.bytes = total * ts;
  size_t off = 0;
  for (const Call& m : members) {
    std::memcpy(buf + off * ts, m.send, m.count * ts);
    off += m.count;
  }
}

Status execute(RunContext& rc, const Program& prog, const Call& k, const RunBuffers& b,
               size_t begin, size_t end) {
  return Loop(rc, prog, k, b, begin, end).run();
}

}  // namespace strata::core
