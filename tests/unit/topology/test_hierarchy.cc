// Hierarchy::subset, the hierarchy a split communicator gets: its ranks keep their groups, the
// levels carry over, and levels left with one child per group are dropped.
#include <catch2/catch.hpp>

#include <vector>

#include "topology/hierarchy.h"

namespace strata::topo {
namespace {

Hierarchy twoByFour() {
  // node(2) x rack(2) x network(2): ranks 0-1 node 0, 2-3 node 1, ... rack = 4 ranks.
  auto h = Hierarchy::regular({Level("node", "shm"), Level("rack", "mpi"), Level("network", "mpi")},
                              {2, 2, 2});
  REQUIRE(h.isOk());
  return h.value();
}

}  // namespace

TEST_CASE("subset: the even ranks keep racks and the network, and lose the node level",
          "[hierarchy]") {
  const Hierarchy h = twoByFour();
  auto s = h.subset({0, 2, 4, 6});
  REQUIRE(s.isOk());
  // Every node now holds one rank: the node level goes; ranks 0, 2 share rack 0.
  CHECK(s.value().describe() == "rack(2) x network(2)");
  CHECK(s.value().level(0).fabric == "mpi");
  CHECK(s.value().group(0, 0) == s.value().group(1, 0));
  CHECK(s.value().group(1, 0) != s.value().group(2, 0));
}

TEST_CASE("subset: a contiguous half keeps the levels inside it", "[hierarchy]") {
  const Hierarchy h = twoByFour();
  auto s = h.subset({4, 5, 6, 7});
  REQUIRE(s.isOk());
  CHECK(s.value().describe() == "node(2) x rack(2)");
  CHECK(s.value().level(0).fabric == "shm");
  // New rank order follows the list: reversed, the coordinates follow the new ranks.
  auto r = h.subset({7, 6, 5, 4});
  REQUIRE(r.isOk());
  CHECK(r.value().describe() == "node(2) x rack(2)");
  CHECK(r.value().group(0, 0) == r.value().group(1, 0));  // 7 and 6 share a node
}

TEST_CASE("subset: an uneven pick gives an irregular level, one rank gives one level",
          "[hierarchy]") {
  const Hierarchy h = twoByFour();
  auto s = h.subset({0, 1, 2});
  REQUIRE(s.isOk());
  CHECK(s.value().describe() == "node(1..2) x rack(2)");
  CHECK_FALSE(s.value().isRegular());
  auto one = h.subset({5});
  REQUIRE(one.isOk());
  CHECK(one.value().numRanks() == 1);
  CHECK(one.value().numLevels() == 1);
}

TEST_CASE("subset: refuses ranks outside the hierarchy and an empty list", "[hierarchy]") {
  const Hierarchy h = twoByFour();
  CHECK_FALSE(h.subset({}).isOk());
  CHECK_FALSE(h.subset({0, 8}).isOk());
  CHECK_FALSE(h.subset({-1}).isOk());
}

}  // namespace strata::topo

namespace strata::topo {

TEST_CASE("levelCrossesHosts: a level crosses hosts when one of its stage groups does",
          "[hierarchy]") {
  const Hierarchy h = twoByFour();
  // Two hosts of four ranks: node and rack groups stay inside a host, network groups do not.
  const std::vector<int> twoHosts = {0, 0, 0, 0, 1, 1, 1, 1};
  CHECK_FALSE(levelCrossesHosts(h, 0, twoHosts));
  CHECK_FALSE(levelCrossesHosts(h, 1, twoHosts));
  CHECK(levelCrossesHosts(h, 2, twoHosts));
  // One host: nothing crosses.
  const std::vector<int> oneHost(8, 3);
  for (int l = 0; l < 3; ++l) CHECK_FALSE(levelCrossesHosts(h, l, oneHost));
  // Hosts that interleave (rank % 2): the node level's pairs (0,1), (2,3), ... cross already.
  const std::vector<int> interleaved = {0, 1, 0, 1, 0, 1, 0, 1};
  CHECK(levelCrossesHosts(h, 0, interleaved));
  CHECK_FALSE(levelCrossesHosts(h, 1, interleaved));  // rack groups: ranks 0 and 2, 1 and 3
  CHECK_FALSE(levelCrossesHosts(h, 2, interleaved));  // network groups: ranks 0 and 4, ...
}

}  // namespace strata::topo
