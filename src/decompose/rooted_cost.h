// The cost of the rooted collectives' forms (rooted.h) and the planner's choice between them.
// Pure code, with the conventions of cost_model.h (alpha-beta per level's link, fabric traits,
// shared NICs). Stage costs over a group of g ranks moving n bytes, by message passing:
//   binomial broadcast        ceil(log2 g) * (alpha + n * beta_eff)
//   binomial reduce           ceil(log2 g) * (alpha + n * beta_eff + n / gamma)
//   scatter, gather           (g-1) * alpha + (g-1)/g * n * beta_eff
//   reduce-scatter, all-gather the ring formulas of cost_model.h
//   send                      alpha + n * beta
// and on a fabric of shared slots (shm), with a barrier of alpha per member:
//   broadcast  g * alpha + 2 n * beta          (the root copies in, every member copies out)
//   reduce     the shm allreduce               (the root's copy-out costs what everyone's does)
//   scatter, gather, all-gather  g * alpha + (n/g + n) * beta;  reduce-scatter as cost_model.cc
// The flat form runs on params.flatFabric over the slowest link, unshared, as the allreduce's
// passthrough does; it is costed as a binomial tree. The tree form runs each level on its own
// fabric and link; only one group takes part at the top, so the NICs are not shared. The
// sharded form's groups cut their range into width(l) blocks, as the allreduce's, and its
// top-level stages share the NICs as the allreduce's top stage does.
#pragma once

#include "common/collective.h"
#include "decompose/cost_model.h"
#include "decompose/rooted.h"
#include "topology/hierarchy.h"

namespace strata::plan {

// The predicted time of a broadcast or reduce (coll) of `bytes` under `form`, stage by stage:
// "broadcast@all" (flat), "broadcast@network", "broadcast@node" (tree),
// "scatter@node", ..., "allgather@node" (sharded broadcast), "reducescatter@node", ...,
// "gather@node" (sharded reduce). The costs do not depend on the root, with one exception
// costed as the worst case: on an irregular hierarchy the tree adds "send@all", the hop between
// a root past some level's width and the effective root (rooted.h), over the irregular levels.
Prediction predictRooted(const topo::Hierarchy& h, Collective coll, RootedForm form, double bytes,
                         const CostParams& params);

struct RootedChoice {
  RootedForm form = RootedForm::kFlat;
  Prediction prediction;
};

// The cheapest form for a broadcast or reduce of `bytes`; ties go to the earlier of flat, tree,
// sharded (the simpler schedule).
RootedChoice chooseRooted(const topo::Hierarchy& h, Collective coll, double bytes,
                          const CostParams& params);

}  // namespace strata::plan
