#include "core/dispatch.h"

#include <algorithm>
#include <cstring>
#include <thread>
#include <vector>

#include "common/buffer.h"
#include "common/datatype.h"
#include "common/log.h"
#include "core/run_steps.h"
#include "decompose/schedule.h"

namespace strata::core {

size_t passElements(const Comm& c, size_t ts) {
  return std::max<size_t>(1, c.settings().chunkBytes / ts);
}

namespace {

using plan::Step;

// A plan's pipeline piece: the smallest chunk_bytes its stages set, else STRATA_PIPELINE_BYTES
// (0: no pipelining, the whole pass is one piece).
size_t pipelineBytes(const Comm& c, const plan::Plan& p) {
  size_t bytes = 0;
  for (const plan::Stage& s : p.stages) {
    if (s.chunkBytes != 0 && (bytes == 0 || s.chunkBytes < bytes)) bytes = s.chunkBytes;
  }
  if (bytes == 0) bytes = c.settings().pipelineBytes;
  return bytes == 0 ? c.settings().chunkBytes : bytes;
}

bool hierarchical(const Comm& c) { return c.hierarchy().numLevels() > 1; }

// The allreduce: every pass is a whole hierarchical allreduce of at most passElements
// elements (an allreduce is elementwise, so pieces are independent allreduces), under the plan
// prepare() chose for its size.
Status allReduce(Comm& c, Executor& x, const Prepared& p) {
  const Call& k = p.call;
  if (k.count == 0) return Status::ok();
  const size_t ts = dataTypeSize(k.type);
  if (c.size() == 1) {
    if (k.send != k.recv) return x.copy(k.recv, k.send, k.count * ts);
    return Status::ok();  // a sum, product, max, min or average of one value is itself
  }
  const size_t pass = passElements(c, ts), full = std::min(pass, k.count);
  for (size_t off = 0; off < k.count; off += pass) {
    const size_t n = std::min(pass, k.count - off);
    PlanExec* exec = n == full ? p.fullPass : p.lastPass;
    if (exec == nullptr) return internalError("an allreduce pass without a prepared plan");
    const size_t piece = std::max<size_t>(1, pipelineBytes(c, exec->plan) / ts);
    STRATA_TRACE(kSubsysColl, "allreduce pass of %zu elements at %zu: %s, pieces of %zu", n, off,
                 exec->description.c_str(), std::min(piece, n));
    STRATA_RETURN_IF_ERROR(runPipelined(c, x, *exec, piece, at(k.send, off, ts),
                                        at(k.recv, off, ts), n, k.type, k.op));
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

Status reducePacked(Comm& c, Executor& x, const Prepared& p, char* buf) {
  const size_t ts = dataTypeSize(p.call.type);
  STRATA_TRACE(kSubsysColl, "fusion pack of %zu allreduces, %zu %s", p.fused.size(), p.call.count,
               dataTypeName(p.call.type));
  Prepared whole;
  whole.call = p.call;
  whole.call.send = buf;
  whole.call.recv = buf;
  whole.fullPass = p.fullPass;
  whole.lastPass = p.lastPass;
  STRATA_RETURN_IF_ERROR(allReduce(c, x, whole));
  size_t off = 0;
  for (const Call& m : p.fused) {
    STRATA_RETURN_IF_ERROR(x.copy(m.recv, buf + off * ts, m.count * ts));
    off += m.count;
  }
  return Status::ok();
}

char* fusionBufferFor(Comm& c, int slot, const Prepared& p) {
  return static_cast<char*>(c.fusionBuffer(slot).get(p.call.count * dataTypeSize(p.call.type)));
}

Status allReduceFused(Comm& c, Executor& x, const Prepared& p) {
  char* buf = fusionBufferFor(c, 0, p);
  packInto(buf, p);
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
    if (!packedAhead) packInto(buf, p);
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
    const Status st = reducePacked(c, x, p, buf);
    if (packer.joinable()) packer.join();
    STRATA_RETURN_IF_ERROR(st);
    if (ahead) {
      slot = 1 - slot;
      packedAhead = true;
    }
  }
  return Status::ok();
}

// Reduce-scatter and all-gather work on columns [a, a+w) of every rank's block at a time,
// gathered into the scratch buffer in the order the schedule hands out blocks (rank r's
// block at permutedPosition(r)). The flat schedule's order is the identity.
Status reduceScatter(Comm& c, Executor& x, const Call& k) {
  const size_t recvcount = k.count;
  if (recvcount == 0) return Status::ok();
  const size_t ts = dataTypeSize(k.type);
  const size_t p = static_cast<size_t>(c.size());
  const topo::Hierarchy& h = c.hierarchy();
  const bool hier = hierarchical(c) && plan::hierarchicalBlocksPossible(h);
  const size_t cols = std::max<size_t>(1, passElements(c, ts) / p);
  const bool inPlace = k.recv == at(k.send, c.rank() * recvcount, ts);
  const strataRedOp_t fop = k.op == strataAvg ? strataSum : k.op;
  if (!hier && !inPlace && cols >= recvcount) {
    // One flat pass straight between the user's buffers.
    const ScheduleKey key{Collective::kReduceScatter, recvcount};
    const std::vector<Step>& steps = c.schedules().get(key, [&] {
      return plan::flatBlockSteps(Collective::kReduceScatter, c.rank(), c.size(), recvcount);
    });
    const Step& s = steps[0];
    STRATA_ASSIGN_OR_RETURN(fabric::Fabric * flat, x.fabricOf(c.flat()));
    STRATA_RETURN_IF_ERROR(
        flat->reduceScatter(k.send, k.recv, s.counts.data(), s.displs.data(), k.type, fop));
    if (k.op == strataAvg) return x.divide(k.recv, recvcount, k.type, c.size());
    return Status::ok();
  }
  // Otherwise through scratch, which also keeps an in-place call from touching the other
  // blocks of sendbuff.
  for (size_t a = 0; a < recvcount; a += cols) {
    const size_t w = std::min(cols, recvcount - a);
    STRATA_ASSIGN_OR_RETURN(void* work, x.scratch(p * w * ts));
    for (size_t j = 0; j < p; ++j) {
      const size_t pos = hier ? plan::permutedPosition(h, static_cast<int>(j)) : j;
      STRATA_RETURN_IF_ERROR(
          x.copy(at(work, pos * w, ts), at(k.send, j * recvcount + a, ts), w * ts));
    }
    const ScheduleKey key{Collective::kReduceScatter, w};
    const std::vector<Step>& steps = c.schedules().get(key, [&] {
      return hier ? plan::reduceScatterSteps(h, c.rank(), w)
                  : plan::flatBlockSteps(Collective::kReduceScatter, c.rank(), c.size(), w);
    });
    STRATA_RETURN_IF_ERROR(runSteps(c, x, c.levels(), steps, work, work, k.type, k.op));
    const size_t mine = hier ? plan::permutedPosition(h, c.rank()) : c.rank();
    char* out = at(k.recv, a, ts);
    STRATA_RETURN_IF_ERROR(x.copy(out, at(work, mine * w, ts), w * ts));
    if (k.op == strataAvg) STRATA_RETURN_IF_ERROR(x.divide(out, w, k.type, c.size()));
  }
  return Status::ok();
}

Status allGather(Comm& c, Executor& x, const Call& k) {
  const size_t sendcount = k.count;
  if (sendcount == 0) return Status::ok();
  const size_t ts = dataTypeSize(k.type);
  const size_t p = static_cast<size_t>(c.size());
  const topo::Hierarchy& h = c.hierarchy();
  const bool hier = hierarchical(c) && plan::hierarchicalBlocksPossible(h);
  const size_t cols = std::max<size_t>(1, passElements(c, ts) / p);
  if (!hier && cols >= sendcount) {
    // One flat pass straight between the user's buffers (in place when send is recv's block).
    const ScheduleKey key{Collective::kAllGather, sendcount};
    const std::vector<Step>& steps = c.schedules().get(key, [&] {
      return plan::flatBlockSteps(Collective::kAllGather, c.rank(), c.size(), sendcount);
    });
    STRATA_ASSIGN_OR_RETURN(fabric::Fabric * flat, x.fabricOf(c.flat()));
    return flat->allGather(k.send, k.recv, steps[0].counts.data(), steps[0].displs.data(), k.type);
  }
  for (size_t a = 0; a < sendcount; a += cols) {
    const size_t w = std::min(cols, sendcount - a);
    STRATA_ASSIGN_OR_RETURN(void* work, x.scratch(p * w * ts));
    const size_t mine = hier ? plan::permutedPosition(h, c.rank()) : c.rank();
    STRATA_RETURN_IF_ERROR(x.copy(at(work, mine * w, ts), at(k.send, a, ts), w * ts));
    const ScheduleKey key{Collective::kAllGather, w};
    const std::vector<Step>& steps = c.schedules().get(key, [&] {
      return hier ? plan::allGatherSteps(h, c.rank(), w)
                  : plan::flatBlockSteps(Collective::kAllGather, c.rank(), c.size(), w);
    });
    STRATA_RETURN_IF_ERROR(runSteps(c, x, c.levels(), steps, work, work, k.type, strataSum));
    for (size_t j = 0; j < p; ++j) {
      const size_t pos = hier ? plan::permutedPosition(h, static_cast<int>(j)) : j;
      STRATA_RETURN_IF_ERROR(
          x.copy(at(k.recv, j * sendcount + a, ts), at(work, pos * w, ts), w * ts));
    }
  }
  return Status::ok();
}

// Broadcast and reduce: passes of at most passElements, each a whole rooted collective of its
// piece under the form prepare() chose for its size (decompose/rooted.h), on the hierarchy's
// own level groups. The broadcast works in recvbuff (the root first copies sendbuff there);
// the reduce in recvbuff on the root and scratch elsewhere, reading sendbuff on its first
// step. strataAvg is summed; the root divides its result once.
Status rooted(Comm& c, Executor& x, const Prepared& p) {
  const Call& k = p.call;
  if (k.count == 0) return Status::ok();
  const size_t ts = dataTypeSize(k.type);
  const bool isRoot = c.rank() == k.root, bcast = k.coll == Collective::kBroadcast;
  if (isRoot && k.send != k.recv) STRATA_RETURN_IF_ERROR(x.copy(k.recv, k.send, k.count * ts));
  if (c.size() == 1) return Status::ok();  // the copy was the whole collective
  const strataRedOp_t fop = k.op == strataAvg ? strataSum : k.op;
  const size_t pass = passElements(c, ts), full = std::min(pass, k.count);
  for (size_t off = 0; off < k.count; off += pass) {
    const size_t n = std::min(pass, k.count - off);
    const plan::RootedForm form = n == full ? p.fullForm : p.lastForm;
    const std::vector<Step>& steps = c.schedules().get(ScheduleKey{k.coll, n, form, k.root}, [&] {
      return plan::rootedSteps(c.hierarchy(), k.coll, form, c.rank(), k.root, n);
    });
    void* work = nullptr;
    if (bcast || isRoot) {
      work = at(k.recv, off, ts);
    } else {
      STRATA_ASSIGN_OR_RETURN(work, x.scratch(n * ts));
    }
    // The root's input is already in recvbuff: the reduce reads it there, in place.
    const void* src = bcast ? work : (isRoot ? at(k.recv, off, ts) : at(k.send, off, ts));
    STRATA_RETURN_IF_ERROR(runSteps(c, x, c.levels(), steps, src, work, k.type, fop));
    if (!bcast && isRoot && k.op == strataAvg) {
      STRATA_RETURN_IF_ERROR(x.divide(work, n, k.type, c.size()));
    }
  }
  return Status::ok();
}

fabric::PeerOp peerOp(const Call& k) {
  fabric::PeerOp op;
  op.send = k.coll == Collective::kSend;
  op.buf = op.send ? const_cast<void*>(k.send) : k.recv;
  op.count = k.count;
  op.type = k.type;
  op.peer = k.root;
  return op;
}

// The plans of an allreduce's passes, as allReduce() walks them: `pick` gives the plan for a
// pass of n elements.
template <typename Pick>
Status preparePasses(Comm& c, Prepared& p, Pick pick) {
  const Call& k = p.call;
  if (k.coll != Collective::kAllReduce || k.count == 0 || c.size() == 1) return Status::ok();
  const size_t ts = dataTypeSize(k.type), pass = passElements(c, ts);
  STRATA_ASSIGN_OR_RETURN(p.fullPass, pick(std::min(pass, k.count)));
  if (k.count > pass && k.count % pass != 0) {
    STRATA_ASSIGN_OR_RETURN(p.lastPass, pick(k.count % pass));
  }
  return Status::ok();
}

}  // namespace

StatusOr<Prepared> prepare(Comm& c, const Call& call) {
  Prepared p;
  p.call = call;
  const size_t ts = dataTypeSize(call.type);
  STRATA_RETURN_IF_ERROR(preparePasses(c, p, [&](size_t n) { return c.planForBytes(n * ts); }));
  if ((call.coll == Collective::kBroadcast || call.coll == Collective::kReduce) && call.count > 0) {
    const size_t pass = passElements(c, ts);
    p.fullForm = c.rootedForm(call.coll, std::min(pass, call.count) * ts);
    p.lastForm = call.count > pass ? c.rootedForm(call.coll, call.count % pass * ts) : p.fullForm;
  }
  return p;
}

StatusOr<Prepared> prepareWithPlan(Comm& c, const Call& call, const plan::Plan& plan) {
  STRATA_RETURN_IF_ERROR(plan::checkPlan(c.hierarchy(), plan));
  Prepared p;
  p.call = call;
  STRATA_RETURN_IF_ERROR(preparePasses(c, p, [&](size_t) { return c.execForPlan(plan); }));
  return p;
}

std::vector<LevelGroup*> groupsOf(Comm& c, const Prepared& p) {
  std::vector<LevelGroup*> out{&c.flat()};
  if (c.size() == 1) return out;
  if (p.call.coll == Collective::kAllReduce) {
    for (PlanExec* exec : {p.fullPass, p.lastPass}) {
      if (exec != nullptr) out.insert(out.end(), exec->groups.begin(), exec->groups.end());
    }
  } else {
    out.insert(out.end(), c.levels().begin(), c.levels().end());
  }
  return out;
}

Status run(Comm& c, Executor& x, const Prepared& p) {
  switch (p.call.coll) {
    case Collective::kAllReduce:
      return p.fused.empty() ? allReduce(c, x, p) : allReduceFused(c, x, p);
    case Collective::kReduceScatter:
      return reduceScatter(c, x, p.call);
    case Collective::kAllGather:
      return allGather(c, x, p.call);
    case Collective::kBroadcast:
    case Collective::kReduce:
      return rooted(c, x, p);
    case Collective::kSend:
    case Collective::kRecv: {
      const fabric::PeerOp op = peerOp(p.call);
      STRATA_ASSIGN_OR_RETURN(fabric::Fabric * flat, x.fabricOf(c.flat()));
      return flat->exchange(&op, 1);
    }
    default:
      return internalError(std::string("no dispatcher for ") + collectiveName(p.call.coll));
  }
}

Status runGroup(Comm& c, Executor& x, const std::vector<Prepared>& calls) {
  std::vector<fabric::PeerOp> ops;
  for (const Prepared& p : calls) {
    if (pointToPoint(p.call.coll)) ops.push_back(peerOp(p.call));
  }
  if (!ops.empty()) {
    STRATA_ASSIGN_OR_RETURN(fabric::Fabric * flat, x.fabricOf(c.flat()));
    STRATA_RETURN_IF_ERROR(flat->exchange(ops.data(), ops.size()));
  }
  std::vector<const Prepared*> colls;
  for (const Prepared& p : calls) {
    if (!pointToPoint(p.call.coll)) colls.push_back(&p);
  }
  return runCollectives(c, x, colls);
}

}  // namespace strata::core
