// The rooted collectives' cost model (decompose/rooted_cost.h): each form's stages by hand, the
// choice by size on a slow network, and that a bigger message never costs less.
#include <catch2/catch.hpp>
#include <string>
#include <utility>
#include <vector>

#include "cost_fixtures.h"
#include "decompose/rooted_cost.h"
#include "topology/hierarchy.h"

namespace strata::plan {
namespace {

using topo::Hierarchy;
using topo::Level;
using topo::LinkKind;
using topo::LinkModel;

using test::link;
// 2 nodes of 2 ranks: node at 10 GB/s and 1 us (beta 1e-4 us/B), network at 1 GB/s and 10 us
// (beta 1e-3), `sharing` ranks of a node per NIC.
using test::twoByTwo;

using test::gamma5;
using test::labels;

using Labels = std::vector<std::string>;

}  // namespace

TEST_CASE("rooted cost: every form by hand on 2x2", "[rooted][cost_model]") {
  const Hierarchy h = twoByTwo();
  const double n = 1e6;
  // Flat: a binomial tree over 4 ranks (2 rounds) on the slowest link (1 GB/s, 10 us).
  //   broadcast 2 * (10 + 1000) = 2020; reduce adds 2 * 1e6 * 2e-4 = 400
  const Prediction flatB = predictRooted(h, Collective::kBroadcast, RootedForm::kFlat, n, gamma5());
  CHECK(labels(flatB) == Labels{"broadcast@all"});
  CHECK(flatB.totalUs == Approx(2020));
  CHECK(predictRooted(h, Collective::kReduce, RootedForm::kFlat, n, gamma5()).totalUs ==
        Approx(2420));
  // Tree: one round per level. Broadcast: network 10 + 1000, node 1 + 100 = 1111.
  // Reduce: node 1 + 100 + 200, network 10 + 1000 + 200 = 1511.
  const Prediction treeB = predictRooted(h, Collective::kBroadcast, RootedForm::kTree, n, gamma5());
  CHECK(labels(treeB) == Labels{"broadcast@network", "broadcast@node"});
  CHECK(treeB.totalUs == Approx(1111));
  const Prediction treeR = predictRooted(h, Collective::kReduce, RootedForm::kTree, n, gamma5());
  CHECK(labels(treeR) == Labels{"reduce@node", "reduce@network"});
  CHECK(treeR.totalUs == Approx(1511));
  // Sharded broadcast: scatter@node 1 + 0.5e6 * 1e-4 = 51; the network moves half the range:
  // scatter@network 10 + 0.5 * 5e5 * 1e-3 = 260, allgather@network 260, allgather@node 51.
  const Prediction shB =
      predictRooted(h, Collective::kBroadcast, RootedForm::kSharded, n, gamma5());
  CHECK(labels(shB) ==
        Labels{"scatter@node", "scatter@network", "allgather@network", "allgather@node"});
  CHECK(shB.stages[1].bytes == Approx(5e5));
  CHECK(shB.totalUs == Approx(622));
  // Sharded reduce: reducescatter@node 1 + 50 + 100 = 151, reducescatter@network
  // 10 + 250 + 50 = 310, gather@network 260, gather@node 51.
  const Prediction shR = predictRooted(h, Collective::kReduce, RootedForm::kSharded, n, gamma5());
  CHECK(labels(shR) ==
        Labels{"reducescatter@node", "reducescatter@network", "gather@network", "gather@node"});
  CHECK(shR.totalUs == Approx(772));
  // Both ranks of a node on one NIC: the sharded network stages pay twice the bandwidth term,
  // the tree's single network group does not. scatter@network = 10 + 500.
  const Hierarchy shared = twoByTwo(2);
  CHECK(predictRooted(shared, Collective::kBroadcast, RootedForm::kSharded, n, gamma5())
            .stages[1]
            .us == Approx(510));
  CHECK(predictRooted(shared, Collective::kBroadcast, RootedForm::kTree, n, gamma5()).totalUs ==
        Approx(1111));
}

TEST_CASE("rooted cost: shared slots, and the irregular tree's hop", "[rooted][cost_model]") {
  // One host of 4 ranks on a fabric of shared slots (10 GB/s, 1 us): a broadcast is a barrier
  // of alpha per member and a copy in and out: 4 * 1 + 2 * 1e6 * 1e-4 = 204 us.
  auto one = Hierarchy::regular({Level("node", "x", link(LinkKind::kSharedMemory, 10, 1))}, {4});
  REQUIRE(one.isOk());
  CostParams slots = gamma5();
  FabricTraits x;
  x.name = "x";
  x.cost = CostStyle::kSharedSlots;
  slots.fabrics = {x};
  const Prediction p =
      predictRooted(one.value(), Collective::kBroadcast, RootedForm::kTree, 1e6, slots);
  REQUIRE(p.stages.size() == 1);
  CHECK(p.stages[0].algorithm == "shm");
  CHECK(p.totalUs == Approx(204));
  // Hosts of 3 and 4: the tree pays the worst-case hop to the effective root, on the node link:
  // send@all first for a broadcast, last for a reduce.
  auto irregular = Hierarchy::fromKeys(
      {Level("node", "mpi", link(LinkKind::kPcie, 10, 1)),
       Level("network", "mpi", link(LinkKind::kEthernet, 1, 10))},
      {{"a", ""}, {"a", ""}, {"a", ""}, {"b", ""}, {"b", ""}, {"b", ""}, {"b", ""}});
  REQUIRE(irregular.isOk());
  const Prediction b =
      predictRooted(irregular.value(), Collective::kBroadcast, RootedForm::kTree, 1e6, gamma5());
  CHECK(labels(b) == Labels{"send@all", "broadcast@network", "broadcast@node"});
  CHECK(b.stages[0].us == Approx(1 + 100));
  CHECK(b.stages[2].groupSize == 4);  // the biggest node sets the time: 2 rounds
  CHECK(b.stages[2].us == Approx(2 * (1 + 100)));
  const Prediction r =
      predictRooted(irregular.value(), Collective::kReduce, RootedForm::kTree, 1e6, gamma5());
  CHECK(labels(r).back() == "send@all");
}

TEST_CASE("rooted cost: small messages go by tree or flat, large ones sharded",
          "[rooted][cost_model]") {
  // The 2x2 of the documentation: a node over shared memory at 10 GB/s and 0.3 us (MPI passes
  // it through its FIFOs: a third of the bandwidth, twice the latency), a 1 GB/s, 20 us network.
  auto h = Hierarchy::regular({Level("node", "mpi", link(LinkKind::kSharedMemory, 10, 0.3)),
                               Level("network", "mpi", link(LinkKind::kEthernet, 1, 20))},
                              {2, 2});
  REQUIRE(h.isOk());
  CostParams params;
  FabricTraits mpi;
  mpi.name = "mpi";
  mpi.sharedMemoryBandwidthDivisor = 3;
  mpi.sharedMemoryLatencyFactor = 2;
  params.fabrics = {mpi};
  for (Collective coll : {Collective::kBroadcast, Collective::kReduce}) {
    INFO(collectiveName(coll));
    const RootedChoice small = chooseRooted(h.value(), coll, 8, params);
    CHECK((small.form == RootedForm::kTree || small.form == RootedForm::kFlat));
    CHECK(chooseRooted(h.value(), coll, 16 << 20, params).form == RootedForm::kSharded);
    // The choice is the cheapest of the three.
    for (double bytes : {8.0, 65536.0, 16.0 * (1 << 20)}) {
      const RootedChoice c = chooseRooted(h.value(), coll, bytes, params);
      for (RootedForm f : {RootedForm::kFlat, RootedForm::kTree, RootedForm::kSharded}) {
        CHECK(c.prediction.totalUs <= predictRooted(h.value(), coll, f, bytes, params).totalUs);
      }
    }
  }
  // Tree, 8 B broadcast: network 20 + 0.008, node 0.6 + 0.0024.
  CHECK(chooseRooted(h.value(), Collective::kBroadcast, 8, params).prediction.totalUs ==
        Approx(20.6104));
}

TEST_CASE("rooted cost: ties go to the earlier form, and bigger is never cheaper",
          "[rooted][cost_model]") {
  // One level on the flat fabric: the tree is the flat form's stage, so flat wins the tie.
  auto one = Hierarchy::regular({Level("node", "mpi", link(LinkKind::kPcie, 10, 1))}, {4});
  REQUIRE(one.isOk());
  for (Collective coll : {Collective::kBroadcast, Collective::kReduce}) {
    CHECK(predictRooted(one.value(), coll, RootedForm::kTree, 100, gamma5()).totalUs ==
          Approx(predictRooted(one.value(), coll, RootedForm::kFlat, 100, gamma5()).totalUs));
    CHECK(chooseRooted(one.value(), coll, 100, gamma5()).form == RootedForm::kFlat);
  }
  auto three = Hierarchy::regular({Level("socket", "mpi", link(LinkKind::kSmp, 20, 0.5)),
                                   Level("node", "mpi", link(LinkKind::kPcie, 10, 1)),
                                   Level("rack", "mpi", link(LinkKind::kInfiniband, 5, 3), 2)},
                                  {2, 3, 2});
  REQUIRE(three.isOk());
  for (const Hierarchy& h : {twoByTwo(), twoByTwo(2), three.value(), one.value()}) {
    for (Collective coll : {Collective::kBroadcast, Collective::kReduce}) {
      double lastChosen = 0;
      std::vector<double> last(3, 0);
      for (double bytes = 0; bytes <= (1 << 30); bytes = bytes == 0 ? 1 : bytes * 4) {
        INFO(h.describe() << " " << collectiveName(coll) << " " << bytes << " bytes");
        const double chosen = chooseRooted(h, coll, bytes, gamma5()).prediction.totalUs;
        CHECK(chosen >= lastChosen);
        lastChosen = chosen;
        int i = 0;
        for (RootedForm f : {RootedForm::kFlat, RootedForm::kTree, RootedForm::kSharded}) {
          const double us = predictRooted(h, coll, f, bytes, gamma5()).totalUs;
          CHECK(us >= last[i]);
          CHECK(us > 0);
          last[i++] = us;
        }
      }
    }
  }
}

}  // namespace strata::plan
