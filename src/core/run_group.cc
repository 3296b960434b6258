// Running prepared calls as calls: the flight recorder's and timeline's view of each (run), and
// a group's calls together (runGroup). The instructions themselves run in core/run.cc.
#include <thread>
#include <vector>

#include "common/datatype.h"
#include "common/log.h"
#include "core/nvtx.h"
#include "core/run.h"

namespace strata::core {

namespace {

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

// The timeline's event `e` of call `k`, run over [begin, end).
void traceCall(Timeline& t, TimelineEvent e, const Call& k, int64_t begin, int64_t end) {
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
// timeline, and as NVTX ranges while it runs. `part`: which part of the call this is (its
// opening part starts the recorder's call, its closing part or a failure ends it).
template <typename Body>
Status recorded(RunContext& rc, const Prepared& p, Body body, const Part& part = Part{}) {
  FlightRecorder& fr = rc.recorder;
  if (part.opens) forEachCall(p, [&](const Call& k) { fr.started(k.record); });
  Timeline* t = rc.timeline;
  std::vector<uint64_t> ranges;  // NVTX: one per call
  auto described = [&](const Call& k) {
    TimelineEvent e = callEvent(k);
    e.route = rc.route;
    e.part = part.name;
    return e;
  };
  if (t != nullptr) {
    t->setRunning(p.call.seq);
    if (t->nvtx()) {
      forEachCall(p, [&](const Call& k) { ranges.push_back(t->nvtxStart(described(k))); });
    }
  }
  const int64_t begin = t != nullptr ? Timeline::nowNs() : 0;
  const Status st = body();
  if (t != nullptr) {
    const int64_t end = Timeline::nowNs();
    for (uint64_t r : ranges) nvtx::end(r);
    forEachCall(p, [&](const Call& k) { traceCall(*t, described(k), k, begin, end); });
  }
  if (part.closes || !st.isOk()) forEachCall(p, [&](const Call& k) { fr.finished(k.record, st); });
  return st;
}

// The buffers of `p` (a fusion pack's in the executor's fusion buffer `slot`).
StatusOr<RunBuffers> buffersOf(RunContext& rc, const Prepared& p, int slot) {
  RunBuffers b;
  b.send = p.call.send;
  b.recv = p.call.recv;
  if (!p.fused.empty()) {
    b.fusion = static_cast<char*>(
        rc.x.fusionBuffer(slot, p.call.count * dataTypeSize(p.call.type)));
    if (b.fusion == nullptr) return internalError("a fusion pack on memory with no fusion buffer");
    b.fused = &p.fused;
    STRATA_TRACE(kSubsysColl, "fusion pack of %zu allreduces, %zu %s", p.fused.size(),
                 p.call.count, dataTypeName(p.call.type));
  }
  return b;
}

// Runs a group's collectives in call order. While a fusion pack is on the wire, a helper thread
// packs the next one (when it is a pack too, and large enough for a thread to pay) into the
// other fusion buffer, so packing overlaps communication. The thread touches only the next
// pack's send buffers and its own fusion buffer, and is joined before anything else runs.
constexpr size_t kPackAheadMinBytes = 256 << 10;

Status runCollectives(RunContext& rc, const std::vector<const Prepared*>& colls) {
  int slot = 0;
  bool packedAhead = false;  // colls[i]'s pack is already in fusionBuffer(slot)
  for (size_t i = 0; i < colls.size(); ++i) {
    const Prepared& p = *colls[i];
    if (p.fused.empty()) {
      STRATA_RETURN_IF_ERROR(run(rc, p));
      continue;
    }
    STRATA_ASSIGN_OR_RETURN(RunBuffers b, buffersOf(rc, p, slot));
    if (!packedAhead) packInto(b.fusion, p.fused, p.call.type, rc.timeline, p.call.seq);
    b.packed = true;
    packedAhead = false;
    const Prepared* next = i + 1 < colls.size() ? colls[i + 1] : nullptr;
    const bool ahead = next != nullptr && !next->fused.empty() &&
                       next->call.count * dataTypeSize(next->call.type) >= kPackAheadMinBytes;
    std::thread packer;
    if (ahead) {
      STRATA_ASSIGN_OR_RETURN(RunBuffers nb, buffersOf(rc, *next, 1 - slot));
      STRATA_TRACE(kSubsysColl, "packing the next fusion pack (%zu allreduces) meanwhile",
                   next->fused.size());
      packer = std::thread([nb, next] {
        packInto(nb.fusion, next->fused, next->call.type, nullptr, 0);
      });
    }
    const Status st =
        recorded(rc, p, [&] { return execute(rc, *p.program, p.call, b); });
    if (packer.joinable()) packer.join();
    STRATA_RETURN_IF_ERROR(st);
    if (ahead) {
      slot = 1 - slot;
      packedAhead = true;
    }
  }
  return Status::ok();
}

}  // namespace

Status run(RunContext& rc, const Prepared& p, const Part& part) {
  return recorded(
      rc, p,
      [&]() -> Status {
        STRATA_ASSIGN_OR_RETURN(RunBuffers b, buffersOf(rc, p, 0));
        return execute(rc, *p.program, p.call, b, part.begin, part.end);
      },
      part);
}

Status runGroup(RunContext& rc, const std::vector<Prepared>& calls) {
  std::vector<fabric::PeerOp> ops;
  for (const Prepared& p : calls) {
    if (pointToPoint(p.call.coll)) ops.push_back(peerOp(p.call));
  }
  if (!ops.empty()) {
    FlightRecorder& fr = rc.recorder;
    for (const Prepared& p : calls) {
      if (pointToPoint(p.call.coll)) fr.started(p.call.record);
    }
    STRATA_ASSIGN_OR_RETURN(fabric::Fabric * flat, rc.x.fabricOf(rc.flat));
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
  return runCollectives(rc, colls);
}

}  // namespace strata::core
