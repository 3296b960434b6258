// The cost of a reduce-scatter or all-gather in each of its forms (schedule.h: BlockForm), and
// the planner's choice between them (planner.h: chooseBlocks). Pure code, with the conventions
// of cost_model.h: alpha-beta per level's link, fabric traits, shared NICs. `bytes` is the whole
// vector, every rank's block together (n ranks x block), as plan_book.cc passes it.
//
// Flat (flatBlockSteps): one collective over all n ranks on params.flatFabric (the flat group's
// fabric), every round assumed to cross the slowest level, unshared, as the allreduce's
// passthrough and flat ring are costed:
//   reduce-scatter   (n-1) * alpha + (n-1)/n * bytes * beta + (n-1)/n * bytes / gamma
//   all-gather       (n-1) * alpha + (n-1)/n * bytes * beta
// with alpha and beta of linkFor(stageLink(every level), flat fabric). On a flat fabric of
// shared slots (shm) the shm formulas of cost_model.cc over n members replace the ring's.
//
// Hierarchical (reduceScatterSteps, allGatherSteps; a regular hierarchy of several levels
// only): level l's groups of w_l = width(l) ranks each run one ring over the range left after
// the levels below, bytes / (w_0 * ... * w_{l-1}), on the level's own fabric and link (linkFor
// its traits; the shm formulas on shared slots), and the top level's groups share the hosts'
// NICs (stageSharing, as the allreduce's top stage):
//   reduce-scatter   sum over l = 0 .. k-1 (innermost first) of
//                      (w_l-1) * alpha_l + (w_l-1)/w_l * range_l * beta_l * sharing_l
//                      + (w_l-1)/w_l * range_l / gamma
//   all-gather       the same stages outermost first, without the reduction term.
// The bandwidth volumes telescope: sum_l (w_l-1)/w_l * range_l = (n-1)/n * bytes, the flat
// ring's. So the hierarchical form wins on latency ((sum w_l - 1) alphas against n-1) and where
// the inner links are faster than the slowest; the flat form wins where the inner links are not
// much faster than the top one and the top level's groups share a NIC (each then pays the
// sharing on its part, while the flat ring crosses each host boundary once per round).
//
// Not costed: the hierarchical form's copies of the blocks into and out of scratch in permuted
// order (core/prepare.cc: blocksProgram), which the flat form skips when it runs straight
// between the user's buffers. Ties therefore go to flat.
#pragma once

#include "common/collective.h"
#include "decompose/cost_model.h"
#include "decompose/schedule.h"
#include "topology/hierarchy.h"

namespace strata::plan {

// The predicted time of a reduce-scatter or all-gather (`coll`) of `bytes` in all under
// `form`, stage by stage: "reducescatter@all" (flat), "reducescatter@node", ... (hierarchical,
// innermost first; an all-gather's outermost first). A hierarchical form the hierarchy does not
// admit (hierarchicalBlocksPossible) has no stages and an infinite totalUs.
Prediction predictBlocks(const topo::Hierarchy& h, Collective coll, BlockForm form, double bytes,
                         const CostParams& params);

}  // namespace strata::plan
