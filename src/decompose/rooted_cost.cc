// The rooted collectives' cost model and choice (rooted_cost.h). Times in microseconds, sizes in
// bytes; the link arithmetic is cost_model.cc's (cost_detail.h).
#include "decompose/rooted_cost.h"

#include <numeric>
#include <string>
#include <utility>
#include <vector>

#include "decompose/cost_detail.h"

namespace strata::plan {
namespace {

using detail::alphaUs;
using detail::betaEffUsPerByte;
using detail::linkFor;
using detail::reduceUs;
using detail::ringFraction;
using detail::stageLink;

// Where a stage runs: how its fabric is costed, over which link, shared by how many groups.
struct Place {
  std::string name;  // the level's name, or "all" for the whole communicator
  bool shm = false;  // shared slots (the shm fabric) rather than messages
  topo::LinkModel link;
  int sharing = 1;
};

// One level's groups on the level's own fabric.
Place levelPlace(const topo::Hierarchy& h, int l, int sharing, const CostParams& params) {
  const FabricTraits& fabric = traitsOf(params.fabrics, h.level(l).fabric);
  Place p;
  p.name = h.level(l).name;
  p.shm = fabric.cost == CostStyle::kSharedSlots;
  p.link = p.shm ? stageLink(h, {l}) : linkFor(stageLink(h, {l}), fabric);
  p.sharing = sharing;
  return p;
}

// The whole communicator on the flat fabric, every message assumed to cross the slowest of
// `levels`, unshared (as the allreduce's passthrough).
Place flatPlace(const topo::Hierarchy& h, const std::vector<int>& levels,
                const CostParams& params) {
  Place p;
  p.name = "all";
  p.link = linkFor(stageLink(h, levels), traitsOf(params.fabrics, params.flatFabric));
  return p;
}

// ceil(log2 g): the rounds of a binomial tree.
int binomialRounds(int g) {
  int rounds = 0;
  while ((1LL << rounds) < g) ++rounds;
  return rounds;
}

// One stage of `kind` over groups of g ranks moving a range of n bytes (rooted_cost.h has the
// formulas). bytesMoved is what the busiest rank sends.
StageCost stageCost(Collective kind, const Place& p, int g, double n, const CostParams& params) {
  StageCost c;
  c.label = std::string(collectiveName(kind)) + "@" + p.name;
  c.groupSize = g;
  c.bytes = n;
  if (g <= 1 && kind != Collective::kSend) {
    c.algorithm = "none";  // a group of one moves nothing
    return c;
  }
  const double a = alphaUs(p.link), b = betaEffUsPerByte(p.link, p.sharing);
  const double f = ringFraction(g);
  if (p.shm) {
    c.algorithm = "shm";
    const double slotB = betaEffUsPerByte(p.link, 1);
    switch (kind) {
      case Collective::kBroadcast:
        c.us = a * g + 2 * n * slotB;
        c.bytesMoved = n;
        return c;
      case Collective::kReduce:
        c.us = detail::shmAllReduce(g, n, p.link, params).us;
        c.bytesMoved = n;
        return c;
      case Collective::kReduceScatter:
        c.us = detail::shmReduceScatterUs(g, n, p.link, params);
        c.bytesMoved = f * n;
        return c;
      default:  // scatter, gather, all-gather: n/g copied one way, n the other
        c.us = detail::shmAllGatherUs(g, n, p.link);
        c.bytesMoved = kind == Collective::kGather ? n / g : f * n;
        return c;
    }
  }
  switch (kind) {
    case Collective::kBroadcast:
    case Collective::kReduce: {
      const int rounds = binomialRounds(g);
      const bool reduce = kind == Collective::kReduce;
      c.algorithm = "binomial";
      // Each round moves the whole range one hop; a reduce also combines it on arrival.
      c.us = rounds * (a + n * b + (reduce ? reduceUs(n, params) : 0));
      c.bytesMoved = reduce ? n : rounds * n;  // the broadcast's root sends every round
      return c;
    }
    case Collective::kScatter:
    case Collective::kGather:
      c.algorithm = "linear";
      c.us = (g - 1) * a + f * n * b;
      c.bytesMoved = kind == Collective::kScatter ? f * n : n / g;
      return c;
    case Collective::kReduceScatter:
      c.algorithm = "ring";
      c.us = ringReduceScatterUs(g, n, p.link, p.sharing, params);
      c.bytesMoved = f * n;
      return c;
    case Collective::kAllGather:
      c.algorithm = "ring";
      c.us = ringAllGatherUs(g, n, p.link, p.sharing);
      c.bytesMoved = f * n;
      return c;
    default:  // send
      c.algorithm = "p2p";
      c.us = a + n * b;
      c.bytesMoved = n;
      return c;
  }
}

std::vector<StageCost> treeStages(const topo::Hierarchy& h, Collective coll, double bytes,
                                  const CostParams& params) {
  const bool bcast = coll == Collective::kBroadcast;
  const int k = h.numLevels();
  // A root past a level's width reaches the effective root first (or last): a send within the
  // group just above the irregular levels, costed for every root as the worst case.
  std::vector<int> irregular;
  for (int l = 0; l < k; ++l) {
    if (h.maxChildren(l) != h.width(l)) irregular.push_back(l);
  }
  std::vector<int> hopLevels(irregular.empty() ? 0 : irregular.back() + 1);
  std::iota(hopLevels.begin(), hopLevels.end(), 0);
  std::vector<StageCost> stages;
  if (!irregular.empty() && bcast) {
    stages.push_back(
        stageCost(Collective::kSend, flatPlace(h, hopLevels, params), 2, bytes, params));
  }
  // One group per level-l group takes part; the biggest sets the time. At the top only one
  // group runs, so it has the NICs to itself.
  for (int i = 0; i < k; ++i) {
    const int l = bcast ? k - 1 - i : i;
    stages.push_back(stageCost(coll, levelPlace(h, l, 1, params), h.maxChildren(l), bytes, params));
  }
  if (!irregular.empty() && !bcast) {
    stages.push_back(
        stageCost(Collective::kSend, flatPlace(h, hopLevels, params), 2, bytes, params));
  }
  return stages;
}

std::vector<StageCost> shardedStages(const topo::Hierarchy& h, Collective coll, double bytes,
                                     const CostParams& params) {
  const bool bcast = coll == Collective::kBroadcast;
  std::vector<StageCost> up, down;  // innermost first; outermost first
  double range = bytes;             // each rank's range entering level l
  for (int l = 0; l < h.numLevels(); ++l) {
    Stage s;
    s.levels = {l};
    const Place p = levelPlace(h, l, detail::stageSharing(h, s), params);
    const int g = h.width(l);
    up.push_back(
        stageCost(bcast ? Collective::kScatter : Collective::kReduceScatter, p, g, range, params));
    down.push_back(
        stageCost(bcast ? Collective::kAllGather : Collective::kGather, p, g, range, params));
    range /= g;
  }
  up.insert(up.end(), down.rbegin(), down.rend());
  return up;
}

}  // namespace

Prediction predictRooted(const topo::Hierarchy& h, Collective coll, RootedForm form, double bytes,
                         const CostParams& params) {
  Prediction out;
  if (form == RootedForm::kFlat) {
    std::vector<int> all(h.numLevels());
    std::iota(all.begin(), all.end(), 0);
    out.stages.push_back(stageCost(coll, flatPlace(h, all, params), h.numRanks(), bytes, params));
  } else if (form == RootedForm::kTree) {
    out.stages = treeStages(h, coll, bytes, params);
  } else {
    out.stages = shardedStages(h, coll, bytes, params);
  }
  for (const StageCost& c : out.stages) out.totalUs += c.us;
  return out;
}

RootedChoice chooseRooted(const topo::Hierarchy& h, Collective coll, double bytes,
                          const CostParams& params) {
  RootedChoice best{RootedForm::kFlat, predictRooted(h, coll, RootedForm::kFlat, bytes, params)};
  for (RootedForm form : {RootedForm::kTree, RootedForm::kSharded}) {
    Prediction p = predictRooted(h, coll, form, bytes, params);
    if (p.totalUs < best.prediction.totalUs) best = RootedChoice{form, std::move(p)};
  }
  return best;
}

}  // namespace strata::plan
