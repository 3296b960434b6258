// Running a schedule's steps on the fabrics of their groups: one after another (runSteps), or
// as a software pipeline over pieces of the buffer (runPipelined).
#pragma once

#include <cstddef>
#include <vector>

#include "common/status.h"
#include "common/wire.h"
#include "core/comm.h"
#include "core/executor.h"
#include "core/program.h"
#include "decompose/schedule.h"

namespace strata::core {

// Runs steps [begin, end) on a working buffer `work`. The first step may read from `src`
// instead (an out-of-place allreduce or reduce), so that the input is never copied:
//   reduce-scatter: input is the step's range, output this rank's block within it;
//   allreduce:      input and output are the step's range;
//   all-gather:     in place, from this rank's block to the whole range;
//   the rooted kinds (broadcast, reduce, scatter, gather, send, recv) as decompose/rooted.h
//   says.
// strataAvg is combined as a sum; the step that finishes the reduction divides by the rank
// count, once (every element passes through exactly one such step).
// A step's level indexes `groups` (plan::kFlatLevel: the communicator's flat group), and
// `wire` when given (an allreduce plan's PlanExec::wire): a float32 sum or average step whose
// level has a wire type runs compressed (core/wire_steps.h) when the executor's memory allows.
Status runSteps(Comm& c, Executor& x, const std::vector<LevelGroup*>& groups,
                const plan::Step* begin, const plan::Step* end, const void* src, void* work,
                strataDataType_t type, strataRedOp_t op,
                const std::vector<WireType>* wire = nullptr);

inline Status runSteps(Comm& c, Executor& x, const std::vector<LevelGroup*>& groups,
                       const std::vector<plan::Step>& steps, const void* src, void* work,
                       strataDataType_t type, strataRedOp_t op,
                       const std::vector<WireType>* wire = nullptr) {
  return runSteps(c, x, groups, steps.data(), steps.data() + steps.size(), src, work, type, op,
                  wire);
}

// An allreduce pass (core/program.h) of pass.count elements under pass.exec's plan, cut into
// pieces of pass.pieceElements. With pass.overlap, the allreduce step of piece k (the slow,
// inter-host stage) is in flight while this rank runs the all-gathers of piece k-1 and the
// reduce-scatters of piece k+1; without, the pieces run one after another. `send` and `recv`
// are the pass's own elements.
Status runPipelined(Comm& c, Executor& x, const ProgramPass& pass, const void* send, void* recv,
                    strataDataType_t type, strataRedOp_t op);

}  // namespace strata::core
