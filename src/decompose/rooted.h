// Schedules of the rooted collectives: broadcast and reduce through the hierarchy, in the forms
// the planner chooses between by size (planner.h: chooseRooted). Pure code, as schedule.h.
//
// Forms (each for a root r and n elements):
//   flat     one step over the whole communicator (kFlatLevel): the flat fabric's own broadcast
//            or reduce (MPI_Bcast / MPI_Reduce).
//   tree     latency-bound, small messages. Broadcast: top level first, one broadcast of the
//            whole range per level, down to level 0; reduce: the mirror, level 0 first up to
//            the top. At level l only the stage groups whose coordinates below l equal the
//            effective root E's take part (their root is the member whose coordinate at l is
//            E's); after the top-down pass every rank holds the data. E is r itself when every
//            coordinate of r is below its level's width (always, on a regular hierarchy);
//            otherwise E is the rank whose coordinates are r's where below the width and 0
//            where not, and the broadcast starts with a send r -> E (the reduce ends with a
//            send E -> r), at kFlatLevel.
//   sharded  bandwidth-bound, large messages (van de Geijn's scatter-allgather, made
//            hierarchical). Broadcast: a scatter at every level, innermost first, then an
//            all-gather at every level, outermost first. Reduce: a reduce-scatter at every
//            level, innermost first, then a gather at every level, outermost first. The blocks
//            are those of the allreduce schedule (schedule.h: a level-l group cuts its range
//            into width(l) blocks, members at or past the width get empty ones and sit out the
//            levels above), with the top level cut too. Scatters and gathers involve only the
//            stage groups whose coordinates above l equal r's (for the broadcast's scatters and
//            the reduce's gathers); their root is the member whose coordinate at l is r's.
//            Reduce-scatters and all-gathers involve every member, as in the allreduce.
//
// How the dispatcher runs a rank's steps, in order, on a working buffer `work` of n elements
// (the broadcast's recvbuff, which the root first fills from sendbuff; the reduce's recvbuff on
// the root and scratch elsewhere) and the caller's `src` (the reduce's sendbuff):
//   broadcast  at step.level (or kFlatLevel: the whole communicator): member step.root's
//              work[offset, offset+count) into every member's, in place;
//   reduce     the reduction of every member's input range [offset, offset+count) into member
//              step.root's work range; the input is `src` for a rank's first step, `work` after;
//   scatter    member step.root's work range, cut by counts/displs (relative to offset), block j
//              into member j's work[offset + displs[j], ...) (in place on the root);
//   gather     the mirror: every member's block into member step.root's work range;
//   reduce-scatter, all-gather: as in schedule.h (the reduce-scatter reads `src` when it is the
//              rank's first step);
//   send/recv  (kFlatLevel) the whole work range to/from the rank step.root.
// strataAvg combines as a sum; the dispatcher divides the root's result once at the end.
//
// Invariants the tests simulate (tests/unit/decompose/test_rooted.cc): all members of a group
// that run a step compute the same kind, range, counts and root, and a group either runs it
// with every member or not at all; a broadcast leaves every rank's range equal to the root's
// input; a reduce leaves the root's range equal to the reduction of every rank's input, each
// input counted exactly once.
#pragma once

#include <cstddef>
#include <vector>

#include "common/collective.h"
#include "decompose/schedule.h"
#include "topology/hierarchy.h"

namespace strata::plan {

enum class RootedForm { kFlat, kTree, kSharded };

// "flat", "tree", and for the sharded form "scatter-allgather" (broadcast) or
// "reducescatter-gather" (reduce).
const char* rootedFormName(Collective coll, RootedForm form);

// The steps of `rank` for a broadcast (coll kBroadcast) or reduce (kReduce) of `count`
// elements from/to `root` under `form`. Empty steps (count 0) are left out, the same on every
// member of a group. Works on irregular hierarchies.
std::vector<Step> rootedSteps(const topo::Hierarchy& h, Collective coll, RootedForm form, int rank,
                              int root, size_t count);

}  // namespace strata::plan
