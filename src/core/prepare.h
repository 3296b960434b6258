// prepare(): a call's complete program (core/program.h: instructions, core/instr.h), made on the
// issuing thread. Arguments are validated by the C boundary (src/api) first.
//
// Two halves, so that setup never runs on the progress thread and never diverges from what
// runs: prepare() makes everything the call will use (plans, groups, fabrics, device fabrics:
// collective on first use, on the issuing thread) and lowers the call to its program;
// core/run.h only executes that program.
#pragma once

#include <cstddef>
#include <vector>

#include "common/collective.h"
#include "common/status.h"
#include "core/comm.h"
#include "core/lower.h"
#include "core/program.h"
#include "core/run.h"

namespace strata::core {

// What lowering reads of `c` (core/lower.h), for host or device memory.
LowerContext lowerContextOf(Comm& c, bool device);

// The call's program, from the cache of its shape or made now. Collective on the first call
// that needs a plan or group (and, for device memory, device fabrics). Issuing thread only.
// `capturing`: a device call made while its stream captures a CUDA graph (its device setup may
// then make nothing that needs CUDA: core/device_side.h).
StatusOr<Prepared> prepare(Comm& c, IssuingThread me, const Call& call, bool device = false,
                           bool capturing = false);
// A fusion pack cut from a group's calls (core/fusion.h): `pack` is the allreduce of the whole
// pack, in the fusion buffer; `members` its calls, in pack order. Issuing thread only.
StatusOr<Prepared> preparePack(Comm& c, IssuingThread me, const Call& pack,
                               std::vector<Call> members);
// What a tool forces instead of the planner's or the plan file's choice (strata-tune and the plan
// tests): an allreduce's plan for every pass, or a reduce-scatter's or all-gather's form. Every
// rank must force the same.
struct Forced {
  const plan::Plan* plan = nullptr;                 // an allreduce
  plan::BlockForm blocks = plan::BlockForm::kFlat;  // a reduce-scatter or all-gather
};
// The call under `forced`; its program is made for this call alone (not cached under the call's
// shape, where the planner's own would be found).
StatusOr<Prepared> prepareForced(Comm& c, IssuingThread me, const Call& call,
                                 const Forced& forced);
// The program of a fusion pack agreed at run time (core/fusion_queue.h), under the plans
// PlanBook::prepareFusionPlans made beforehand: pure lowering that sets nothing up, so the
// runner may call it. The one program not made on the issuing thread: which calls a pack holds
// is agreed by the ranks on the runner, when it runs.
class PlanBook;
StatusOr<ProgramRef> fusionPackProgram(const PlanBook& plans, const LowerContext& lc,
                                       const Call& pack);
// The groups a program runs on (the device path makes their device fabrics).
std::vector<LevelGroup*> groupsOf(Comm& c, const Program& prog);

}  // namespace strata::core
