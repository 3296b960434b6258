// Running prepared calls: one executor loop (execute) runs any program (core/instr.h) on an
// Executor's memory. It takes a narrow RunContext, never the communicator: what a run may touch
// is what the context names (the flat group, the flight recorder, the timeline, rank and size)
// plus the groups and schedules its program points to.
//
// Threads: whichever thread runs the communicator's calls, one call at a time (core/engine.h
// serialises them); no setup happens here (core/threads.h).
#pragma once

#include <cstddef>
#include <vector>

#include "common/collective.h"
#include "common/status.h"
#include "core/executor.h"
#include "core/flight_recorder.h"
#include "core/group_table.h"
#include "core/program.h"
#include "core/timeline.h"

namespace strata::core {

// A call and its program.
struct Prepared {
  Call call;
  ProgramRef program;
  // A fusion pack (core/fusion.h): `call` is the allreduce of the whole pack (its buffers are
  // the executor's fusion buffer, named at run time) and these are its members, in pack
  // order. Host memory only.
  std::vector<Call> fused;
};

// What a run reads and writes besides its program's groups: the narrow view of a communicator.
struct RunContext {
  Executor& x;
  LevelGroup& flat;          // the whole communicator's group (sends, receives, agreements)
  FlightRecorder& recorder;  // the call's progress, for dumps
  Timeline* timeline;        // null: STRATA_TRACE unset
  int rank;
  int size;
  const char* route = "";  // device calls: their route (core/route.h), for the timeline
};

// Which part of a prepared call's program a run covers: code[begin, end), the whole by default.
// A device call on the joined route (core/route.h) runs in parts, on two threads: the flight
// recorder's call starts with the part that `opens` it and ends with the one that `closes` it
// (or with a failed part), and each part is a call event of its own on the timeline, named by
// `name` ("enqueue", "host stage").
struct Part {
  size_t begin = 0;
  size_t end = static_cast<size_t>(-1);
  bool opens = true, closes = true;
  const char* name = "";
};

// The buffers of one run of a program.
struct RunBuffers {
  const void* send = nullptr;
  void* recv = nullptr;
  char* fusion = nullptr;                  // a fusion pack's buffer
  const std::vector<Call>* fused = nullptr;  // a fusion pack's members
  bool packed = false;                     // the pack is already in `fusion` (skip kPack)
};

// The executor loop: runs `prog`'s instructions code[begin, end) in order for call `k` (its
// type, op and, for a send or receive, its peer), on `b`'s buffers. A pipelined allreduce
// started in the range must be waited for in it.
Status execute(RunContext& rc, const Program& prog, const Call& k, const RunBuffers& b,
               size_t begin = 0, size_t end = static_cast<size_t>(-1));

// A send's or receive's operation on the flat group's fabric.
fabric::PeerOp peerOp(const Call& k);

// Copies the fusion members' inputs one after another into `buf` (Op::kPack); on timeline `t`
// as the pack's copy in when `t` is not null.
void packInto(char* buf, const std::vector<Call>& members, strataDataType_t type, Timeline* t,
              uint64_t seq);

// Runs a prepared call (or fusion pack), or `part` of it, as the flight recorder's and
// timeline's running call.
Status run(RunContext& rc, const Prepared& p, const Part& part = Part{});
// Runs a group's calls (strataGroupStart/End) on one communicator: every send and receive in
// one exchange (posted together, so pairs never deadlock), then the collectives in call order.
// Every rank applies the same rule, so the collectives meet in the same order everywhere.
Status runGroup(RunContext& rc, const std::vector<Prepared>& calls);

}  // namespace strata::core
