// Simulates every rank's schedule in one process and checks the result against a direct sum.
// This proves the decomposition (shard ranges, widths on irregular trees, the permutation of
// the hierarchical reduce-scatter/all-gather) independently of MPI.
#include <catch2/catch.hpp>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "decompose/plan.h"
#include "decompose/planner.h"
#include "decompose/schedule.h"
#include "decompose/shard.h"
#include "topology/hierarchy.h"

using strata::Collective;
using strata::plan::Step;
using strata::topo::Hierarchy;
using strata::topo::Level;
using Buffers = std::vector<std::vector<int64_t>>;

namespace {

std::vector<Level> levelsNamed(std::vector<std::string> names) {
  std::vector<Level> levels;
  for (auto& n : names) levels.push_back(Level{n, "mpi"});
  return levels;
}

Hierarchy regular(const std::vector<int>& sizes) {
  std::vector<std::string> names;
  for (size_t l = 0; l < sizes.size(); ++l) names.push_back("l" + std::to_string(l));
  auto h = Hierarchy::regular(levelsNamed(names), sizes);
  REQUIRE(h.isOk());
  return h.value();
}

// Hosts given per rank; two levels: node (by host) and network.
Hierarchy byHost(const std::vector<std::string>& hosts) {
  std::vector<std::vector<std::string>> keys;
  for (auto& host : hosts) keys.push_back({host, ""});
  auto h = Hierarchy::fromKeys(levelsNamed({"node", "network"}), keys);
  REQUIRE(h.isOk());
  return h.value();
}

// Runs one phase (a step kind at a level) across all ranks: the ranks holding a matching step
// are grouped by stage group, every member must agree on the range, then the collective is
// applied to the buffers.
void runPhase(const Hierarchy& h, const std::vector<std::vector<Step>>& steps, Collective kind,
              int level, Buffers& buf) {
  std::map<int, std::vector<std::pair<int, const Step*>>> groups;  // color -> (rank, step)
  for (int r = 0; r < h.numRanks(); ++r) {
    for (const Step& s : steps[r]) {
      if (s.kind == kind && s.level == level) {
        auto g = strata::topo::stageGroup(h, level, r);
        REQUIRE(g.member);
        REQUIRE(g.index == s.index);
        groups[g.color].push_back({r, &s});
      }
    }
  }
  for (auto& [color, members] : groups) {
    const Step& first = *members[0].second;
    const int size = strata::topo::stageGroup(h, level, members[0].first).size;
    REQUIRE(static_cast<int>(members.size()) == size);  // every member takes part
    for (auto& [r, s] : members) {
      REQUIRE(s->offset == first.offset);
      REQUIRE(s->count == first.count);
      REQUIRE(s->counts == first.counts);
      REQUIRE(s->displs == first.displs);
    }
    if (kind == Collective::kAllReduce) {
      for (size_t i = 0; i < first.count; ++i) {
        int64_t sum = 0;
        for (auto& [r, s] : members) sum += buf[r][first.offset + i];
        for (auto& [r, s] : members) buf[r][first.offset + i] = sum;
      }
      continue;
    }
    // Blocks tile the range in member order.
    size_t expectOff = 0;
    for (size_t j = 0; j < first.counts.size(); ++j) {
      REQUIRE(first.displs[j] == expectOff);
      expectOff += first.counts[j];
    }
    REQUIRE(expectOff == first.count);
    if (kind == Collective::kReduceScatter) continue;  // applied by runReduceScatter
    for (auto& [r, s] : members) {
      for (auto& [q, t] : members) {
        const size_t off = first.offset + first.displs[t->index];
        for (size_t i = 0; i < first.counts[t->index]; ++i) buf[r][off + i] = buf[q][off + i];
      }
    }
  }
}

// A reduce-scatter phase: every member's block is the sum of the members' inputs as they were
// before the phase (a snapshot, since the stage reads all inputs before anyone writes).
void runReduceScatter(const Hierarchy& h, const std::vector<std::vector<Step>>& steps, int level,
                      Buffers& buf) {
  Buffers before = buf;
  runPhase(h, steps, Collective::kReduceScatter, level, buf);  // validates that members agree
  std::map<int, std::vector<std::pair<int, const Step*>>> groups;
  for (int r = 0; r < h.numRanks(); ++r) {
    for (const Step& s : steps[r]) {
      if (s.kind == Collective::kReduceScatter && s.level == level) {
        groups[strata::topo::stageGroup(h, level, r).color].push_back({r, &s});
      }
    }
  }
  for (auto& [color, members] : groups) {
    for (auto& [r, s] : members) {
      const size_t off = s->offset + s->displs[s->index];
      for (size_t i = 0; i < s->counts[s->index]; ++i) {
        int64_t sum = 0;
        for (auto& [q, t] : members) sum += before[q][off + i];
        buf[r][off + i] = sum;
      }
    }
  }
}

int64_t input(int rank, size_t i) { return static_cast<int64_t>((rank + 1) * 1000 + i % 97); }

// Runs an allreduce through every rank's schedule and compares with the direct sum. With
// `ringTop` the top level runs a reduce-scatter and an all-gather instead of an allreduce.
void checkAllReduce(const Hierarchy& h, size_t count, bool ringTop = false) {
  const int p = h.numRanks();
  std::vector<std::vector<Step>> steps(p);
  Buffers buf(p, std::vector<int64_t>(count));
  for (int r = 0; r < p; ++r) {
    steps[r] = strata::plan::allReduceSteps(h, r, count, ringTop);
    for (size_t i = 0; i < count; ++i) buf[r][i] = input(r, i);
    // Exactly one step finishes the reduction of each element this rank ends up holding.
    int finishing = 0;
    for (const Step& s : steps[r]) finishing += s.finishesReduction ? 1 : 0;
    REQUIRE(finishing <= 1);
  }
  const int top = h.numLevels() - 1;
  for (int l = 0; l < top; ++l) runReduceScatter(h, steps, l, buf);
  if (ringTop) {
    runReduceScatter(h, steps, top, buf);
    runPhase(h, steps, Collective::kAllGather, top, buf);
  } else {
    runPhase(h, steps, Collective::kAllReduce, top, buf);
  }
  for (int l = top - 1; l >= 0; --l) runPhase(h, steps, Collective::kAllGather, l, buf);
  for (size_t i = 0; i < count; ++i) {
    int64_t expect = 0;
    for (int r = 0; r < p; ++r) expect += input(r, i);
    for (int r = 0; r < p; ++r) {
      INFO("rank " << r << " element " << i << " of " << count << " on " << h.describe());
      REQUIRE(buf[r][i] == expect);
    }
  }
}

const std::vector<size_t> kCounts = {0, 1, 2, 3, 5, 7, 8, 13, 64, 97, 1021};

}  // namespace

TEST_CASE("splitBlock tiles a range in near-equal blocks", "[shard]") {
  for (size_t count : {0u, 1u, 5u, 6u, 7u, 100u, 101u}) {
    for (int parts : {1, 2, 3, 7, 8}) {
      size_t next = 10;
      for (int j = 0; j < parts; ++j) {
        auto b = strata::plan::splitBlock(10, count, parts, j);
        REQUIRE(b.offset == next);
        REQUIRE((b.count == count / parts || b.count == count / parts + 1));
        REQUIRE((b.count == count / parts + 1) == (static_cast<size_t>(j) < count % parts));
        next += b.count;
      }
      REQUIRE(next == 10 + count);
    }
  }
}

TEST_CASE("allreduce schedules are correct on regular hierarchies", "[schedule]") {
  for (auto sizes : std::vector<std::vector<int>>{{1},
                                                  {4},
                                                  {2, 2},
                                                  {2, 2, 2},
                                                  {3, 2},
                                                  {4, 2},
                                                  {2, 3},
                                                  {1, 4},
                                                  {4, 1},
                                                  {3, 1, 2},
                                                  {2, 3, 2}}) {
    Hierarchy h = regular(sizes);
    for (size_t count : kCounts) checkAllReduce(h, count);
  }
}

TEST_CASE("allreduce schedules are correct on irregular hierarchies", "[schedule]") {
  const std::vector<std::vector<std::string>> layouts = {
      {"a", "a", "a", "b", "b", "b", "b"},       // 7 ranks as 3 + 4
      {"a", "b", "b", "b", "b"},                 // 1 + 4: width 1, reduce to a leader
      {"a", "b", "a", "b", "a", "b"},            // interleaved hosts
      {"a", "a", "a", "b", "b", "b", "c", "c"},  // 3 + 3 + 2
      {"x", "y", "y", "x", "z", "y", "z"},       // scattered ranks
  };
  for (auto& hosts : layouts) {
    Hierarchy h = byHost(hosts);
    for (size_t count : kCounts) checkAllReduce(h, count);
  }
}

TEST_CASE("irregular trees report their width and children", "[hierarchy]") {
  Hierarchy h = byHost({"a", "a", "a", "b", "b", "b", "b"});
  REQUIRE_FALSE(h.isRegular());
  REQUIRE(h.width(0) == 3);
  REQUIRE(h.maxChildren(0) == 4);
  REQUIRE(h.width(1) == 2);
  REQUIRE(h.describe() == "node(3..4) x network(2)");
  // Rank 6 is the fourth rank of host b: no shard above the node level.
  REQUIRE_FALSE(strata::topo::stageGroup(h, 1, 6).member);
  auto g = strata::topo::stageGroup(h, 1, 4);  // second rank of b pairs with rank 1 of a
  REQUIRE(g.member);
  REQUIRE(g.color == 1);
  REQUIRE(g.size == 2);
  REQUIRE(g.index == 1);
}

TEST_CASE("regular hierarchies use the topology file's mixed radix", "[hierarchy]") {
  Hierarchy h = regular({2, 2, 2});
  for (int r = 0; r < 8; ++r) {
    REQUIRE(h.coord(r, 0) == r % 2);
    REQUIRE(h.coord(r, 1) == (r / 2) % 2);
    REQUIRE(h.coord(r, 2) == r / 4);
  }
  REQUIRE(h.isRegular());
  REQUIRE(h.describe() == "l0(2) x l1(2) x l2(2)");
  REQUIRE_FALSE(Hierarchy::regular(levelsNamed({"a", "b"}), {2, 0}).isOk());
}

TEST_CASE("trivial levels are dropped but one level is kept", "[hierarchy]") {
  Hierarchy h = regular({1, 4, 1}).withoutTrivialLevels();
  REQUIRE(h.numLevels() == 1);
  REQUIRE(h.level(0).name == "l1");
  for (int r = 0; r < 4; ++r) REQUIRE(h.coord(r, 0) == r);
  REQUIRE(regular({1}).withoutTrivialLevels().numLevels() == 1);
  Hierarchy two = regular({2, 1, 3}).withoutTrivialLevels();
  REQUIRE(two.numLevels() == 2);
  REQUIRE(two.describe() == "l0(2) x l2(3)");
  for (size_t count : kCounts) checkAllReduce(two, count);
}

TEST_CASE("fromKeys refuses groups that do not nest", "[hierarchy]") {
  auto bad = Hierarchy::fromKeys(levelsNamed({"socket", "node", "net"}),
                                 {{"s0", "a", ""}, {"s0", "b", ""}});
  REQUIRE_FALSE(bad.isOk());
  REQUIRE_THAT(bad.status().message(), Catch::Contains("spans two"));
  auto noTop = Hierarchy::fromKeys(levelsNamed({"node"}), {{"a"}, {"b"}});
  REQUIRE_FALSE(noTop.isOk());
}

TEST_CASE("hierarchical reduce-scatter and all-gather give rank r block r", "[schedule]") {
  for (auto sizes : std::vector<std::vector<int>>{{2, 2}, {2, 2, 2}, {3, 2}, {2, 3}, {4, 2}}) {
    Hierarchy h = regular(sizes);
    REQUIRE(strata::plan::hierarchicalBlocksPossible(h));
    const int p = h.numRanks();
    for (size_t block : {0u, 1u, 3u, 10u}) {
      // Reduce-scatter on the permuted working buffer.
      std::vector<std::vector<Step>> steps(p);
      Buffers buf(p, std::vector<int64_t>(block * p));
      for (int r = 0; r < p; ++r) {
        steps[r] = strata::plan::reduceScatterSteps(h, r, block);
        for (int j = 0; j < p; ++j) {  // user block j goes to permuted position pos(j)
          const size_t pos = strata::plan::permutedPosition(h, j);
          for (size_t i = 0; i < block; ++i) buf[r][pos * block + i] = input(r, j * block + i);
        }
      }
      for (int l = 0; l < h.numLevels(); ++l) runReduceScatter(h, steps, l, buf);
      for (int r = 0; r < p; ++r) {
        const size_t pos = strata::plan::permutedPosition(h, r);
        const auto& last = steps[r].back();
        REQUIRE(last.offset + last.displs[last.index] == pos * block);
        for (size_t i = 0; i < block; ++i) {
          int64_t expect = 0;
          for (int q = 0; q < p; ++q) expect += input(q, r * block + i);
          REQUIRE(buf[r][pos * block + i] == expect);
        }
      }
      // All-gather: each rank starts with its own block at pos(r).
      Buffers gat(p, std::vector<int64_t>(block * p, -1));
      for (int r = 0; r < p; ++r) {
        steps[r] = strata::plan::allGatherSteps(h, r, block);
        const size_t pos = strata::plan::permutedPosition(h, r);
        for (size_t i = 0; i < block; ++i) gat[r][pos * block + i] = input(r, i);
      }
      for (int l = h.numLevels() - 1; l >= 0; --l) {
        runPhase(h, steps, Collective::kAllGather, l, gat);
      }
      for (int r = 0; r < p; ++r) {
        for (int q = 0; q < p; ++q) {
          const size_t pos = strata::plan::permutedPosition(h, q);
          for (size_t i = 0; i < block; ++i) REQUIRE(gat[r][pos * block + i] == input(q, i));
        }
      }
    }
  }
}

TEST_CASE("every candidate plan is a correct allreduce", "[schedule][plan]") {
  std::vector<Hierarchy> hierarchies = {regular({2, 2}),
                                        regular({2, 2, 2}),
                                        regular({3, 2}),
                                        regular({2, 3, 2}),
                                        byHost({"a", "a", "a", "b", "b", "b", "b"}),
                                        byHost({"a", "b", "b", "b", "b"}),
                                        byHost({"x", "y", "y", "x", "z", "y", "z"})};
  for (const Hierarchy& h : hierarchies) {
    const auto plans = strata::plan::candidatePlans(h, {});
    REQUIRE(plans.size() >= 2);
    for (const auto& plan : plans) {
      INFO(h.describe() << ": " << strata::plan::describePlan(h, plan));
      REQUIRE(strata::plan::checkPlan(h, plan).isOk());
      if (plan.passthrough) continue;
      auto derived = strata::plan::planHierarchy(h, plan);
      REQUIRE(derived.isOk());
      REQUIRE(derived.value().numLevels() == static_cast<int>(plan.stages.size()));
      for (size_t count : {0u, 1u, 5u, 13u, 97u}) {
        checkAllReduce(derived.value(), count, plan.stages.back().algorithm == strata::plan::Algorithm::kRing);
      }
    }
  }
}

TEST_CASE("plans name their stages and refuse bad shapes", "[plan]") {
  Hierarchy h = regular({2, 2, 2});
  strata::plan::Plan p;
  p.stages = {{{0}, "", strata::plan::Algorithm::kAuto, 0, {}}, {{1, 2}, "", strata::plan::Algorithm::kAuto, 0, {}}};
  REQUIRE(strata::plan::describePlan(h, p) == "reduce_scatter@l0, allreduce@l1+l2, all_gather@l0");
  strata::plan::Plan missing;
  missing.stages = {{{0}, "", strata::plan::Algorithm::kAuto, 0, {}}, {{2}, "", strata::plan::Algorithm::kAuto, 0, {}}};
  REQUIRE_THAT(strata::plan::checkPlan(h, missing).message(),
               Catch::Contains("'l1' is in no stage"));
  strata::plan::Plan twice;
  twice.stages = {{{0, 1}, "", strata::plan::Algorithm::kAuto, 0, {}}, {{1, 2}, "", strata::plan::Algorithm::kAuto, 0, {}}};
  REQUIRE_THAT(strata::plan::checkPlan(h, twice).message(), Catch::Contains("two stages"));
  // A reordered plan is fine on a regular hierarchy, refused on an irregular one.
  strata::plan::Plan reordered;
  reordered.stages = {{{1}, "", strata::plan::Algorithm::kAuto, 0, {}}, {{0}, "", strata::plan::Algorithm::kAuto, 0, {}}};
  Hierarchy two = regular({2, 2});
  REQUIRE(strata::plan::checkPlan(two, reordered).isOk());
  Hierarchy irregular = byHost({"a", "a", "a", "b", "b", "b", "b"});
  REQUIRE_THAT(strata::plan::checkPlan(irregular, reordered).message(),
               Catch::Contains("irregular"));
}
