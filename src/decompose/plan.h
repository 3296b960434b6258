// Plans: which decomposition an allreduce uses. The planner chooses one per message size; a
// plan file can pin them. Pure data, printable and readable back (plan_file.h).
//
// A staged plan is a list of stages S0..Sm, each a set of hierarchy levels whose groups are
// merged into one group for that stage:
//   reduce-scatter over S0, ..., reduce-scatter over S(m-1), allreduce over Sm,
//   all-gather over S(m-1), ..., all-gather over S0.
// Every level appears in exactly one stage. A stage over several levels runs on the ranks that
// differ only in those levels' coordinates (e.g. "nvlink+node": the whole node). Examples:
//   flat ring    [all levels] with Algorithm::kRing (reduce-scatter then all-gather)
//   two-level    [intra-node levels] [network]        (Horovod's hierarchical allreduce)
//   blueconnect  [level 0] [level 1] ... [top]         (one stage per level, innermost first)
//   reordered    [network] [node] ...                  (regular hierarchies only)
// A passthrough plan is one MPI_Allreduce on the whole communicator.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "common/wire.h"
#include "topology/hierarchy.h"

namespace strata::plan {

// The allreduce stage's algorithm: the fabric's own allreduce, or its reduce-scatter then its
// all-gather (a ring on every fabric we have). Reduce-scatter and all-gather stages use kAuto.
enum class Algorithm { kAuto, kRing };
const char* algorithmName(Algorithm a);  // "auto", "ring": the plan file's words
// The algorithm a plan file names; false for any other word.
bool parseAlgorithm(const std::string& word, Algorithm* out);

struct Stage {
  std::vector<int> levels;  // hierarchy level indices, ascending
  std::string fabric;       // empty: the fabric of the stage's outermost level (it spans them all)
  Algorithm algorithm = Algorithm::kAuto;  // the allreduce stage's; the others' are kAuto
  // The pipeline piece (planPieceBytes), from a plan file's chunk_bytes or the planner's
  // choice; 0: STRATA_PIPELINE_BYTES when it gives a size, else no pieces.
  size_t chunkBytes = 0;
  // The type float32 sums travel in over this stage (a plan file's `wire:` key). Unset: as
  // STRATA_COMPRESS says for a stage whose groups cross hosts, float32 otherwise (core decides,
  // it knows the hosts).
  std::optional<WireType> wire;
};

struct Plan {
  std::string name;          // "passthrough", "flat-ring", "two-level", "blueconnect", ...
  bool passthrough = false;  // one MPI_Allreduce on the whole communicator; no stages
  std::vector<Stage> stages;
  std::string note;  // why this plan (e.g. "irregular layout: levels kept innermost first")
};

// A plan's own pipeline piece: the smallest chunk_bytes its stages set (a plan file's, or the
// planner's choice under STRATA_PIPELINE_BYTES=auto); 0 when none sets one.
size_t planPieceBytes(const Plan& p);
// Whether the pieces of an allreduce under `p` overlap (core/lower.cc: Lowering::allReducePass): the
// slow top stage of piece k stays in flight while the stages below run pieces k-1 and k+1.
// Needs a separate allreduce stage: not a passthrough, not one stage, not a ring top (whose
// reduce-scatter and all-gather are the whole call). Otherwise pieces run one after another.
bool piecesOverlap(const Plan& p);

// "reduce_scatter@node, allreduce@network, all_gather@node", or "passthrough".
std::string describePlan(const topo::Hierarchy& h, const Plan& p);
// The stage's level names joined by '+', e.g. "nvlink+node".
std::string stageName(const topo::Hierarchy& h, const Stage& s);
// The fabric a stage runs on: its own, else that of its outermost level (which it spans).
const std::string& stageFabric(const topo::Hierarchy& h, const Stage& s);

// Whether `p` is a valid allreduce over `h`: every level in exactly one stage, stages in
// ascending order inside, a permuted order only on a regular hierarchy. Returns the problem.
Status checkPlan(const topo::Hierarchy& h, const Plan& p);

// The hierarchy a staged plan runs on: one level per stage, in the plan's order, so the
// existing schedule code (allReduceSteps) runs it. Level j's groups are the ranks that share
// their coordinates on every level not in S0..Sj. Its levels are named after the stages
// (stageName) and carry the slowest link among the merged levels.
StatusOr<topo::Hierarchy> planHierarchy(const topo::Hierarchy& h, const Plan& p);

}  // namespace strata::plan
