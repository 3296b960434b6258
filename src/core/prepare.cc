// prepare(): a call's complete program (core/program.h), made on the issuing thread. Everything
// decided here is decided from the call and what every rank knows alike (the hierarchy, the
// agreed settings, the plans), so every rank makes the same program up to its own rank's steps.
#include <algorithm>
#include <memory>
#include <utility>
#include <vector>

#include "common/buffer.h"
#include "common/datatype.h"
#include "core/dispatch.h"
#include "decompose/schedule.h"

namespace strata::core {

size_t passElements(const Comm& c, size_t ts) {
  return std::max<size_t>(1, c.settings().chunkBytes / ts);
}

namespace {

using Shape = Program::Shape;

// A pass of `n` elements at `off` running `steps`.
ProgramPass passOf(size_t off, size_t n, Schedule steps) {
  ProgramPass pass;
  pass.offset = off;
  pass.count = n;
  pass.steps = std::move(steps);
  return pass;
}

// A plan's pipeline piece: its own (a plan file's chunk_bytes, or the planner's choice under
// STRATA_PIPELINE_BYTES=auto), else STRATA_PIPELINE_BYTES's size; neither: the whole pass is one
// piece. The cost model (decompose/cost_model.cc: predict) reads the same.
size_t pipelineBytes(const Comm& c, const plan::Plan& p) {
  size_t bytes = plan::planPieceBytes(p);
  if (bytes == 0) bytes = c.settings().pipelineBytes;
  return bytes == 0 ? c.settings().chunkBytes : bytes;
}

Schedule allReduceSteps(const Comm& c, PlanExec& exec, size_t n) {
  return exec.schedules.get(ScheduleKey{Collective::kAllReduce, n}, [&] {
    if (exec.plan.passthrough) return plan::flatAllReduceSteps(n);
    const bool ring = exec.plan.stages.back().algorithm == plan::Algorithm::kRing;
    return plan::allReduceSteps(exec.derived, c.rank(), n, ring);
  });
}

// An allreduce pass of n elements under `exec`, cut into pipeline pieces. The pieces overlap
// (run_steps.h: runPipelined) when there are several and the plan has a separate allreduce
// stage to keep in flight: not a passthrough, not one stage, not a ring top.
ProgramPass allReducePass(const Comm& c, PlanExec& exec, size_t n, size_t ts) {
  ProgramPass pass;
  pass.count = n;
  pass.exec = &exec;
  pass.pieceElements = std::min(n, std::max<size_t>(1, pipelineBytes(c, exec.plan) / ts));
  const size_t pieces = (n + pass.pieceElements - 1) / pass.pieceElements;
  pass.steps = allReduceSteps(c, exec, pass.pieceElements);
  pass.lastPiece = allReduceSteps(c, exec, n - (pieces - 1) * pass.pieceElements);
  pass.overlap = pieces > 1 && plan::piecesOverlap(exec.plan);
  return pass;
}

// The allreduce: passes of at most passElements (an allreduce is elementwise, so passes are
// independent allreduces), each under pick(n)'s plan for its n elements.
template <typename Pick>
StatusOr<Program> allReduceProgram(const Comm& c, const Call& k, Pick pick) {
  Program prog;
  if (k.count == 0) return prog;
  if (c.size() == 1) {
    prog.shape = Shape::kCopy;  // a sum, product, max, min or average of one value is itself
    return prog;
  }
  prog.shape = Shape::kAllReduce;
  const size_t ts = dataTypeSize(k.type), pass = passElements(c, ts);
  const size_t full = std::min(pass, k.count);
  STRATA_ASSIGN_OR_RETURN(PlanExec * fullExec, pick(full));
  const ProgramPass fullPass = allReducePass(c, *fullExec, full, ts);
  for (size_t off = 0; off < k.count; off += pass) {
    const size_t n = std::min(pass, k.count - off);
    if (n == full) {
      prog.passes.push_back(fullPass);
    } else {
      STRATA_ASSIGN_OR_RETURN(PlanExec * lastExec, pick(n));
      prog.passes.push_back(allReducePass(c, *lastExec, n, ts));
    }
    prog.passes.back().offset = off;
  }
  return prog;
}

// Reduce-scatter and all-gather (count: elements per rank's block). One flat fabric call
// straight between the user's buffers when the form is flat and one pass holds every column
// (a reduce-scatter also needs to be out of place: in place, the other blocks of sendbuff must
// stay untouched). Otherwise passes over columns [a, a+w) of every block, through scratch.
// `forced`: the form a tool forces (null: the plan book's).
Program blocksProgram(Comm& c, const Call& k, const plan::BlockForm* forced = nullptr) {
  const IssuingThread me = c.issuing();
  Program prog;
  if (k.count == 0) return prog;
  const size_t ts = dataTypeSize(k.type), p = static_cast<size_t>(c.size());
  const topo::Hierarchy& h = c.hierarchy();
  const plan::BlockForm form =
      forced != nullptr ? *forced : c.plans().blockForm(k.coll, k.count * p * ts, me);
  const size_t cols = std::max<size_t>(1, passElements(c, ts) / p);
  const bool rs = k.coll == Collective::kReduceScatter;
  const bool inPlace = rs && k.recv == at(k.send, c.rank() * k.count, ts);
  auto steps = [&](size_t w) {
    return c.plans().schedules(me).get(
        ScheduleKey{k.coll, w, plan::RootedForm::kFlat, 0, form},
        [&] { return plan::blockSteps(h, k.coll, form, c.rank(), w); });
  };
  if (form == plan::BlockForm::kFlat && !inPlace && cols >= k.count) {
    prog.shape = Shape::kDirect;
    prog.passes.push_back(passOf(0, k.count, steps(k.count)));
    return prog;
  }
  prog.shape = Shape::kBlocks;
  std::vector<size_t> order(p);
  for (size_t j = 0; j < p; ++j) order[j] = plan::blockPosition(h, form, static_cast<int>(j));
  prog.blockOrder = std::make_shared<const std::vector<size_t>>(std::move(order));
  for (size_t a = 0; a < k.count; a += cols) {
    const size_t w = std::min(cols, k.count - a);
    prog.passes.push_back(passOf(a, w, steps(w)));
  }
  return prog;
}

// Broadcast and reduce: passes of at most passElements, each a whole rooted collective of its
// piece under the form the planner chose for its size (decompose/rooted.h).
Program rootedProgram(Comm& c, const Call& k) {
  const IssuingThread me = c.issuing();
  Program prog;
  if (k.count == 0) return prog;
  if (c.size() == 1) {
    prog.shape = Shape::kCopy;  // the root's copy is the whole collective
    return prog;
  }
  prog.shape = Shape::kRooted;
  const size_t ts = dataTypeSize(k.type), pass = passElements(c, ts);
  const size_t full = std::min(pass, k.count);
  const plan::RootedForm fullForm = c.plans().rootedForm(k.coll, full * ts, me);
  const plan::RootedForm lastForm =
      k.count > pass ? c.plans().rootedForm(k.coll, k.count % pass * ts, me) : fullForm;
  for (size_t off = 0; off < k.count; off += pass) {
    const size_t n = std::min(pass, k.count - off);
    const plan::RootedForm form = n == full ? fullForm : lastForm;
    ProgramPass one =
        passOf(off, n, c.plans().schedules(me).get(ScheduleKey{k.coll, n, form, k.root}, [&] {
          return plan::rootedSteps(c.hierarchy(), k.coll, form, c.rank(), k.root, n);
        }));
    one.form = form;
    prog.passes.push_back(std::move(one));
  }
  return prog;
}

}  // namespace

StatusOr<Prepared> prepare(Comm& c, const Call& call) {
  const IssuingThread me = c.issuing();
  Prepared p;
  p.call = call;
  const size_t ts = dataTypeSize(call.type);
  const bool rooted = call.coll == Collective::kBroadcast || call.coll == Collective::kReduce;
  const bool inPlace = call.coll == Collective::kReduceScatter &&
                       call.recv == at(call.send, c.rank() * call.count, ts);
  const ProgramKey key{call.coll, call.count, ts, rooted ? call.root : 0, inPlace};
  ProgramCache& cache = c.plans().programs(me);
  if ((p.program = cache.find(key))) return p;
  Program made;
  switch (call.coll) {
    case Collective::kAllReduce: {
      STRATA_ASSIGN_OR_RETURN(made, allReduceProgram(c, call, [&](size_t n) {
                                return c.plans().forBytes(n * ts, me);
                              }));
      break;
    }
    case Collective::kReduceScatter:
    case Collective::kAllGather:
      made = blocksProgram(c, call);
      break;
    case Collective::kBroadcast:
    case Collective::kReduce:
      made = rootedProgram(c, call);
      break;
    case Collective::kSend:
    case Collective::kRecv:
      made.shape = Shape::kPeer;
      break;
    default:
      return internalError(std::string("no program for ") + collectiveName(call.coll));
  }
  p.program = cache.add(key, std::move(made));
  return p;
}

StatusOr<Prepared> prepareForced(Comm& c, const Call& call, const Forced& forced) {
  const IssuingThread me = c.issuing();
  Prepared p;
  p.call = call;
  Program made;
  if (call.coll == Collective::kAllReduce && forced.plan != nullptr) {
    const plan::Plan& plan = *forced.plan;
    STRATA_RETURN_IF_ERROR(plan::checkPlan(c.hierarchy(), plan));
    STRATA_ASSIGN_OR_RETURN(
        made, allReduceProgram(c, call, [&](size_t) { return c.plans().forPlan(plan, me); }));
  } else if (call.coll == Collective::kReduceScatter || call.coll == Collective::kAllGather) {
    made = blocksProgram(c, call, &forced.blocks);
  } else {
    return internalError(std::string("nothing to force for a ") + collectiveName(call.coll));
  }
  p.program = std::make_shared<const Program>(std::move(made));
  return p;
}

StatusOr<ProgramRef> fusionPackProgram(const Comm& c, const Call& pack) {
  STRATA_ASSIGN_OR_RETURN(Program made,
                          allReduceProgram(c, pack, [&](size_t n) -> StatusOr<PlanExec*> {
                            PlanExec* exec = c.plans().fusionPlanFor(n * dataTypeSize(pack.type));
                            if (exec == nullptr)
                              return internalError("a fusion pack larger than the fusion plans");
                            return exec;
                          }));
  return ProgramRef(std::make_shared<const Program>(std::move(made)));
}

std::vector<LevelGroup*> groupsOf(Comm& c, const Prepared& p) {
  std::vector<LevelGroup*> out{&c.groups().flat()};
  if (p.program->shape == Shape::kAllReduce) {
    const PlanExec* last = nullptr;
    for (const ProgramPass& pass : p.program->passes) {
      if (pass.exec == last) continue;
      last = pass.exec;
      out.insert(out.end(), pass.exec->groups.begin(), pass.exec->groups.end());
    }
  } else if (c.size() > 1) {
    // Every other collective's level groups, whatever this call's shape: the device path
    // remembers which (collective, count, type) it set up, and a call of the same key may take
    // another shape (an in-place reduce-scatter runs through scratch, an out-of-place one not).
    out.insert(out.end(), c.groups().levels().begin(), c.groups().levels().end());
  }
  return out;
}

}  // namespace strata::core
