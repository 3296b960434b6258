// Stage groups: the sub-communicator and fabric of one level of a hierarchy, made once and
// shared by every plan that needs the same group.
#pragma once

#include "common/status.h"
#include "core/comm.h"

namespace strata::core {

// The group of this rank at `level` of `h` (the comm's hierarchy or a plan's derived one).
// Collective over c.mpi: every rank must call it with the same h and level, in the same
// order, which holds because every rank runs the same plan for the same call.
StatusOr<LevelGroup*> ensureGroup(strataComm& c, const topo::Hierarchy& h, int level);

// The plan to run for an allreduce of `bytes`: the plan file's rule, or the planner's choice
// for the size bucket. Collective on the first use of a plan (it may create groups).
StatusOr<PlanExec*> planForBytes(strataComm& c, size_t bytes);

// A given plan, ready to run (for tools and tests that compare plans). Collective on first use.
StatusOr<PlanExec*> execForPlan(strataComm& c, const plan::Plan& p);

}  // namespace strata::core
