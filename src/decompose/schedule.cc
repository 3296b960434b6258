#include "decompose/schedule.h"

#include "decompose/shard.h"

namespace strata::plan {
namespace {

// A reduce-scatter/all-gather step over `range` within a group of `members`, of which the
// first `holders` receive a block (the rest get empty blocks at the end of the range).
Step blockStep(Collective kind, int level, Block range, int index, int members, int holders) {
  Step s;
  s.kind = kind;
  s.level = level;
  s.offset = range.offset;
  s.count = range.count;
  s.index = index;
  s.counts.resize(members);
  s.displs.resize(members);
  for (int j = 0; j < members; ++j) {
    Block b = j < holders ? splitBlock(0, range.count, holders, j) : Block{range.count, 0};
    s.counts[j] = b.count;
    s.displs[j] = b.offset;
  }
  return s;
}

}  // namespace

bool hierarchicalBlocksPossible(const topo::Hierarchy& h) {
  return h.numLevels() > 1 && h.isRegular();
}

std::vector<Step> reduceScatterChain(const topo::Hierarchy& h, int rank, size_t count) {
  std::vector<Step> chain;
  Block range{0, count};
  for (int l = 0; l < h.numLevels(); ++l) {
    if (range.count == 0) break;  // an empty shard: nothing to do at this level or above
    const topo::StageGroup g = topo::stageGroup(h, l, rank);
    if (!g.member) break;  // this rank holds no shard above level l-1
    // At the top level width == g.size (one group), so every member holds a block there.
    chain.push_back(blockStep(Collective::kReduceScatter, l, range, g.index, g.size, h.width(l)));
    if (g.index >= h.width(l)) break;  // an empty block: it sits out the levels above
    range = splitBlock(range.offset, range.count, h.width(l), g.index);
  }
  return chain;
}

std::vector<Step> allReduceSteps(const topo::Hierarchy& h, int rank, size_t count, bool ringTop) {
  const std::vector<Step> chain = reduceScatterChain(h, rank, count);
  const int top = h.numLevels() - 1;
  // The chain reaches the top level only for ranks that hold a non-empty shard below it.
  const bool reachedTop = static_cast<int>(chain.size()) == top + 1;
  const std::vector<Step> down(chain.begin(), reachedTop ? chain.end() - 1 : chain.end());
  std::vector<Step> steps = down;
  if (reachedTop) {
    Step s = chain.back();
    s.finishesReduction = true;
    if (ringTop) {
      steps.push_back(s);
      s.kind = Collective::kAllGather;
      s.finishesReduction = false;
    } else {
      s.kind = Collective::kAllReduce;
      s.counts.clear();
      s.displs.clear();
    }
    steps.push_back(std::move(s));
  }
  // All-gathers mirror the reduce-scatters exactly, innermost last.
  for (auto it = down.rbegin(); it != down.rend(); ++it) {
    Step s = *it;
    s.kind = Collective::kAllGather;
    steps.push_back(std::move(s));
  }
  return steps;
}

size_t permutedPosition(const topo::Hierarchy& h, int rank) {
  // Mixed radix with level 0 most significant: the order in which the reduce-scatters, innermost
  // first, hand out blocks.
  size_t pos = 0;
  for (int l = 0; l < h.numLevels(); ++l) {
    pos = pos * static_cast<size_t>(h.width(l)) + static_cast<size_t>(h.coord(rank, l));
  }
  return pos;
}

std::vector<Step> reduceScatterSteps(const topo::Hierarchy& h, int rank, size_t blockCount) {
  std::vector<Step> steps;
  Block range{0, blockCount * static_cast<size_t>(h.numRanks())};
  for (int l = 0; l < h.numLevels(); ++l) {
    const topo::StageGroup g = topo::stageGroup(h, l, rank);
    steps.push_back(blockStep(Collective::kReduceScatter, l, range, g.index, g.size, g.size));
    range = splitBlock(range.offset, range.count, g.size, g.index);
  }
  return steps;
}

std::vector<Step> allGatherSteps(const topo::Hierarchy& h, int rank, size_t blockCount) {
  std::vector<Step> steps = reduceScatterSteps(h, rank, blockCount);
  std::vector<Step> reversed(steps.rbegin(), steps.rend());
  for (Step& s : reversed) s.kind = Collective::kAllGather;
  return reversed;
}

std::vector<Step> flatAllReduceSteps(size_t count) {
  Step s;
  s.kind = Collective::kAllReduce;
  s.count = count;
  s.finishesReduction = true;
  return {s};
}

std::vector<Step> flatBlockSteps(Collective kind, int rank, int nranks, size_t blockCount) {
  const Block range{0, blockCount * static_cast<size_t>(nranks)};
  return {blockStep(kind, kFlatLevel, range, rank, nranks, nranks)};
}

const char* blockFormName(BlockForm form) {
  return form == BlockForm::kHierarchical ? "hierarchical" : "flat";
}

std::vector<Step> blockSteps(const topo::Hierarchy& h, Collective coll, BlockForm form, int rank,
                             size_t blockCount) {
  if (form == BlockForm::kFlat) return flatBlockSteps(coll, rank, h.numRanks(), blockCount);
  return coll == Collective::kReduceScatter ? reduceScatterSteps(h, rank, blockCount)
                                            : allGatherSteps(h, rank, blockCount);
}

size_t blockPosition(const topo::Hierarchy& h, BlockForm form, int rank) {
  return form == BlockForm::kHierarchical ? permutedPosition(h, rank) : static_cast<size_t>(rank);
}

}  // namespace strata::plan
