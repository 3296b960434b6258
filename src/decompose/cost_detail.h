// Internals of the cost model that cost_model.cc and rooted_cost.cc share: the link arithmetic
// and the shm fabric's formulas. Conventions as in cost_model.cc: times in microseconds, sizes
// in bytes, a link without usable numbers costed as a slow network port. Not for callers outside
// src/decompose.
#pragma once

#include <vector>

#include "common/fabric_traits.h"
#include "decompose/cost_model.h"
#include "decompose/plan.h"
#include "topology/hierarchy.h"

namespace strata::plan::detail {

struct AllReduceCost {
  double us = 0;
  double bytesSent = 0;  // by the busiest rank
};

// alpha: the link's latency; beta_eff: us per byte, times `sharing` groups on one link.
double alphaUs(const topo::LinkModel& link);
double betaEffUsPerByte(const topo::LinkModel& link, int sharing);
// The local reduction of `bytes` at params.reduceGBps (0 when not modelled).
double reduceUs(double bytes, const CostParams& params);
// (g-1)/g: the share of its range a ring member sends in a reduce-scatter or all-gather.
double ringFraction(int g);

// The shm fabric's collectives over g members (shared slots and a barrier of alpha per member).
AllReduceCost shmAllReduce(int g, double n, const topo::LinkModel& link, const CostParams& params);
double shmReduceScatterUs(int g, double n, const topo::LinkModel& link, const CostParams& params);
double shmAllGatherUs(int g, double n, const topo::LinkModel& link);

// The link a message-passing `fabric` leaves of `link` (its shared-memory cost hints applied).
topo::LinkModel linkFor(const topo::LinkModel& link, const FabricTraits& fabric);
// The link of a stage over `levels`: the slowest bandwidth and the largest latency among them.
topo::LinkModel stageLink(const topo::Hierarchy& h, const std::vector<int>& levels);
// How many groups of a stage over the top level push through one NIC at once (1 below the top).
int stageSharing(const topo::Hierarchy& h, const Stage& s);

}  // namespace strata::plan::detail
