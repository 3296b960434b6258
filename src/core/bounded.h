// What every call of a communicator runs under, whatever its memory (core/calls.h is the one
// issue path; core/device_side.h runs its device calls): the communicator's deadline
// (STRATA_TIMEOUT or its config's, and its abort flag: common/deadline.h), a context that
// names the call by its number (Call::seq), and the error state when it fails part-way.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "common/collective.h"
#include "common/deadline.h"
#include "common/status.h"
#include "core/comm.h"
#include "core/prepare.h"
#include "core/run.h"
#include "decompose/plan.h"

namespace strata::core {

// "allreduce #12 (1000 float32) on rank 3 of 8", "send #3 to rank 2 (8 int32) on rank 1 of 4";
// `groupSize` > 1 adds "(a group of N calls)".
std::string callContext(const Comm& c, const Call& first, size_t groupSize);

// Runs `body(RunningCall)` under the communicator's deadline, on whichever thread runs it (the
// token is its hold on the communicator's run state, core/threads.h). Any failure
// while running means the ranks may now be at different points: it puts the communicator in
// its error state, with the context of `first` (the call, or a group's first call).
template <typename Body>
Status bounded(Comm& c, const Call& first, size_t calls, Body body) {
  deadline::Scope scope(c.settings().timeoutSeconds, c.cancelFlag(), c.settings().timeoutSource);
  Status st = body(RunningCall());
  if (st.isOk()) return st;
  st = st.withContext(callContext(c, first, calls));
  c.failHere(st);
  return st;
}

// A setup (plans, groups, fabrics: collective with the other ranks on first use) that failed:
// the ranks are at different points of their setups, so it too puts the communicator in its
// error state. `what` names what was being set up.
Status setupFailed(Comm& c, const Status& why, const std::string& what);

// prepare() (prepareForced() with `forced`, preparePack() with `pack`'s members; `device`:
// for device memory, `capturing`: while its stream captures a CUDA graph) under the deadline,
// failing as setupFailed; except a setup refused during capture (strataInvalidUsage, agreed by
// every rank: core/device_side.h), which ends the call's record and leaves the communicator
// usable.
StatusOr<Prepared> prepareBounded(Comm& c, IssuingThread me, const Call& call,
                                  const Forced* forced = nullptr, bool device = false,
                                  std::vector<Call>* pack = nullptr, bool capturing = false);

// The narrow view of `c` a run takes (core/run.h), on `x`'s memory.
inline RunContext runContextOf(Comm& c, Executor& x) {
  return RunContext{x, c.groups().flat(), c.flightRecorder(), c.timeline(), c.rank(), c.size()};
}

}  // namespace strata::core
