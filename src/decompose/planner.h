// The planner: enumerates the candidate plans for a hierarchy and picks the cheapest for a
// message size by the cost model. Pure: `Plan choosePlan(const Hierarchy&, bytes)`.
#pragma once

#include <cstddef>
#include <vector>

#include "decompose/blocks_cost.h"  // reduce-scatter and all-gather: predictBlocks
#include "decompose/cost_model.h"
#include "decompose/plan.h"
#include "decompose/rooted_cost.h"  // broadcast and reduce: chooseRooted
#include "decompose/schedule.h"     // reduce-scatter and all-gather: BlockForm

namespace strata::plan {

// Every candidate for `h`, each valid (checkPlan):
//   passthrough                 MPI_Allreduce on the whole communicator
//   flat-ring                   one stage over every level, reduce-scatter + all-gather
//   every split of the levels into consecutive stages, innermost first: one stage per level
//   is BlueConnect ("blueconnect"), the intra-node levels in one stage then the network is
//   Horovod's "two-level", fewer stages mean fewer latency terms for small messages;
//   on a regular hierarchy, also every order of those stages ("reordered").
//   The count is bounded, whatever a topology file describes: all splits up to kMaxSplitLevels
//   levels (beyond it, each single boundary and the one-stage-per-level split), and the orders
//   of splits of up to kMaxReorderedStages stages (a 20-level file once made 10^18 candidates).
//   A "flat" plan (one stage over every level on the outer level's fabric) is a candidate when
//   that fabric is not message passing; on one that is, it is the passthrough again.
inline constexpr int kMaxSplitLevels = 10;     // 2^9 splits
inline constexpr int kMaxReorderedStages = 4;  // 4! orders of one split
std::vector<Plan> candidatePlans(const topo::Hierarchy& h, const CostParams& params);

struct Choice {
  Plan plan;
  Prediction prediction;
};

// Size buckets: powers of two, so a training loop's few sizes map to a few decisions. Bucket b
// holds [2^b, 2^(b+1)) bytes (bucket 0 also holds 0 and 1); bucketBytes(b) is the size that
// stands for all of them (the geometric middle).
int sizeBucket(size_t bytes);
double bucketBytes(int bucket);

// The cheapest candidate for an allreduce of `bytes`, ties going to the earlier candidate.
// With params.pipelineBytes unset (STRATA_PIPELINE_BYTES=auto), each candidate whose pieces
// would overlap is also costed in pieces of kMinPipelineBytes, twice that, ... below `bytes`;
// the cheapest piece is set as the chosen plan's top-stage chunk_bytes (ties: fewer pieces).
// Smaller pieces than kMinPipelineBytes are not tried: each piece also pays a hand-off to the
// engine and a wake-up that the model does not cost, so on a fast link it would pick pieces too
// small. On netlab (2 x 2 ranks, 2 Gbit/s, 16 and 64 MiB; bench/results/2026-11-28-pipeline)
// pieces of 512 KiB to 2 MiB were within 2% of each other and 4-8 MiB 1-9% slower.
inline constexpr size_t kMinPipelineBytes = size_t{1} << 20;
Choice choosePlan(const topo::Hierarchy& h, double bytes, const CostParams& params);

// The piece choosePlan would give `p` (0: none, one piece is cheapest or the plan cannot
// overlap them), and its prediction.
Choice choosePieces(const topo::Hierarchy& h, const Plan& p, double bytes,
                    const CostParams& params);

// The form of a reduce-scatter or all-gather (`coll`) of `bytes` in all: the cheaper of flat and
// hierarchical by predictBlocks (blocks_cost.h), flat where the hierarchy does not admit the
// hierarchical form (hierarchicalBlocksPossible: one level, or an irregular layout). Ties go to
// flat, the form that can run straight between the caller's buffers without scratch copies
// (which the model does not cost).
BlockForm chooseBlocks(const topo::Hierarchy& h, Collective coll, double bytes,
                       const CostParams& params);

}  // namespace strata::plan
