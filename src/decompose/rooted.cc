// Broadcast and reduce schedules (rooted.h): the flat, tree and sharded forms. Every form names
// its stage groups as the allreduce does (topo::stageGroup), so a step's `root` is the root
// member's coordinate at the step's level.
#include "decompose/rooted.h"

#include <utility>

namespace strata::plan {
namespace {

// A step over the whole range [0, count).
Step wholeStep(Collective kind, int level, size_t count, int index, int root) {
  Step s;
  s.kind = kind;
  s.level = level;
  s.count = count;
  s.index = index;
  s.root = root;
  return s;
}

// The tree form's effective root: the rank whose coordinates are `root`'s where below the
// level's width and 0 where not. It exists: the top coordinate is always below the width, and
// every group has at least width children at each level beneath it. Its every coordinate is
// below the width, so each of its lower-coordinate sets names a stage group.
int effectiveRoot(const topo::Hierarchy& h, int root) {
  for (int q = 0; q < h.numRanks(); ++q) {
    bool match = true;
    for (int l = 0; l < h.numLevels() && match; ++l) {
      const int c = h.coord(root, l);
      match = h.coord(q, l) == (c < h.width(l) ? c : 0);
    }
    if (match) return q;
  }
  return root;  // unreachable on a well-formed hierarchy
}

// Whether `a` and `b` have the same coordinates on every level below `level`.
bool sameBelow(const topo::Hierarchy& h, int a, int b, int level) {
  for (int l = 0; l < level; ++l) {
    if (h.coord(a, l) != h.coord(b, l)) return false;
  }
  return true;
}

// Broadcast top-down (reduce bottom-up) of the whole range. Invariant of the broadcast: after
// the step at level l, every rank whose coordinates below l equal E's holds the data, so the
// next level's roots (coordinate at l-1 equal to E's) hold it; the reduce mirrors it: after
// level l, the rank with E's coordinates up to l holds the sum over its level-l group.
std::vector<Step> treeSteps(const topo::Hierarchy& h, Collective coll, int rank, int root,
                            size_t count) {
  const bool bcast = coll == Collective::kBroadcast;
  const int e = effectiveRoot(h, root);
  std::vector<Step> steps;
  // The hop between the root and E: before the broadcast, after the reduce.
  auto hop = [&](int from, int to) {
    if (from == to) return;
    if (rank == from) steps.push_back(wholeStep(Collective::kSend, kFlatLevel, count, rank, to));
    if (rank == to) steps.push_back(wholeStep(Collective::kRecv, kFlatLevel, count, rank, from));
  };
  if (bcast) hop(root, e);
  const int k = h.numLevels();
  for (int i = 0; i < k; ++i) {
    const int l = bcast ? k - 1 - i : i;
    if (!sameBelow(h, rank, e, l)) continue;  // a group off E's path: it takes no part here
    steps.push_back(wholeStep(coll, l, count, h.coord(rank, l), h.coord(e, l)));
  }
  if (!bcast) hop(e, root);
  return steps;
}

// Scatters innermost first then all-gathers outermost first (broadcast), or reduce-scatters
// innermost first then gathers outermost first (reduce), on the allreduce's blocks. A level-l
// scatter or gather runs only in the root's level-l group (coordinates above l equal the
// root's), with the root at the member whose coordinate at l is the root's: that member lies in
// the root's level-(l-1) group, which is where the scatter below left the range (and where the
// gather above must deliver it).
std::vector<Step> shardedSteps(const topo::Hierarchy& h, Collective coll, int rank, int root,
                               size_t count) {
  const bool bcast = coll == Collective::kBroadcast;
  const std::vector<Step> chain = reduceScatterChain(h, rank, count);
  auto rooted = [&](Step s, Collective kind) {
    s.kind = kind;
    s.root = h.coord(root, s.level);
    return s;
  };
  auto inRootsGroup = [&](const Step& s) {
    return h.group(rank, s.level) == h.group(root, s.level);
  };
  std::vector<Step> steps;
  for (const Step& s : chain) {
    if (!bcast) {
      steps.push_back(s);  // the reduce-scatter, as the allreduce runs it
    } else if (inRootsGroup(s)) {
      steps.push_back(rooted(s, Collective::kScatter));
    }
  }
  for (auto it = chain.rbegin(); it != chain.rend(); ++it) {
    if (bcast) {
      Step s = *it;
      s.kind = Collective::kAllGather;
      steps.push_back(std::move(s));
    } else if (inRootsGroup(*it)) {
      steps.push_back(rooted(*it, Collective::kGather));
    }
  }
  return steps;
}

}  // namespace

const char* rootedFormName(Collective coll, RootedForm form) {
  switch (form) {
    case RootedForm::kFlat:
      return "flat";
    case RootedForm::kTree:
      return "tree";
    case RootedForm::kSharded:
      return coll == Collective::kReduce ? "reducescatter-gather" : "scatter-allgather";
  }
  return "unknown";
}

std::vector<Step> rootedSteps(const topo::Hierarchy& h, Collective coll, RootedForm form, int rank,
                              int root, size_t count) {
  if (count == 0 || (coll != Collective::kBroadcast && coll != Collective::kReduce)) return {};
  switch (form) {
    case RootedForm::kFlat:
      return {wholeStep(coll, kFlatLevel, count, rank, root)};
    case RootedForm::kTree:
      return treeSteps(h, coll, rank, root, count);
    case RootedForm::kSharded:
      return shardedSteps(h, coll, rank, root, count);
  }
  return {};
}

}  // namespace strata::plan
