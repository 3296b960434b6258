// A device program's route: which of its instructions the caller's CUDA stream carries by itself
// and which need a host thread. Decided once, by prepare() (core/prepare.cc), when the program is
// made and the device fabrics of its groups exist; the issue path (core/device_submit.cc) only
// follows it. Pure: it reads the program and whether a group's device fabric is stream-ordered
// (fabrics/fabric.h: Fabric::streamOrdered), so it is unit-tested without CUDA.
//
// What runs where:
//   - a fabric step (kStep, kStart, kWait, kPeer) on a stream-ordered fabric (nccl, local):
//     enqueued on the caller's stream by the issuing thread, in call order;
//   - a fabric step on any other fabric (staged, mpi-cuda: MPI or UCX between hosts): a host
//     stage, run by the progress thread (or the issuing thread without one) after the stream
//     reached it, joined to the stream by the stream gate (gpu/stream_gate.h);
//   - a copy or the average's division: wherever its neighbours are. Between two host stages
//     with no stream step between them it joins the host stage (one gate, not two); anywhere
//     else it is enqueued on the caller's stream.
// Segments are maximal runs of instructions that run in the same place, in program order.
// Invariant: a stream-ordered fabric's instruction is never in a host segment, so only the
// issuing thread ever enqueues on it (every member in the same order, as NCCL requires).
#pragma once

#include <functional>
#include <string>

#include "core/group_table.h"
#include "core/program.h"

namespace strata::core {

// Whether group `g`'s device fabric is stream-ordered.
using StreamOrderedFn = std::function<bool(const LevelGroup& g)>;

// Sets prog.route and prog.segments (device programs only).
void routeProgram(Program& prog, const StreamOrderedFn& streamOrdered);

// Whether `prog` has a fabric step the stream carries (nccl, local): only the issuing thread may
// run such a step.
bool hasStreamSteps(const Program& prog);

// "stream", "joined" or "host": the timeline's and the log's name of a route.
const char* routeName(Program::Route r);

// The first host stage of `prog` ("step 2 of 3 (allreduce at level 1, fabric staged)"), or ""
// when it has none: what a refused graph capture names.
std::string firstHostStage(const Program& prog);

}  // namespace strata::core
