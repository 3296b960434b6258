// The cost model: an alpha-beta estimate of a plan's time, per stage. Pure code.
//
// Each level's link gives alpha (latency, us) and beta (us per byte = 1 / bandwidth). Stage
// costs over a group of g ranks moving n bytes:
//   ring reduce-scatter / all-gather      (g-1) * alpha + (g-1)/g * n * beta_eff
//   ring allreduce                         2 (g-1) * alpha + 2 (g-1)/g * n * beta_eff
//   recursive halving/doubling allreduce   2 log2(p) * alpha + 2 (p-1)/p * n * beta_eff, with p
//                                          the largest power of two <= g; the g-p extra ranks
//                                          fold in and out first: + 2 (alpha + n * beta_eff)
//   direct allreduce (small messages)      2 * alpha + (g-1) * n * beta_eff
//   plus the local reduction at gamma bytes/s: (g-1)/g * n / gamma for reduce-scatters and ring
//   allreduces, (g-1) * n / gamma for direct (each rank combines every vector it receives).
// beta_eff = beta * sharing, where sharing is how many groups of the stage push through one
// shared link (the host's NICs) at once. A passthrough allreduce is the best of the allreduce
// formulas over the whole communicator on the slowest link.
//
// Step overhead (CostParams::stepOverheadUs, o): a fixed cost per communication step that no
// link latency shows, e.g. ranks that outnumber the cores waiting for a scheduler slice, or a
// progress engine's round. predict() adds o to the alpha of every stage's link, so it counts
// once per alpha in the formulas above: (g-1) per ring reduce-scatter or all-gather, 2 log2(p)
// (+2) for halving/doubling, log2(p) (+2) for recursive doubling, g-1 for direct, and two per
// shm barrier. 0 (the default) leaves the model as it was; strata-tune fits it to its timings.
// The rooted forms (rooted_cost.h) do not count it.
//
// Compression (CostParams::compress, a stage's `wire`): a float32 sum over a stage that travels
// as fp16 or bf16 is costed by the same formulas on n/2 bytes (moved and combined as 2-byte
// values), plus 1.5 n / gamma for the conversions to and from the narrow type, plus, for fp16,
// one 4-byte allreduce of the group to agree on the scale (common/wire.h). Without link kinds,
// a stage spans hosts when it holds the top level of a hierarchy of several levels.
// Pipelining (core/lower.cc: Lowering::allReducePass): a staged allreduce cut into P pieces of n/P
// bytes whose pieces overlap (plan.h: piecesOverlap) takes
//   L + T + (P-1) * max(T, L)
// with T the top (allreduce) stage's time for one piece and L the other stages' (the
// reduce-scatters and all-gathers, which the calling thread runs for pieces k-1 and k+1 while
// piece k's top stage is in flight). Every piece pays its stages' latencies, so small pieces
// lose; the planner tries pieces from kMinPipelineBytes up.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <vector>

#include "common/fabric_traits.h"
#include "decompose/plan.h"
#include "topology/hierarchy.h"

namespace strata::plan {

struct CostParams {
  double reduceGBps = 10.0;  // gamma: local reduction throughput (bytes combined per second)
  // The fabrics' traits (fabrics/registry.h: allTraits()): how each fabric is costed. A fabric
  // missing here is costed as message passing with no cost hints.
  std::vector<FabricTraits> fabrics;
  std::string flatFabric = "mpi";  // the fabric a passthrough allreduce runs on
  // STRATA_PIPELINE_BYTES: unset = auto (choosePlan picks each plan's piece, planner.h), 0 =
  // no pieces, a size = that piece for every plan that sets none of its own.
  std::optional<size_t> pipelineBytes;
  // o: microseconds added to every step's alpha (the header comment); >= 0.
  double stepOverheadUs = 0;
  // STRATA_COMPRESS: the type float32 sums travel in over stages whose groups span hosts
  // (a stage's own `wire` wins). Predictions are for float32 sums.
  WireType compress = WireType::kNone;
};

struct StageCost {
  std::string label;  // "reduce_scatter@node"
  std::string algorithm;
  int groupSize = 0;
  double bytes = 0;       // bytes of the stage's range per rank
  double bytesMoved = 0;  // bytes each rank sends in this stage
  double us = 0;
  std::string wire;  // "fp16"/"bf16" when the stage is compressed, else empty
};

struct Prediction {
  std::vector<StageCost> stages;  // each stage's time summed over the pieces
  double totalUs = 0;             // the call's time: with overlapping pieces, less than the sum
  double serialUs = 0;            // the stages' sum
  int pieces = 1;                 // pipeline pieces
  double pieceBytes = 0;          // bytes of each (0: one piece)
};

// Costs of single operations (exposed for tests and strata-plan).
double ringReduceScatterUs(int g, double bytes, const topo::LinkModel& link, int sharing,
                           const CostParams& params);
double ringAllGatherUs(int g, double bytes, const topo::LinkModel& link, int sharing);
// The cheapest allreduce algorithm for g ranks and n bytes, and its name.
double bestAllReduceUs(int g, double bytes, const topo::LinkModel& link, int sharing,
                       const CostParams& params, std::string* algorithm);

// The predicted time of `plan` for an allreduce of `bytes` over `h`, in the pieces the runtime
// would cut it into (plan.h: planPieceBytes, else params.pipelineBytes). The plan must be valid.
Prediction predict(const topo::Hierarchy& h, const Plan& plan, double bytes,
                   const CostParams& params);

}  // namespace strata::plan
