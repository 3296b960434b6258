// The reduce-scatter's and all-gather's cost model (decompose/blocks_cost.h): each form's stages
// by hand, the planner's choice between them (chooseBlocks) where each form wins, and that a
// layout without the hierarchical form always gets flat.
#include <catch2/catch.hpp>
#include <cmath>
#include <string>
#include <vector>

#include "cost_fixtures.h"
#include "decompose/blocks_cost.h"
#include "decompose/planner.h"
#include "topology/hierarchy.h"

namespace strata::plan {
namespace {

using topo::Hierarchy;
using topo::Level;
using topo::LinkKind;
using topo::LinkModel;

using test::link;
// 2 nodes of 2 ranks on mpi: node at 10 GB/s and 1 us (beta 1e-4 us/B), network at 1 GB/s and
// 10 us (beta 1e-3), `sharing` ranks of a node per NIC.
using test::twoByTwo;

// 2 hosts of 4 ranks, both links 10 GB/s and 1 us, one NIC per host (the 4 ranks share it): the
// network is as fast as the inside of a host.
Hierarchy fourByTwoOneNic() {
  auto h = Hierarchy::regular({Level("node", "mpi", link(LinkKind::kPcie, 10, 1)),
                               Level("network", "mpi", link(LinkKind::kEthernet, 10, 1), 4)},
                              {4, 2});
  REQUIRE(h.isOk());
  return h.value();
}

using test::gamma5;
using test::labels;

using Labels = std::vector<std::string>;
constexpr Collective kRs = Collective::kReduceScatter;
constexpr Collective kAg = Collective::kAllGather;

}  // namespace

TEST_CASE("blocks cost: both forms by hand on 2x2", "[blocks][cost_model]") {
  const Hierarchy h = twoByTwo();
  const double n = 1e6;  // the whole vector: 4 blocks of 250 kB
  // Flat: one ring over 4 ranks on the slowest link (1 GB/s, 10 us), unshared.
  //   reduce-scatter 3 * 10 + 3/4 * 1e6 * 1e-3 + 3/4 * 1e6 * 2e-4 = 30 + 750 + 150 = 930
  //   all-gather     30 + 750 = 780
  const Prediction flatRs = predictBlocks(h, kRs, BlockForm::kFlat, n, gamma5());
  CHECK(labels(flatRs) == Labels{"reducescatter@all"});
  CHECK(flatRs.stages[0].groupSize == 4);
  CHECK(flatRs.stages[0].algorithm == "ring");
  CHECK(flatRs.totalUs == Approx(930));
  CHECK(predictBlocks(h, kAg, BlockForm::kFlat, n, gamma5()).totalUs == Approx(780));
  // Hierarchical reduce-scatter, innermost first:
  //   node:    1 + 1/2 * 1e6 * 1e-4 + 1/2 * 1e6 * 2e-4       = 1 + 50 + 100  = 151
  //   network: on the half left, 5e5: 10 + 1/2 * 5e5 * 1e-3 + 1/2 * 5e5 * 2e-4 = 10 + 250 + 50 =
  //   310
  const Prediction hierRs = predictBlocks(h, kRs, BlockForm::kHierarchical, n, gamma5());
  CHECK(labels(hierRs) == Labels{"reducescatter@node", "reducescatter@network"});
  CHECK(hierRs.stages[1].bytes == Approx(5e5));
  CHECK(hierRs.stages[0].us == Approx(151));
  CHECK(hierRs.stages[1].us == Approx(310));
  CHECK(hierRs.totalUs == Approx(461));
  // Hierarchical all-gather, outermost first: network 10 + 250 = 260, node 1 + 50 = 51.
  const Prediction hierAg = predictBlocks(h, kAg, BlockForm::kHierarchical, n, gamma5());
  CHECK(labels(hierAg) == Labels{"allgather@network", "allgather@node"});
  CHECK(hierAg.totalUs == Approx(311));
  // Both ranks of a node on one NIC: the two network groups share it, so the network stage's
  // bandwidth term doubles (250 -> 500); the flat ring is unshared. RS 151 + 560, AG 510 + 51.
  CHECK(predictBlocks(twoByTwo(2), kRs, BlockForm::kHierarchical, n, gamma5()).totalUs ==
        Approx(711));
  CHECK(predictBlocks(twoByTwo(2), kAg, BlockForm::kHierarchical, n, gamma5()).totalUs ==
        Approx(561));
  CHECK(predictBlocks(twoByTwo(2), kRs, BlockForm::kFlat, n, gamma5()).totalUs == Approx(930));
  // A slow top level and a large message: hierarchical.
  CHECK(chooseBlocks(h, kRs, n, gamma5()) == BlockForm::kHierarchical);
  CHECK(chooseBlocks(h, kAg, n, gamma5()) == BlockForm::kHierarchical);
}

TEST_CASE("blocks cost: shm levels use the shm fabric's formulas", "[blocks][cost_model]") {
  // node on shm at 20 GB/s (beta 5e-5) and 0.5 us, network on mpi at 1 GB/s and 10 us.
  auto made = Hierarchy::regular({Level("node", "shm", link(LinkKind::kSharedMemory, 20, 0.5)),
                                  Level("network", "mpi", link(LinkKind::kEthernet, 1, 10))},
                                 {2, 2});
  REQUIRE(made.isOk());
  const Hierarchy h = made.value();
  CostParams params = gamma5();
  FabricTraits shm;
  shm.name = "shm";
  shm.cost = CostStyle::kSharedSlots;
  params.fabrics = {shm};
  const double n = 1e6;
  // shm reduce-scatter over 2: barrier 2 * 0.5 + 2 * 1e6 * 5e-5 + 1/2 * 1e6 * 2e-4
  //   = 1 + 100 + 100 = 201; network ring on 5e5 = 310 (as on 2x2).
  const Prediction rs = predictBlocks(h, kRs, BlockForm::kHierarchical, n, params);
  REQUIRE(rs.stages.size() == 2);
  CHECK(rs.stages[0].algorithm == "shm");
  CHECK(rs.stages[0].us == Approx(201));
  CHECK(rs.totalUs == Approx(511));
  // shm all-gather over 2: 1 + (1e6 / 2 + 1e6) * 5e-5 = 76; network 260.
  CHECK(predictBlocks(h, kAg, BlockForm::kHierarchical, n, params).totalUs == Approx(336));
  // The flat group runs on params.flatFabric (mpi, messages) over the slowest link: 930.
  CHECK(predictBlocks(h, kRs, BlockForm::kFlat, n, params).totalUs == Approx(930));
}

TEST_CASE("blocks cost: flat wins large messages when a host's ranks share one fast NIC",
          "[blocks][cost_model]") {
  const Hierarchy h = fourByTwoOneNic();
  const CostParams params = gamma5();
  const double big = 1e7;
  // Flat reduce-scatter: 7 * 1 + 7/8 * 1e7 * 1e-4 + 7/8 * 1e7 * 2e-4 = 7 + 875 + 1750 = 2632.
  // Hierarchical: node 3 * 1 + 3/4 * 1e7 * 1e-4 + 3/4 * 1e7 * 2e-4 = 3 + 750 + 1500 = 2253;
  //   network on 2.5e6, the 4 groups of a host through its one NIC (sharing 4):
  //   1 + 1/2 * 2.5e6 * 1e-4 * 4 + 1/2 * 2.5e6 * 2e-4 = 1 + 500 + 250 = 751; in all 3004.
  CHECK(predictBlocks(h, kRs, BlockForm::kFlat, big, params).totalUs == Approx(2632));
  const Prediction hier = predictBlocks(h, kRs, BlockForm::kHierarchical, big, params);
  CHECK(hier.stages[1].us == Approx(751));
  CHECK(hier.totalUs == Approx(3004));
  CHECK(chooseBlocks(h, kRs, big, params) == BlockForm::kFlat);
  // All-gather: flat 7 + 875 = 882; hierarchical 501 + 753 = 1254.
  CHECK(predictBlocks(h, kAg, BlockForm::kFlat, big, params).totalUs == Approx(882));
  CHECK(predictBlocks(h, kAg, BlockForm::kHierarchical, big, params).totalUs == Approx(1254));
  CHECK(chooseBlocks(h, kAg, big, params) == BlockForm::kFlat);
  // Small messages pay latency: 4 alphas (3 + 1) against the flat ring's 7, so hierarchical.
  // The crossover: flat 7 + 2.625e-4 * n against hierarchical 4 + 3e-4 * n (reduce-scatter), and
  // 7 + 0.875e-4 * n against 4 + 1.25e-4 * n (all-gather): both at n = 80000 bytes.
  for (Collective coll : {kRs, kAg}) {
    CHECK(chooseBlocks(h, coll, 64, params) == BlockForm::kHierarchical);
    CHECK(chooseBlocks(h, coll, 70000, params) == BlockForm::kHierarchical);
    CHECK(chooseBlocks(h, coll, 90000, params) == BlockForm::kFlat);
  }
}

TEST_CASE("blocks cost: layouts without the hierarchical form get flat", "[blocks][cost_model]") {
  // One level: the hierarchical form is the flat one; irregular hosts (3 + 4 ranks) cannot give
  // every rank one equal block level by level.
  auto one = Hierarchy::regular({Level("node", "mpi", link(LinkKind::kPcie, 10, 1))}, {4});
  REQUIRE(one.isOk());
  std::vector<std::vector<std::string>> keys;
  for (const char* host : {"a", "a", "a", "b", "b", "b", "b"}) keys.push_back({host, ""});
  auto irregular = Hierarchy::fromKeys({Level("node", "mpi", link(LinkKind::kPcie, 10, 1)),
                                        Level("network", "mpi", link(LinkKind::kEthernet, 1, 10))},
                                       keys);
  REQUIRE(irregular.isOk());
  for (const Hierarchy& h : {one.value(), irregular.value()}) {
    INFO(h.describe());
    const Prediction p = predictBlocks(h, kRs, BlockForm::kHierarchical, 1e6, gamma5());
    CHECK(p.stages.empty());
    CHECK(std::isinf(p.totalUs));
    CHECK(std::isfinite(predictBlocks(h, kRs, BlockForm::kFlat, 1e6, gamma5()).totalUs));
    for (double n : {8.0, 1e6, 1e9}) {
      CHECK(chooseBlocks(h, kRs, n, gamma5()) == BlockForm::kFlat);
      CHECK(chooseBlocks(h, kAg, n, gamma5()) == BlockForm::kFlat);
    }
  }
}

TEST_CASE("blocks cost: a bigger message never costs less", "[blocks][cost_model]") {
  const Hierarchy h = fourByTwoOneNic();
  for (Collective coll : {kRs, kAg}) {
    for (BlockForm form : {BlockForm::kFlat, BlockForm::kHierarchical}) {
      double last = 0;
      for (double n = 1; n <= 1e10; n *= 4) {
        const double us = predictBlocks(h, coll, form, n, gamma5()).totalUs;
        CHECK(us >= last);
        last = us;
      }
    }
  }
}

}  // namespace strata::plan
