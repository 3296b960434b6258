#include "core/dispatch.h"

#include <algorithm>
#include <cstring>
#include <thread>
#include <vector>

#include "common/buffer.h"
#include "common/datatype.h"
#include "common/log.h"
#include "core/nvtx.h"
#include "core/run_steps.h"
#include "decompose/schedule.h"

namespace strata::core {

namespace {

using plan::Step;
using Shape = Program::Shape;

// The timeline's event of call `k`, without its times.
TimelineEvent callEvent(const Call& k) {
  TimelineEvent e;
  e.cat = TimelineEvent::Cat::kCall;
  e.seq = k.seq;
  e.coll = k.coll;
  e.count = k.count;
  e.type = k.type;
  e.op = k.op;
  e.root = k.root;
  e.bytes = k.count * dataTypeSize(k.type);
  return e;
}

// The timeline's event of call `k`, run over [begin, end).
void traceCall(Timeline& t, const Call& k, int64_t begin, int64_t end) {
  TimelineEvent e = callEvent(k);
  e.beginNs = begin;
  e.endNs = end;
  e.queuedNs = k.issuedNs != 0 && k.issuedNs < begin ? begin - k.issuedNs : 0;
  t.add(e);
  // A blocking call's own way from issue to start takes about a microsecond: that stays in the
  // call's queuedUs; a longer wait (behind queued calls, a fusion pack's wait) is an event too.
  constexpr int64_t kQueueEventNs = 2000;
  if (e.queuedNs > kQueueEventNs) {
    TimelineEvent q;
    q.cat = TimelineEvent::Cat::kWait;
    q.name = "queue";
    q.seq = k.seq;
    q.beginNs = k.issuedNs;
    // 1 ns short of the call's start: viewers add ts and dur in doubles, and an end equal to
    // the next event's start can come out a hair later, which Chrome DevTools takes for a bad
    // nesting and then draws neither event.
    q.endNs = begin - 1;
    t.add(q);
  }
}

// `f` on each call `p` runs: the call itself, or a fusion pack's members.
template <typename F>
void forEachCall(const Prepared& p, F f) {
  if (p.fused.empty()) {
    f(p.call);
  } else {
    for (const Call& m : p.fused) f(m);
  }
}

// Runs `body` as the flight recorder's running call(s) (core/flight_recorder.h); on the
// timeline, and as NVTX ranges while it runs.
template <typename Body>
Status recorded(Comm& c, const Prepared& p, Body body) {
  FlightRecorder& fr = c.flightRecorder();
  forEachCall(p, [&](const Call& k) { fr.started(k.record); });
  Timeline* t = c.timeline();
  std::vector<uint64_t> ranges;  // NVTX: one per call
  if (t != nullptr) {
    t->setRunning(p.call.seq);
    if (t->nvtx()) {
      forEachCall(p, [&](const Call& k) { ranges.push_back(t->nvtxStart(callEvent(k))); });
    }
  }
  const int64_t begin = t != nullptr ? Timeline::nowNs() : 0;
  const Status st = body();
  if (t != nullptr) {
    const int64_t end = Timeline::nowNs();
    for (uint64_t r : ranges) nvtx::end(r);
    forEachCall(p, [&](const Call& k) { traceCall(*t, k, begin, end); });
  }
  forEachCall(p, [&](const Call& k) { fr.finished(k.record, st); });
  return st;
}

// The allreduce: each pass a whole pipelined allreduce under its plan.
Status allReduce(Comm& c, Executor& x, const Call& k, const Program& prog, const void* send,
                 void* recv) {
  const size_t ts = dataTypeSize(k.type);
  for (const ProgramPass& pass : prog.passes) {
    STRATA_TRACE(kSubsysColl, "allreduce pass of %zu elements at %zu: %s, pieces of %zu",
                 pass.count, pass.offset, pass.exec->description.c_str(), pass.pieceElements);
    STRATA_RETURN_IF_ERROR(runPipelined(c, x, pass, at(send, pass.offset, ts),
                                        at(recv, pass.offset, ts), k.type, k.op));
  }
  return Status::ok();
}

// A fusion pack (core/fusion.h): the members' inputs one after another in a fusion buffer,
// one allreduce in place on it under the pack's plans, then each member's share copied out.
// The buffers are the communicator's, reused by every pack (calls run one at a time).
void packInto(char* buf, const Prepared& p) {
  const size_t ts = dataTypeSize(p.call.type);
  size_t off = 0;
  for (const Call& m : p.fused) {
    std::memcpy(buf + off * ts, m.send, m.count * ts);
    off += m.count;
  }
}

// packInto on the calling thread, on the timeline as the pack's copy in.
void packTraced(Comm& c, char* buf, const Prepared& p) {
  TimelineSpan span(c.timeline(), TimelineEvent::Cat::kFusion, "fusion pack", p.call.seq);
  span.event.bytes = p.call.count * dataTypeSize(p.call.type);
  packInto(buf, p);
}

Status reducePacked(Comm& c, Executor& x, const Prepared& p, char* buf) {
  const size_t ts = dataTypeSize(p.call.type);
  STRATA_TRACE(kSubsysColl, "fusion pack of %zu allreduces, %zu %s", p.fused.size(), p.call.count,
               dataTypeName(p.call.type));
  STRATA_RETURN_IF_ERROR(allReduce(c, x, p.call, *p.program, buf, buf));
  TimelineSpan span(c.timeline(), TimelineEvent::Cat::kFusion, "fusion unpack", p.call.seq);
  span.event.bytes = p.call.count * ts;
  size_t off = 0;
  for (const Call& m : p.fused) {
    STRATA_RETURN_IF_ERROR(x.copy(m.recv, buf + off * ts, m.count * ts));
    off += m.count;
  }
  return Status::ok();
}

char* fusionBufferFor(Comm& c, int slot, const Prepared& p) {
  return static_cast<char*>(
      c.memory().fusionBuffer(slot).get(p.call.count * dataTypeSize(p.call.type)));
}

Status allReduceFused(Comm& c, Executor& x, const Prepared& p) {
  char* buf = fusionBufferFor(c, 0, p);
  packTraced(c, buf, p);
  return reducePacked(c, x, p, buf);
}

// Runs a group's collectives in call order. While a fusion pack is on the wire, a helper thread
// packs the next one (when it is a pack too, and large enough for a thread to pay) into the
// other fusion buffer, so packing overlaps communication. The thread touches only the next
// pack's send buffers and its own fusion buffer, and is joined before anything else runs.
constexpr size_t kPackAheadMinBytes = 256 << 10;

Status runCollectives(Comm& c, Executor& x, const std::vector<const Prepared*>& colls) {
  int slot = 0;
  bool packedAhead = false;  // colls[i]'s pack is already in fusionBuffer(slot)
  for (size_t i = 0; i < colls.size(); ++i) {
    const Prepared& p = *colls[i];
    if (p.fused.empty()) {
      STRATA_RETURN_IF_ERROR(run(c, x, p));
      continue;
    }
    char* buf = fusionBufferFor(c, slot, p);
    if (!packedAhead) packTraced(c, buf, p);
    packedAhead = false;
    const Prepared* next = i + 1 < colls.size() ? colls[i + 1] : nullptr;
    const bool ahead = next != nullptr && !next->fused.empty() &&
                       next->call.count * dataTypeSize(next->call.type) >= kPackAheadMinBytes;
    std::thread packer;
    if (ahead) {
      char* nextBuf = fusionBufferFor(c, 1 - slot, *next);
      STRATA_TRACE(kSubsysColl, "packing the next fusion pack (%zu allreduces) meanwhile",
                   next->fused.size());
      packer = std::thread([nextBuf, next] { packInto(nextBuf, *next); });
    }
    const Status st = recorded(c, p, [&] { return reducePacked(c, x, p, buf); });
    if (packer.joinable()) packer.join();
    STRATA_RETURN_IF_ERROR(st);
    if (ahead) {
      slot = 1 - slot;
      packedAhead = true;
    }
  }
  return Status::ok();
}

// Reduce-scatter and all-gather through scratch: each pass gathers columns [a, a+w) of every
// rank's block into scratch, rank j's at blockOrder[j], runs its steps there, and copies this
// rank's block (reduce-scatter) or every block (all-gather) out.
Status blocks(Comm& c, Executor& x, const Call& k, const Program& prog) {
  const size_t ts = dataTypeSize(k.type), p = static_cast<size_t>(c.size());
  const std::vector<size_t>& order = *prog.blockOrder;
  const bool rs = k.coll == Collective::kReduceScatter;
  const size_t mine = order[static_cast<size_t>(c.rank())];
  for (const ProgramPass& pass : prog.passes) {
    const size_t a = pass.offset, w = pass.count;
    STRATA_ASSIGN_OR_RETURN(void* work, x.scratch(p * w * ts));
    if (rs) {
      for (size_t j = 0; j < p; ++j) {
        STRATA_RETURN_IF_ERROR(
            x.copy(at(work, order[j] * w, ts), at(k.send, j * k.count + a, ts), w * ts));
      }
    } else {
      STRATA_RETURN_IF_ERROR(x.copy(at(work, mine * w, ts), at(k.send, a, ts), w * ts));
    }
    STRATA_RETURN_IF_ERROR(runSteps(c, x, c.groups().levels(), *pass.steps, work, work, k.type,
                                    rs ? k.op : strataSum));
    if (rs) {
      char* out = at(k.recv, a, ts);
      STRATA_RETURN_IF_ERROR(x.copy(out, at(work, mine * w, ts), w * ts));
      if (k.op == strataAvg) STRATA_RETURN_IF_ERROR(x.divide(out, w, k.type, c.size()));
    } else {
      for (size_t j = 0; j < p; ++j) {
        STRATA_RETURN_IF_ERROR(
            x.copy(at(k.recv, j * k.count + a, ts), at(work, order[j] * w, ts), w * ts));
      }
    }
  }
  return Status::ok();
}

// One flat fabric call straight between the user's buffers (an all-gather in place when send
// is recv's block).
Status direct(Comm& c, Executor& x, const Call& k, const Program& prog) {
  const Step& s = prog.passes[0].steps->at(0);
  STRATA_ASSIGN_OR_RETURN(fabric::Fabric * flat, x.fabricOf(c.groups().flat()));
  if (k.coll == Collective::kAllGather) {
    return flat->allGather(k.send, k.recv, s.counts.data(), s.displs.data(), k.type);
  }
  const strataRedOp_t fop = k.op == strataAvg ? strataSum : k.op;
  STRATA_RETURN_IF_ERROR(
      flat->reduceScatter(k.send, k.recv, s.counts.data(), s.displs.data(), k.type, fop));
  if (k.op == strataAvg) return x.divide(k.recv, k.count, k.type, c.size());
  return Status::ok();
}

// Broadcast and reduce passes, on the hierarchy's own level groups. The broadcast works in
// recvbuff (the root first copies sendbuff there); the reduce in recvbuff on the root and
// scratch elsewhere, reading sendbuff on its first step. strataAvg is summed; the root divides
// its result once.
Status rooted(Comm& c, Executor& x, const Call& k, const Program& prog) {
  const size_t ts = dataTypeSize(k.type);
  const bool isRoot = c.rank() == k.root, bcast = k.coll == Collective::kBroadcast;
  if (isRoot && k.send != k.recv) STRATA_RETURN_IF_ERROR(x.copy(k.recv, k.send, k.count * ts));
  const strataRedOp_t fop = k.op == strataAvg ? strataSum : k.op;
  for (const ProgramPass& pass : prog.passes) {
    const size_t off = pass.offset, n = pass.count;
    void* work = nullptr;
    if (bcast || isRoot) {
      work = at(k.recv, off, ts);
    } else {
      STRATA_ASSIGN_OR_RETURN(work, x.scratch(n * ts));
    }
    // The root's input is already in recvbuff: the reduce reads it there, in place.
    const void* src = bcast ? work : (isRoot ? at(k.recv, off, ts) : at(k.send, off, ts));
    STRATA_RETURN_IF_ERROR(
        runSteps(c, x, c.groups().levels(), *pass.steps, src, work, k.type, fop));
    if (!bcast && isRoot && k.op == strataAvg) {
      STRATA_RETURN_IF_ERROR(x.divide(work, n, k.type, c.size()));
    }
  }
  return Status::ok();
}

Status runProgram(Comm& c, Executor& x, const Prepared& p);

fabric::PeerOp peerOp(const Call& k) {
  fabric::PeerOp op;
  op.send = k.coll == Collective::kSend;
  op.buf = op.send ? const_cast<void*>(k.send) : k.recv;
  op.count = k.count;
  op.type = k.type;
  op.peer = k.root;
  return op;
}

Status runProgram(Comm& c, Executor& x, const Prepared& p) {
  const Call& k = p.call;
  switch (p.program->shape) {
    case Shape::kNothing:
      return Status::ok();
    case Shape::kCopy:
      if (k.send == k.recv) return Status::ok();
      return x.copy(k.recv, k.send, k.count * dataTypeSize(k.type));
    case Shape::kAllReduce:
      return p.fused.empty() ? allReduce(c, x, k, *p.program, k.send, k.recv)
                             : allReduceFused(c, x, p);
    case Shape::kDirect:
      return direct(c, x, k, *p.program);
    case Shape::kBlocks:
      return blocks(c, x, k, *p.program);
    case Shape::kRooted:
      return rooted(c, x, k, *p.program);
    case Shape::kPeer: {
      const fabric::PeerOp op = peerOp(k);
      STRATA_ASSIGN_OR_RETURN(fabric::Fabric * flat, x.fabricOf(c.groups().flat()));
      return flat->exchange(&op, 1);
    }
  }
  return internalError(std::string("no runner for ") + collectiveName(k.coll));
}

}  // namespace

Status run(Comm& c, Executor& x, const Prepared& p) {
  return recorded(c, p, [&] { return runProgram(c, x, p); });
}

Status runGroup(Comm& c, Executor& x, const std::vector<Prepared>& calls) {
  std::vector<fabric::PeerOp> ops;
  for (const Prepared& p : calls) {
    if (pointToPoint(p.call.coll)) ops.push_back(peerOp(p.call));
  }
  if (!ops.empty()) {
    FlightRecorder& fr = c.flightRecorder();
    for (const Prepared& p : calls) {
      if (pointToPoint(p.call.coll)) fr.started(p.call.record);
    }
    STRATA_ASSIGN_OR_RETURN(fabric::Fabric * flat, x.fabricOf(c.groups().flat()));
    const Status st = flat->exchange(ops.data(), ops.size());
    for (const Prepared& p : calls) {
      if (pointToPoint(p.call.coll)) fr.finished(p.call.record, st);
    }
    STRATA_RETURN_IF_ERROR(st);
  }
  std::vector<const Prepared*> colls;
  for (const Prepared& p : calls) {
    if (!pointToPoint(p.call.coll)) colls.push_back(&p);
  }
  return runCollectives(c, x, colls);
}

}  // namespace strata::core
