// The reduce-scatter's and all-gather's cost model (blocks_cost.h). Times in microseconds, sizes
// in bytes; the link arithmetic is cost_model.cc's (cost_detail.h).
#include "decompose/blocks_cost.h"

#include <limits>
#include <numeric>
#include <string>
#include <vector>

#include "decompose/cost_detail.h"

namespace strata::plan {
namespace {

using detail::linkFor;
using detail::ringFraction;
using detail::stageLink;

// One ring (or shm) reduce-scatter or all-gather over groups of g ranks, each rank's range
// `range` bytes, on a fabric of `traits` over `rawLink`, `sharing` groups per NIC.
StageCost blockStage(Collective coll, const std::string& where, int g, double range,
                     const FabricTraits& traits, const topo::LinkModel& rawLink, int sharing,
                     const CostParams& params) {
  StageCost c;
  c.label = std::string(collectiveName(coll)) + "@" + where;
  c.groupSize = g;
  c.bytes = range;
  if (g <= 1) {
    c.algorithm = "none";  // a group of one moves nothing
    return c;
  }
  const bool rs = coll == Collective::kReduceScatter;
  c.bytesMoved = ringFraction(g) * range;
  if (traits.cost == CostStyle::kSharedSlots) {
    // Shared slots: the link as it is (no message fabric's hints), never shared.
    c.algorithm = "shm";
    c.us = rs ? detail::shmReduceScatterUs(g, range, rawLink, params)
              : detail::shmAllGatherUs(g, range, rawLink);
    return c;
  }
  const topo::LinkModel link = linkFor(rawLink, traits);
  c.algorithm = "ring";
  c.us = rs ? ringReduceScatterUs(g, range, link, sharing, params)
            : ringAllGatherUs(g, range, link, sharing);
  return c;
}

std::vector<StageCost> flatStages(const topo::Hierarchy& h, Collective coll, double bytes,
                                  const CostParams& params) {
  std::vector<int> all(h.numLevels());
  std::iota(all.begin(), all.end(), 0);
  return {blockStage(coll, "all", h.numRanks(), bytes, traitsOf(params.fabrics, params.flatFabric),
                     stageLink(h, all), 1, params)};
}

// The stages schedule.cc's reduceScatterSteps runs: level l over width(l) ranks, on the range
// the levels below left; an all-gather runs them in reverse.
std::vector<StageCost> hierarchicalStages(const topo::Hierarchy& h, Collective coll, double bytes,
                                          const CostParams& params) {
  std::vector<StageCost> stages;
  double range = bytes;
  for (int l = 0; l < h.numLevels(); ++l) {
    Stage s;
    s.levels = {l};
    const int g = h.width(l);
    stages.push_back(blockStage(coll, h.level(l).name, g, range,
                                traitsOf(params.fabrics, stageFabric(h, s)), stageLink(h, {l}),
                                detail::stageSharing(h, s), params));
    range /= g;
  }
  if (coll == Collective::kAllGather) return {stages.rbegin(), stages.rend()};
  return stages;
}

}  // namespace

Prediction predictBlocks(const topo::Hierarchy& h, Collective coll, BlockForm form, double bytes,
                         const CostParams& params) {
  Prediction out;
  if (form == BlockForm::kHierarchical && !hierarchicalBlocksPossible(h)) {
    out.totalUs = out.serialUs = std::numeric_limits<double>::infinity();
    return out;
  }
  out.stages = form == BlockForm::kFlat ? flatStages(h, coll, bytes, params)
                                        : hierarchicalStages(h, coll, bytes, params);
  for (const StageCost& c : out.stages) out.totalUs += c.us;
  out.serialUs = out.totalUs;
  return out;
}

}  // namespace strata::plan
