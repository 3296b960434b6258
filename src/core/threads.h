// Which thread may touch which part of a communicator, said in types.
//
// A communicator has two kinds of state:
// - setup state (its groups and fabrics, its plans and schedules, its call numbering and
//   fusion queue): made and changed only by the issuing thread, outside any running call, and
//   collectively. Every function that may make or change it takes an IssuingThread, which code
//   outside Comm gets only from an IssueScope (core/comm.h: an entry's hold on the
//   communicator, one thread at a time) and which asserts it is not asked from inside a
//   running call; the issue path threads it from the entry down through prepare;
// - run state (core/run_memory.h): used by whichever thread runs the communicator's calls, one
//   call at a time (core/engine.h serialises them), reached through the executor; Comm::memory
//   takes a RunningCall, which only core/bounded.h's bounded() makes.
// Running calls read setup state only through the pointers their program holds (core/program.h),
// made before they were queued; nothing a program points to is ever freed while the
// communicator lives (plans and groups are kept; schedules are shared).
#pragma once

#include <cstddef>

#include "common/collective.h"
#include "common/status.h"

namespace strata::core {

class Comm;

// The capability to set up: held by the issuing thread (the issue path, init, split, the tools
// view). Cheap to copy; holds nothing.
class IssuingThread {
 private:
  IssuingThread() = default;
  friend class Comm;
};

// The capability to use run state (Comm::memory): held by the thread running one of the
// communicator's calls, for the call's length. Only core/bounded.h's bounded(), which every
// call runs under, makes one and hands it to the call's body.
class RunningCall {
 private:
  RunningCall() = default;
  template <typename Body>
  friend Status bounded(Comm& c, const Call& first, size_t calls, Body body);
};

}  // namespace strata::core
