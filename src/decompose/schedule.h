// Schedules: the steps one rank runs for one collective under a plan (BlueConnect's
// decomposition, made concrete for a rank and a count).
//
// Allreduce of n elements over levels 0..k-1 (innermost first):
//   reduce-scatter within each level-0 group, then of the resulting shard within each level-1
//   group, ..., allreduce at level k-1, then all-gathers back down in reverse order.
// A level-l group of c children cuts its range into width(l) blocks (width = fewest children of
// any level-l group); children at position >= width get an empty block and sit out the levels
// above. In a regular hierarchy width == c and every rank holds a shard; in an irregular one
// (nodes of 3 and 4 ranks) the decomposition still covers every element exactly once, and
// width 1 degenerates to reduce-to-leader, Horovod's fallback.
//
// Invariants every schedule keeps (tests/unit/test_schedule.cc simulates them):
//   * all members of a stage group compute the same range and the same counts;
//   * after the reduce-scatters, the top-level ranges tile [0, n) exactly once;
//   * each all-gather writes its whole range, so every element of the result is written.
#pragma once

#include <cstddef>
#include <vector>

#include "common/collective.h"
#include "topology/hierarchy.h"

namespace strata::plan {

// The level a flat step runs on: the whole communicator, not one level's group.
inline constexpr int kFlatLevel = -1;

// A step of an allreduce, reduce-scatter or all-gather schedule (this file), or of a broadcast
// or reduce schedule (decompose/rooted.h, which also defines the rooted kinds' fields).
struct Step {
  Collective kind = Collective::kAllReduce;  // a step is a reduce-scatter, allreduce or all-gather
  int level = kFlatLevel;  // hierarchy level whose stage group runs it, or kFlatLevel
  size_t offset = 0;       // the step's range in the working buffer, in elements
  size_t count = 0;
  int index = 0;               // this rank's position in the stage group
  std::vector<size_t> counts;  // reduce-scatter/all-gather: elements of each member's block
  std::vector<size_t> displs;  // ... and where each block starts, relative to offset
  // The step after which this rank's range holds fully reduced values: where strataAvg's one
  // division happens (the top allreduce, or the top reduce-scatter of a ring top stage).
  bool finishesReduction = false;
  // Rooted steps (broadcast, reduce, scatter, gather): the root's position in the step's group;
  // send and recv (at kFlatLevel): the peer's rank in the communicator. -1 otherwise.
  int root = -1;
};

// Whether the hierarchy admits the hierarchical reduce-scatter/all-gather (it must be regular:
// every rank ends up owning exactly one equal block).
bool hierarchicalBlocksPossible(const topo::Hierarchy& h);

// The allreduce steps of `rank` for `count` elements. Empty steps (count 0) are left out; all
// members of a stage group leave out the same ones.
// With `ringTop`, the top level runs a reduce-scatter then an all-gather instead of an allreduce
// (the "ring" algorithm of a plan's last stage).
std::vector<Step> allReduceSteps(const topo::Hierarchy& h, int rank, size_t count,
                                 bool ringTop = false);

// The blocks every hierarchical schedule runs on: the reduce-scatter steps of `rank`, innermost
// first, as the allreduce takes them, with the top level cut into width(top) blocks too (the
// ring top's). The chain stops after an empty range or a block past a level's width. The
// allreduce and the sharded broadcast and reduce (rooted.h) are built from it.
std::vector<Step> reduceScatterChain(const topo::Hierarchy& h, int rank, size_t count);

// The reduce-scatter and all-gather steps of `rank` over a working buffer of
// numRanks * blockCount elements arranged in permuted order: rank r's block sits at
// permutedPosition(h, r). Requires hierarchicalBlocksPossible(h).
std::vector<Step> reduceScatterSteps(const topo::Hierarchy& h, int rank, size_t blockCount);
std::vector<Step> allGatherSteps(const topo::Hierarchy& h, int rank, size_t blockCount);
size_t permutedPosition(const topo::Hierarchy& h, int rank);

// How a reduce-scatter or all-gather moves its blocks: in one step over the whole communicator,
// or level by level, innermost first (BlueConnect's stages; hierarchicalBlocksPossible only).
enum class BlockForm { kFlat, kHierarchical };
const char* blockFormName(BlockForm form);  // "flat", "hierarchical"
// The steps of `rank` for a reduce-scatter or all-gather (`coll`) under `form`, over a working
// buffer of numRanks * blockCount elements with rank r's block at blockPosition(h, form, r).
std::vector<Step> blockSteps(const topo::Hierarchy& h, Collective coll, BlockForm form, int rank,
                             size_t blockCount);
size_t blockPosition(const topo::Hierarchy& h, BlockForm form, int rank);

// The one-step flat schedules over the whole communicator of `nranks`.
std::vector<Step> flatAllReduceSteps(size_t count);
std::vector<Step> flatBlockSteps(Collective kind, int rank, int nranks, size_t blockCount);

}  // namespace strata::plan
