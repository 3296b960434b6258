// prepare(): a call's complete program (core/program.h), made on the issuing thread. Everything
// decided here is decided from the call and what every rank knows alike (the hierarchy, the
// agreed settings, the plans), so every rank makes the same program up to its own rank's steps.
#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "common/buffer.h"
#include "common/datatype.h"
#include "common/log.h"
#include "core/device_side.h"
#include "core/prepare.h"
#include "core/plan_book.h"
#include "core/route.h"
#include "decompose/schedule.h"

namespace strata::core {

LowerContext lowerContextOf(Comm& c, bool device) {
  LowerContext lc;
  lc.rank = c.rank();
  lc.size = c.size();
  lc.flat = &c.groups().flat();
  lc.levels = &c.groups().levels();
  lc.chunkBytes = c.settings().chunkBytes;
  lc.pipelineBytes = c.settings().pipelineBytes;
  lc.device = device;
  return lc;
}

namespace {

using Shape = Program::Shape;

// Elements of one pass (STRATA_CHUNK_BYTES worth, at least one): a larger call runs as passes
// of this many elements and a shorter last one, each planned for its bytes.
size_t passElements(size_t chunkBytes, size_t ts) {
  return std::max<size_t>(1, chunkBytes / ts);
}

// A plan's pipeline piece: its own (a plan file's chunk_bytes, or the planner's choice under
// STRATA_PIPELINE_BYTES=auto), else STRATA_PIPELINE_BYTES's size; neither: the whole pass is one
// piece. The cost model (decompose/cost_model.cc: predict) reads the same.
size_t pipelineBytes(const LowerContext& lc, const plan::Plan& p) {
  size_t bytes = plan::planPieceBytes(p);
  if (bytes == 0) bytes = lc.pipelineBytes;
  return bytes == 0 ? lc.chunkBytes : bytes;
}

Schedule allReduceSteps(const LowerContext& lc, PlanExec& exec, size_t n) {
  return exec.schedules.get(ScheduleKey{Collective::kAllReduce, n}, [&] {
    if (exec.plan.passthrough) return plan::flatAllReduceSteps(n);
    const bool ring = exec.plan.stages.back().algorithm == plan::Algorithm::kRing;
    return plan::allReduceSteps(exec.derived, lc.rank, n, ring);
  });
}

// An allreduce pass of n elements under `exec`, cut into pipeline pieces. The pieces overlap
// (core/lower.cc: allReducePass) when there are several and the plan has a separate allreduce
// stage to keep in flight: not a passthrough, not one stage, not a ring top. Never on device
// memory: there a stream carries the stream-ordered stages and a host thread the others
// (core/route.h), and an allreduce in flight across both would tie the two together; the staged
// fabric pipelines its own chunks instead.
AllReducePass allReducePass(const LowerContext& lc, PlanExec& exec, size_t n, size_t ts) {
  AllReducePass pass;
  pass.count = n;
  pass.exec = &exec;
  pass.pieceElements = std::min(n, std::max<size_t>(1, pipelineBytes(lc, exec.plan) / ts));
  const size_t pieces = (n + pass.pieceElements - 1) / pass.pieceElements;
  pass.steps = allReduceSteps(lc, exec, pass.pieceElements);
  pass.lastPiece = allReduceSteps(lc, exec, n - (pieces - 1) * pass.pieceElements);
  pass.overlap = !lc.device && pieces > 1 && plan::piecesOverlap(exec.plan);
  return pass;
}

// The allreduce: passes of at most passElements (an allreduce is elementwise, so passes are
// independent allreduces), each under pick(n)'s plan for its n elements, reading `in` and
// writing `out` (a fusion pack: both its fusion buffer). `inPlace`: no copy for one rank.
template <typename Pick>
StatusOr<Program> allReduceProgram(const LowerContext& lc, const Call& k, bool inPlace, Buf in,
                                   Buf out, Pick pick) {
  Program prog;
  if (k.count == 0) return prog;
  Lowering low(prog, lc, k.type, k.op);
  if (lc.size == 1) {
    prog.shape = Shape::kCopy;  // a sum, product, max, min or average of one value is itself
    if (!inPlace) low.copy({out, 0}, {in, 0}, k.count);
    return prog;
  }
  prog.shape = Shape::kAllReduce;
  const size_t ts = dataTypeSize(k.type), pass = passElements(lc.chunkBytes, ts);
  const size_t full = std::min(pass, k.count);
  STRATA_ASSIGN_OR_RETURN(PlanExec * fullExec, pick(full));
  const AllReducePass fullPass = allReducePass(lc, *fullExec, full, ts);
  for (size_t off = 0; off < k.count; off += pass) {
    const size_t n = std::min(pass, k.count - off);
    AllReducePass one = fullPass;
    if (n != full) {
      STRATA_ASSIGN_OR_RETURN(PlanExec * lastExec, pick(n));
      one = allReducePass(lc, *lastExec, n, ts);
    }
    one.offset = off;
    if (prog.plans.empty() || prog.plans.back() != one.exec) prog.plans.push_back(one.exec);
    STRATA_TRACE(kSubsysColl, "allreduce pass of %zu elements at %zu: %s, pieces of %zu",
                 one.count, one.offset, one.exec->description.c_str(), one.pieceElements);
    low.allReducePass(one, in, out);
  }
  return prog;
}

// Reduce-scatter and all-gather (count: elements per rank's block). One flat fabric call
// straight between the user's buffers when the form is flat and one pass holds every column
// (a reduce-scatter also needs to be out of place: in place, the other blocks of sendbuff must
// stay untouched). Otherwise passes over columns [a, a+w) of every block, through scratch: each
// pass gathers its columns of every rank's block into scratch (rank j's at its block position),
// runs its steps there, and copies this rank's block (reduce-scatter) or every block
// (all-gather) out. `forced`: the form a tool forces (null: the plan book's).
Program blocksProgram(Comm& c, IssuingThread me, const LowerContext& lc, const Call& k,
                      bool inPlace, const plan::BlockForm* forced = nullptr) {
  Program prog;
  if (k.count == 0) return prog;
  Lowering low(prog, lc, k.type, k.op);
  const size_t ts = dataTypeSize(k.type), p = static_cast<size_t>(lc.size);
  const topo::Hierarchy& h = c.hierarchy();
  const plan::BlockForm form =
      forced != nullptr ? *forced : c.plans().blockForm(k.coll, k.count * p * ts, me);
  const size_t cols = std::max<size_t>(1, passElements(lc.chunkBytes, ts) / p);
  const bool rs = k.coll == Collective::kReduceScatter;
  auto steps = [&](size_t w) {
    return c.plans().schedules(me).get(
        ScheduleKey{k.coll, w, plan::RootedForm::kFlat, 0, form},
        [&] { return plan::blockSteps(h, k.coll, form, lc.rank, w); });
  };
  if (form == plan::BlockForm::kFlat && !(rs && inPlace) && cols >= k.count) {
    // One flat fabric call between the user's buffers (an all-gather in place when sendbuff is
    // recvbuff's block).
    prog.shape = Shape::kDirect;
    const Schedule s = steps(k.count);
    prog.keep.push_back(s);
    Instr x;
    x.op = Op::kStep;
    x.step = &s->at(0);
    x.group = lc.flat;
    x.whole = true;
    x.in = {Buf::kSend, 0};
    x.work = {Buf::kRecv, 0};
    x.index = 1;
    x.total = 1;
    low.add(x);
    if (rs && k.op == strataAvg) low.divide({Buf::kRecv, 0}, k.count);
    return prog;
  }
  prog.shape = Shape::kBlocks;
  std::vector<size_t> order(p);
  for (size_t j = 0; j < p; ++j) order[j] = plan::blockPosition(h, form, static_cast<int>(j));
  const size_t mine = order[static_cast<size_t>(lc.rank)];
  low.needScratch(p * std::min(cols, k.count) * ts);
  const BufRef work{Buf::kScratch, 0};
  for (size_t a = 0; a < k.count; a += cols) {
    const size_t w = std::min(cols, k.count - a);
    if (rs) {
      for (size_t j = 0; j < p; ++j) {
        low.copy(work + order[j] * w, BufRef{Buf::kSend, j * k.count + a}, w);
      }
    } else {
      low.copy(work + mine * w, BufRef{Buf::kSend, a}, w);
    }
    const Schedule s = steps(w);
    low.steps(s, 0, s->size(), work, work, *lc.levels, rs ? k.op : strataSum);
    if (rs) {
      low.copy(BufRef{Buf::kRecv, a}, work + mine * w, w);
      if (k.op == strataAvg) low.divide(BufRef{Buf::kRecv, a}, w);
    } else {
      for (size_t j = 0; j < p; ++j) {
        low.copy(BufRef{Buf::kRecv, j * k.count + a}, work + order[j] * w, w);
      }
    }
  }
  return prog;
}

// Broadcast and reduce: passes of at most passElements, each a whole rooted collective of its
// piece under the form the planner chose for its size (decompose/rooted.h), on the hierarchy's
// own level groups. The broadcast works in recvbuff (the root first copies sendbuff there); the
// reduce in recvbuff on the root and scratch elsewhere, reading sendbuff on its first step.
// strataAvg is summed; the root divides its result once.
Program rootedProgram(Comm& c, IssuingThread me, const LowerContext& lc, const Call& k,
                      bool inPlace) {
  Program prog;
  if (k.count == 0) return prog;
  Lowering low(prog, lc, k.type, k.op);
  const bool isRoot = lc.rank == k.root, bcast = k.coll == Collective::kBroadcast;
  if (lc.size == 1) {
    prog.shape = Shape::kCopy;  // the root's copy is the whole collective
    if (!inPlace) low.copy({Buf::kRecv, 0}, {Buf::kSend, 0}, k.count);
    return prog;
  }
  prog.shape = Shape::kRooted;
  const size_t ts = dataTypeSize(k.type), pass = passElements(lc.chunkBytes, ts);
  const size_t full = std::min(pass, k.count);
  const plan::RootedForm fullForm = c.plans().rootedForm(k.coll, full * ts, me);
  const plan::RootedForm lastForm =
      k.count > pass ? c.plans().rootedForm(k.coll, k.count % pass * ts, me) : fullForm;
  if (isRoot && !inPlace) low.copy({Buf::kRecv, 0}, {Buf::kSend, 0}, k.count);
  const strataRedOp_t fop = k.op == strataAvg ? strataSum : k.op;
  if (!bcast && !isRoot) low.needScratch(full * ts);
  for (size_t off = 0; off < k.count; off += pass) {
    const size_t n = std::min(pass, k.count - off);
    const plan::RootedForm form = n == full ? fullForm : lastForm;
    const Schedule s = c.plans().schedules(me).get(ScheduleKey{k.coll, n, form, k.root}, [&] {
      return plan::rootedSteps(c.hierarchy(), k.coll, form, lc.rank, k.root, n);
    });
    const BufRef work = bcast || isRoot ? BufRef{Buf::kRecv, off} : BufRef{Buf::kScratch, 0};
    // The root's input is already in recvbuff: the reduce reads it there, in place.
    const BufRef src = bcast ? work : (isRoot ? BufRef{Buf::kRecv, off} : BufRef{Buf::kSend, off});
    low.steps(s, 0, s->size(), src, work, *lc.levels, fop);
    if (!bcast && isRoot && k.op == strataAvg) low.divide(work, n);
  }
  return prog;
}

// `made` (an allreduce in the fusion buffer) made a fusion pack's program.
void addPackOps(Program& made, const Call& pack) {
  // The members' inputs into the fusion buffer first, their shares out of it last.
  Instr in, out;
  in.op = Op::kPack;
  in.count = pack.count;
  out.op = Op::kUnpack;
  out.count = pack.count;
  made.code.insert(made.code.begin(), in);
  made.code.push_back(out);
}

// Whether a call's buffers make it "in place" for its program (core/program.h: ProgramKey).
bool inPlaceOf(const Call& call, int rank) {
  const size_t ts = dataTypeSize(call.type);
  if (call.coll == Collective::kReduceScatter) {
    return call.recv == at(call.send, static_cast<size_t>(rank) * call.count, ts);
  }
  return call.send == call.recv;
}

StatusOr<Program> make(Comm& c, IssuingThread me, const LowerContext& lc, const Call& call,
                       bool inPlace) {
  const size_t ts = dataTypeSize(call.type);
  Program made;
  switch (call.coll) {
    case Collective::kAllReduce:
      return allReduceProgram(lc, call, inPlace, Buf::kSend, Buf::kRecv, [&](size_t n) {
        return c.plans().forBytes(n * ts, me);
      });
    case Collective::kReduceScatter:
    case Collective::kAllGather:
      return blocksProgram(c, me, lc, call, inPlace);
    case Collective::kBroadcast:
    case Collective::kReduce:
      return rootedProgram(c, me, lc, call, inPlace);
    case Collective::kSend:
    case Collective::kRecv: {
      made.shape = Shape::kPeer;
      Instr x;
      x.op = Op::kPeer;
      x.group = lc.flat;
      made.code.push_back(x);
      return made;
    }
    default:
      return internalError(std::string("no program for ") + collectiveName(call.coll));
  }
}

}  // namespace

StatusOr<Prepared> prepare(Comm& c, IssuingThread me, const Call& call, bool device,
                           bool capturing) {
  Prepared p;
  p.call = call;
  const bool rooted = call.coll == Collective::kBroadcast || call.coll == Collective::kReduce;
  const bool inPlace = inPlaceOf(call, c.rank());
  const ProgramKey key{call.coll,
                       call.count,
                       static_cast<int>(call.type),
                       static_cast<int>(call.op),
                       rooted ? call.root : 0,
                       inPlace,
                       device};
  ProgramCache& cache = c.plans().programs(me);
  if ((p.program = cache.find(key))) {
    // A device program's groups get their device fabrics, collectively (core/device_side.h),
    // on the first call of its kind: asked on a cache hit too, since the program cache's keys
    // may differ between ranks (inPlace), the device side's do not.
    if (device) STRATA_RETURN_IF_ERROR(setUpDevice(c, me, call, *p.program, capturing));
    return p;
  }
  const LowerContext lc = lowerContextOf(c, device);
  STRATA_ASSIGN_OR_RETURN(Program made, make(c, me, lc, call, inPlace));
  if (device) {
    STRATA_RETURN_IF_ERROR(setUpDevice(c, me, call, made, capturing));
    // The route, now that the device fabrics exist: part of the program from here on.
    routeProgram(made, [](const LevelGroup& g) {
      return g.deviceFabric != nullptr && g.deviceFabric->streamOrdered();
    });
    STRATA_INFO(kSubsysColl, "%s of %zu %s on device memory: route %s (%zu parts)",
                collectiveName(call.coll), call.count, dataTypeName(call.type),
                routeName(made.route), made.segments.size());
  }
  p.program = cache.add(key, std::move(made));
  return p;
}

StatusOr<Prepared> preparePack(Comm& c, IssuingThread me, const Call& pack,
                               std::vector<Call> members) {
  Prepared p;
  p.call = pack;
  p.fused = std::move(members);
  const size_t ts = dataTypeSize(pack.type);
  ProgramKey key{pack.coll, pack.count, static_cast<int>(pack.type), static_cast<int>(pack.op),
                 0, true, false};
  key.pack = true;
  ProgramCache& cache = c.plans().programs(me);
  if ((p.program = cache.find(key))) return p;
  const LowerContext lc = lowerContextOf(c, false);
  STRATA_ASSIGN_OR_RETURN(Program made,
                          allReduceProgram(lc, pack, true, Buf::kFusion, Buf::kFusion,
                                           [&](size_t n) {
                                             return c.plans().forBytes(n * ts, me);
                                           }));
  addPackOps(made, pack);
  p.program = cache.add(key, std::move(made));
  return p;
}

StatusOr<Prepared> prepareForced(Comm& c, IssuingThread me, const Call& call,
                                 const Forced& forced) {
  Prepared p;
  p.call = call;
  const LowerContext lc = lowerContextOf(c, false);
  const bool inPlace = inPlaceOf(call, c.rank());
  Program made;
  if (call.coll == Collective::kAllReduce && forced.plan != nullptr) {
    const plan::Plan& plan = *forced.plan;
    STRATA_RETURN_IF_ERROR(plan::checkPlan(c.hierarchy(), plan));
    STRATA_ASSIGN_OR_RETURN(made, allReduceProgram(lc, call, inPlace, Buf::kSend, Buf::kRecv,
                                                   [&](size_t) {
                                                     return c.plans().forPlan(plan, me);
                                                   }));
  } else if (call.coll == Collective::kReduceScatter || call.coll == Collective::kAllGather) {
    made = blocksProgram(c, me, lc, call, inPlace, &forced.blocks);
  } else {
    return internalError(std::string("nothing to force for a ") + collectiveName(call.coll));
  }
  p.program = std::make_shared<const Program>(std::move(made));
  return p;
}

StatusOr<ProgramRef> fusionPackProgram(const PlanBook& plans, const LowerContext& lc,
                                       const Call& pack) {
  STRATA_ASSIGN_OR_RETURN(
      Program made,
      allReduceProgram(lc, pack, true, Buf::kFusion, Buf::kFusion,
                       [&](size_t n) -> StatusOr<PlanExec*> {
                         PlanExec* exec = plans.fusionPlanFor(n * dataTypeSize(pack.type));
                         if (exec == nullptr)
                           return internalError("a fusion pack larger than the fusion plans");
                         return exec;
                       }));
  addPackOps(made, pack);
  return ProgramRef(std::make_shared<const Program>(std::move(made)));
}

std::vector<LevelGroup*> groupsOf(Comm& c, const Program& prog) {
  std::vector<LevelGroup*> out{&c.groups().flat()};
  if (prog.shape == Shape::kAllReduce) {
    for (const PlanExec* exec : prog.plans) {
      out.insert(out.end(), exec->groups.begin(), exec->groups.end());
    }
  } else if (c.size() > 1) {
    // Every other collective's level groups, whatever this call's shape.
    out.insert(out.end(), c.groups().levels().begin(), c.groups().levels().end());
  }
  return out;
}

}  // namespace strata::core
