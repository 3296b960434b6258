// The dispatcher: prepares a call's program (core/program.h) and runs it on the fabrics of the
// communicator's groups. Arguments are validated by the C boundary (src/api) first.
//
// Two halves, so that setup never runs on the progress thread and never diverges from what
// runs: prepare() (core/prepare.cc) makes everything the call will use (plans, groups, fabrics:
// collective on first use, on the issuing thread) and the complete program of its steps;
// run() (dispatch.cc) only executes that program.
#pragma once

#include <cstddef>
#include <vector>

#include "common/collective.h"
#include "common/status.h"
#include "core/comm.h"
#include "core/executor.h"
#include "core/program.h"

namespace strata::core {

// A call and its program.
struct Prepared {
  Call call;
  ProgramRef program;
  // A fusion pack (core/fusion.h): `call` is the allreduce of the whole pack (its buffers are
  // the communicator's fusion buffer, named at run time) and these are its members, in pack
  // order. Host memory only.
  std::vector<Call> fused;
};

// Elements of one pass (STRATA_CHUNK_BYTES worth, at least one): a larger call runs as passes
// of this many elements and a shorter last one, each planned for its bytes.
size_t passElements(const Comm& c, size_t ts);

// Collective on the first call that needs a plan or group. Issuing thread only.
StatusOr<Prepared> prepare(Comm& c, const Call& call);
// What a tool forces instead of the planner's or the plan file's choice (strata-tune and the plan
// tests): an allreduce's plan for every pass, or a reduce-scatter's or all-gather's form. Every
// rank must force the same.
struct Forced {
  const plan::Plan* plan = nullptr;                 // an allreduce
  plan::BlockForm blocks = plan::BlockForm::kFlat;  // a reduce-scatter or all-gather
};
// The call under `forced`; its program is made for this call alone (not cached under the call's
// shape, where the planner's own would be found).
StatusOr<Prepared> prepareForced(Comm& c, const Call& call, const Forced& forced);
// The program of a fusion pack cut at run time (core/fusion_queue.h), under the plans
// PlanBook::prepareFusionPlans made beforehand: sets nothing up, so the runner may call it.
StatusOr<ProgramRef> fusionPackProgram(const Comm& c, const Call& pack);
// The groups a prepared call runs on (the device path makes their device fabrics).
std::vector<LevelGroup*> groupsOf(Comm& c, const Prepared& p);

// Runs a prepared call on `x`'s memory. No setup: any thread that runs the comm's calls.
Status run(Comm& c, Executor& x, const Prepared& p);
// Runs a group's calls (strataGroupStart/End) on one communicator: every send and receive in
// one exchange (posted together, so pairs never deadlock), then the collectives in call order.
// Every rank applies the same rule, so the collectives meet in the same order everywhere.
Status runGroup(Comm& c, Executor& x, const std::vector<Prepared>& calls);

}  // namespace strata::core
