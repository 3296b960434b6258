// The cost model: each formula by hand, the seed's 40-GPU case, and the orderings a planner
// relies on (monotone in bandwidth, latency and size; few stages for small messages, hierarchy
// for large ones on a slow network).
#include <catch2/catch.hpp>
#include <string>
#include <utility>
#include <vector>

#include "cost_fixtures.h"
#include "decompose/cost_model.h"
#include "decompose/plan.h"
#include "decompose/planner.h"
#include "topology/hierarchy.h"

namespace strata::plan {
namespace {

using topo::Hierarchy;
using topo::Level;
using topo::LinkKind;
using topo::LinkModel;

using test::link;
using test::regular;

Stage stage(std::vector<int> levels, Algorithm algorithm = Algorithm::kAuto) {
  Stage s;
  s.levels = std::move(levels);
  s.algorithm = algorithm;
  return s;
}

Plan staged(std::string name, std::vector<Stage> stages) {
  Plan p;
  p.name = std::move(name);
  p.stages = std::move(stages);
  return p;
}

Plan passthrough() {
  Plan p;
  p.name = "passthrough";
  p.passthrough = true;
  return p;
}

// The seed: 5 nodes of 8 GPUs, 10 GB/s inside a node, InfiniBand at 6 GB/s between them.
Hierarchy seedCluster(int networkSharing) {
  return regular({Level("node", "mpi", link(LinkKind::kPcie, 10, 1.0)),
                  Level("network", "mpi", link(LinkKind::kInfiniband, 6, 1.5), networkSharing)},
                 {8, 5});
}

// A GPU combines gradients at HBM speed, far above the CPU-like default of CostParams.
CostParams gpuParams() {
  CostParams p;
  p.reduceGBps = 500;
  return p;
}

const LinkModel kTen = link(LinkKind::kPcie, 10, 2.0);  // alpha 2 us, beta 1e-4 us/B

// No local reduction cost (gamma not modelled).
CostParams noReduce() {
  CostParams p;
  p.reduceGBps = 0;
  return p;
}

CostParams gamma5() {
  CostParams p;
  p.reduceGBps = 5;  // 2e-4 us per combined byte
  return p;
}

TEST_CASE("cost model: ring reduce-scatter and all-gather by hand", "[cost_model]") {
  // g = 4, n = 1e6: (g-1)/g * n = 7.5e5 bytes sent.
  // RS = 3 * 2 + 7.5e5 * 1e-4 + 7.5e5 * 2e-4 = 6 + 75 + 150 = 231 us
  CHECK(ringReduceScatterUs(4, 1e6, kTen, 1, gamma5()) == Approx(231));
  // AG = 3 * 2 + 7.5e5 * 1e-4 = 81 us
  CHECK(ringAllGatherUs(4, 1e6, kTen, 1) == Approx(81));
  // Two groups on one link: beta doubles, the latency and the reduction do not.
  // RS = 6 + 150 + 150 = 306; AG = 6 + 150 = 156
  CHECK(ringReduceScatterUs(4, 1e6, kTen, 2, gamma5()) == Approx(306));
  CHECK(ringAllGatherUs(4, 1e6, kTen, 2) == Approx(156));
  // reduceGBps <= 0: the reduction is not modelled. 6 + 75 = 81
  CHECK(ringReduceScatterUs(4, 1e6, kTen, 1, noReduce()) == Approx(81));
}

TEST_CASE("cost model: the cheapest allreduce by hand", "[cost_model]") {
  std::string algo;
  // g = 4 (a power of two), n = 1e6:
  //   ring   = RS + AG = 231 + 81                                          = 312
  //   rhd    = 2*2*2 + 2*0.75*1e6*1e-4 + 0.75*1e6*2e-4 = 8 + 150 + 150     = 308
  //   rd     = 2*(2 + 1e6*1e-4) + 2*1e6*2e-4 = 204 + 400                 = 604
  //   direct = 3*2 + 3e6*1e-4 + 3e6*2e-4 = 6 + 300 + 600                   = 906
  CHECK(bestAllReduceUs(4, 1e6, kTen, 1, gamma5(), &algo) == Approx(308));
  CHECK(algo == "rhd");
  // g = 6, n = 6e6 (p = 4, so two extra ranks fold in and out):
  //   ring   = 2*5*2 + 2*(5/6)*6e6*1e-4 + (5/6)*6e6*2e-4 = 20 + 1000 + 1000 = 2020
  //   rhd    = 2*2*2 + 2*0.75*6e6*1e-4 + 0.75*6e6*2e-4          (8 + 900 + 900)
  //            + 2*(2 + 6e6*1e-4) + 6e6*2e-4                    (1204 + 1200) = 4212
  //   rd     = 2 rounds and the fold of the other 2, all of the 6e6 each    > 6000
  //   direct = 5*2 + 5*6e6*1e-4 + 5*6e6*2e-4 = 10 + 3000 + 6000            = 9010
  CHECK(bestAllReduceUs(6, 6e6, kTen, 1, gamma5(), &algo) == Approx(2020));
  CHECK(algo == "ring");
  // g = 8, n = 8 bytes: latency decides.
  //   rd     = 3*(2 + 8*1e-4) + 3*8*2e-4 = 6.0024 + 0.0048 = 6.0072
  //   direct = 7*2 + 7*8*1e-4 + 7*8*2e-4 = 14.0168 (its 7 messages leave one after another)
  //   rhd    = 2*3*2 + ... > 12; ring = 2*7*2 + ... > 28
  CHECK(bestAllReduceUs(8, 8, kTen, 1, gamma5(), &algo) == Approx(6.0072));
  CHECK(algo == "rd");
  // g = 2: ring and rhd are the same exchange (2*2 + 2*0.5*1e6*1e-4 + 0.5e6*2e-4 = 204); the
  // tie goes to the ring. rd and direct (one message of the whole vector) = 2 + 100 + 200 = 302.
  CHECK(bestAllReduceUs(2, 1e6, kTen, 1, gamma5(), &algo) == Approx(204));
  CHECK(algo == "ring");
  // Sharing scales only the beta term: g = 4, n = 1e6, sharing 4:
  //   rhd = 8 + 4*150 + 150 = 758; ring = 6+300+150 + 6+300 = 762; direct = 4 + 1200 + 600
  CHECK(bestAllReduceUs(4, 1e6, kTen, 4, gamma5(), &algo) == Approx(758));
  CHECK(algo == "rhd");
  // The algorithm output is optional.
  CHECK(bestAllReduceUs(4, 1e6, kTen, 1, gamma5(), nullptr) == Approx(308));
}

TEST_CASE("cost model: a group of one costs nothing", "[cost_model]") {
  std::string algo = "unset";
  CHECK(ringReduceScatterUs(1, 1e9, kTen, 8, gamma5()) == 0);
  CHECK(ringAllGatherUs(1, 1e9, kTen, 8) == 0);
  CHECK(bestAllReduceUs(1, 1e9, kTen, 8, gamma5(), &algo) == 0);
  CHECK(algo == "none");
  // A one-rank communicator: the passthrough and every stage are free.
  Hierarchy one = regular({Level("node", "mpi", kTen)}, {1});
  CHECK(predict(one, passthrough(), 1e9, gamma5()).totalUs == 0);
  CHECK(predict(one, staged("flat", {stage({0})}), 1e9, gamma5()).totalUs == 0);
}

TEST_CASE("cost model: links without a bandwidth fall back to 1 GB/s and 10 us", "[cost_model]") {
  // g = 2, n = 1e6, no reduction: 10 + 0.5e6 * 1e-3 = 510 us, for any kind.
  const CostParams none = noReduce();
  CHECK(ringAllGatherUs(2, 1e6, LinkModel{}, 1) == Approx(510));
  CHECK(ringAllGatherUs(2, 1e6, link(LinkKind::kInfiniband, 0, 0), 1) == Approx(510));
  CHECK(ringReduceScatterUs(2, 1e6, link(LinkKind::kPcie, -3, 1), 1, none) == Approx(510));
  // An unknown kind with numbers (measured, or from a topology file) is costed by them:
  // 2 + 0.5e6 * 1e-4 = 52
  CHECK(ringAllGatherUs(2, 1e6, link(LinkKind::kUnknown, 10, 2), 1) == Approx(52));
  // Without a reduction to cost, one message of the whole vector (rd: 10 + 1e6 * 1e-3) beats the
  // ring's two halves (2 * 510).
  std::string algo;
  CHECK(bestAllReduceUs(2, 1e6, LinkModel{}, 1, none, &algo) == Approx(1010));
  CHECK(algo == "rd");
}

TEST_CASE("cost model: the seed's flat ring over 40 GPUs takes about 400 ms", "[cost_model]") {
  // One stage over node+network, forced ring, on the slowest link (6 GB/s, 1.5 us), sharing 1:
  //   latency   2 * 39 * 1.5                       =     117 us
  //   bandwidth 2 * (39/40) * 1.2e9 * 1e-3/6       = 390 000 us
  //   reduction (39/40) * 1.2e9 * 1e-3/500         =   2 340 us
  //   total                                        = 392 457 us = 392.457 ms
  const Plan flat = staged("flat-ring", {stage({0, 1}, Algorithm::kRing)});
  for (int sharing : {1, 8}) {  // merging the node into the ring leaves one group per NIC
    const Prediction p = predict(seedCluster(sharing), flat, 1.2e9, gpuParams());
    REQUIRE(p.stages.size() == 1);
    CHECK(p.stages[0].label == "allreduce@node+network");
    CHECK(p.stages[0].algorithm == "ring");
    CHECK(p.stages[0].groupSize == 40);
    CHECK(p.stages[0].bytesMoved == Approx(2 * 0.975 * 1.2e9));
    CHECK(p.totalUs == Approx(392457));
    CHECK(p.totalUs > 380e3);
    CHECK(p.totalUs < 420e3);
  }
}

TEST_CASE("cost model: the seed's two-level plan, shared and per-GPU NICs", "[cost_model]") {
  // [node] then [network], n = 1.2e9:
  //   reduce_scatter@node g=8, 10 GB/s, 1 us:
  //     7 * 1 + (7/8) * 1.2e9 * 1e-4 + (7/8) * 1.2e9 * 2e-6 = 7 + 105 000 + 2 100 = 107 107 us
  //   all_gather@node: 7 + 105 000                                              = 105 007 us
  //   allreduce@network g=5 over 1.2e9/8 = 1.5e8 bytes, 6 GB/s, 1.5 us; ring is cheapest (g=5
  //   is no power of two; direct moves 4x the data):
  //     one NIC per node (linkSharing 8): the 8 concurrent groups share it, sharing 8:
  //       2*4*1.5 + 2*(4/5)*1.5e8*(8e-3/6) + (4/5)*1.5e8*2e-6 = 12 + 320 000 + 240 = 320 252 us
  //       total 107 107 + 320 252 + 105 007 = 532 366 us = 532.366 ms (slower than the flat ring)
  //     one NIC per GPU (linkSharing 1): sharing 1:
  //       12 + 40 000 + 240 = 40 252 us
  //       total 107 107 + 40 252 + 105 007 = 252 366 us = 252.366 ms
  const Plan twoLevel = staged("two-level", {stage({0}), stage({1})});
  const Prediction shared = predict(seedCluster(8), twoLevel, 1.2e9, gpuParams());
  REQUIRE(shared.stages.size() == 3);
  CHECK(shared.stages[0].label == "reduce_scatter@node");
  CHECK(shared.stages[1].label == "allreduce@network");
  CHECK(shared.stages[2].label == "all_gather@node");
  CHECK(shared.stages[0].us == Approx(107107));
  CHECK(shared.stages[0].bytesMoved == Approx(1.05e9));
  CHECK(shared.stages[1].algorithm == "ring");
  CHECK(shared.stages[1].groupSize == 5);
  CHECK(shared.stages[1].bytes == Approx(1.5e8));
  CHECK(shared.stages[1].bytesMoved == Approx(2.4e8));
  CHECK(shared.stages[1].us == Approx(320252));
  CHECK(shared.stages[2].us == Approx(105007));
  CHECK(shared.totalUs == Approx(532366).epsilon(0.01));

  const Prediction perGpu = predict(seedCluster(1), twoLevel, 1.2e9, gpuParams());
  CHECK(perGpu.stages[1].us == Approx(40252));
  CHECK(perGpu.totalUs == Approx(252366).epsilon(0.01));
}

TEST_CASE("cost model: network sharing counts the concurrent groups per NIC", "[cost_model]") {
  // socket 2 x node 4 x network 3; the top level's linkSharing 8 means one NIC for the 8 ranks
  // of a host, linkSharing 4 two NICs, linkSharing 1 one per rank.
  auto cluster = [](int linkSharing) {
    return regular({Level("socket", "mpi", link(LinkKind::kSmp, 20, 0.5)),
                    Level("node", "mpi", link(LinkKind::kPcie, 10, 1)),
                    Level("network", "mpi", link(LinkKind::kInfiniband, 5, 2), linkSharing)},
                   {2, 4, 3});
  };
  const LinkModel net = link(LinkKind::kInfiniband, 5, 2);
  const double n = 8e6;
  const CostParams params = gamma5();
  struct Case {
    int linkSharing;
    Plan plan;
    double top;   // the top stage's range per rank
    int sharing;  // ceil(concurrent / nics)
  };
  const std::vector<Case> cases = {
      // blueconnect: 2 * 4 = 8 groups at once; nics = round(8 / linkSharing)
      {8, staged("blueconnect", {stage({0}), stage({1}), stage({2})}), n / 8, 8},
      {4, staged("blueconnect", {stage({0}), stage({1}), stage({2})}), n / 8, 4},
      {1, staged("blueconnect", {stage({0}), stage({1}), stage({2})}), n / 8, 1},
      // node merged into the network stage: 2 groups at once; two NICs carry one each
      {8, staged("merged", {stage({0}), stage({1, 2})}), n / 2, 2},
      {4, staged("merged", {stage({0}), stage({1, 2})}), n / 2, 1},
      // the network stage first (reordered): still 8 concurrent groups, over the whole range
      {8, staged("reordered", {stage({2}), stage({0, 1})}), n, 8},
  };
  for (const Case& c : cases) {
    const Prediction p = predict(cluster(c.linkSharing), c.plan, n, params);
    const bool topIsAllReduce = c.plan.stages.back().levels.back() == 2;
    const StageCost& top = topIsAllReduce ? p.stages[c.plan.stages.size() - 1] : p.stages[0];
    INFO(c.plan.name << " linkSharing " << c.linkSharing << ": " << top.label);
    const int g = topIsAllReduce && c.plan.stages.back().levels.size() == 2 ? 12 : 3;
    CHECK(top.groupSize == g);
    CHECK(top.bytes == Approx(c.top));
    const double expected = topIsAllReduce
                                ? bestAllReduceUs(g, c.top, net, c.sharing, params, nullptr)
                                : ringReduceScatterUs(g, c.top, net, c.sharing, params);
    CHECK(top.us == Approx(expected));
  }
}

TEST_CASE("cost model: passthrough is the best allreduce over everyone", "[cost_model]") {
  const Hierarchy h = seedCluster(8);
  std::string algo;
  for (double bytes : {8.0, 1e6, 1.2e9}) {
    const Prediction p = predict(h, passthrough(), bytes, gpuParams());
    REQUIRE(p.stages.size() == 1);
    CHECK(p.stages[0].label == "allreduce@all");
    CHECK(p.stages[0].groupSize == 40);
    // The slowest link (6 GB/s) with the largest latency (1.5 us), unshared.
    const double expected =
        bestAllReduceUs(40, bytes, link(LinkKind::kInfiniband, 6, 1.5), 1, gpuParams(), &algo);
    CHECK(p.totalUs == Approx(expected));
    CHECK(p.stages[0].algorithm == algo);
  }
  // 8 bytes: recursive doubling over p = 32 (5 rounds) plus the fold and return of the other 8
  // ranks: 7 * (1.5 + 8 * 1e-3/6) + 6 * 8 * 2e-6 = 10.5094293
  CHECK(predict(h, passthrough(), 8, gpuParams()).totalUs == Approx(10.5094293));
}

TEST_CASE("cost model: irregular layouts shard only to the first width members", "[cost_model]") {
  // Hosts of 3 and 4 ranks: width(node) = 3, so the node stage's groups have 3 members.
  std::vector<std::vector<std::string>> keys;
  for (const char* host : {"a", "a", "a", "b", "b", "b", "b"}) keys.push_back({host, ""});
  auto built = Hierarchy::fromKeys(
      {Level("node", "mpi", kTen), Level("network", "mpi", link(LinkKind::kEthernet, 1, 5))}, keys);
  REQUIRE(built.isOk());
  const Hierarchy& h = built.value();
  const Prediction p = predict(h, staged("two-level", {stage({0}), stage({1})}), 3e6, gamma5());
  REQUIRE(p.stages.size() == 3);
  CHECK(p.stages[0].groupSize == 3);
  CHECK(p.stages[1].groupSize == 2);
  CHECK(p.stages[1].bytes == Approx(1e6));
  CHECK(predict(h, passthrough(), 3e6, gamma5()).stages[0].groupSize == 7);
}

// Hierarchies and plans for the ordering checks.
struct Scenario {
  std::vector<Level> levels;
  std::vector<int> sizes;
  std::vector<Plan> plans;
};

std::vector<Scenario> scenarios() {
  const Level smp("socket", "mpi", link(LinkKind::kSmp, 20, 0.5));
  const Level node("node", "mpi", link(LinkKind::kPcie, 10, 1));
  const auto net = [](int sharing) {
    return Level("network", "mpi", link(LinkKind::kInfiniband, 6, 1.5), sharing);
  };
  const std::vector<Plan> two = {
      passthrough(), staged("flat-ring", {stage({0, 1}, Algorithm::kRing)}),
      staged("flat", {stage({0, 1})}), staged("two-level", {stage({0}), stage({1})}),
      staged("reordered", {stage({1}), stage({0})})};
  const std::vector<Plan> three = {
      passthrough(),
      staged("flat-ring", {stage({0, 1, 2}, Algorithm::kRing)}),
      staged("two-level", {stage({0, 1}), stage({2})}),
      staged("blueconnect", {stage({0}), stage({1}), stage({2})}),
      staged("blueconnect-ring", {stage({0}), stage({1}), stage({2}, Algorithm::kRing)}),
      staged("socket-then-rest", {stage({0}), stage({1, 2})}),
      staged("reordered", {stage({2}), stage({1}), stage({0})})};
  return {{{node, net(8)}, {8, 5}, two},
          {{node, net(1)}, {4, 6}, two},
          {{smp, node, net(8)}, {2, 4, 4}, three},
          {{smp, node, net(2)}, {2, 3, 5}, three}};
}

TEST_CASE("cost model: faster links, lower latency, fewer bytes never cost more", "[cost_model]") {
  const CostParams params = gpuParams();
  const double slack = 1 + 1e-12;  // rounding only
  for (const Scenario& s : scenarios()) {
    for (const Plan& plan : s.plans) {
      for (double bytes : {8.0, 4096.0, 1e6, 2.56e8}) {
        INFO(plan.name << " on " << s.sizes.size() << " levels, " << bytes << " bytes");
        for (size_t l = 0; l < s.levels.size(); ++l) {
          double last = 1e300;
          for (double gbps : {0.1, 0.5, 1.0, 6.0, 10.0, 25.0, 100.0, 1000.0}) {
            std::vector<Level> levels = s.levels;
            levels[l].link.bandwidthGBps = gbps;
            const double t = predict(regular(levels, s.sizes), plan, bytes, params).totalUs;
            CHECK(t <= last * slack);
            last = t;
          }
          last = 1e300;
          for (double us : {50.0, 10.0, 2.0, 1.5, 1.0, 0.1, 0.0}) {
            std::vector<Level> levels = s.levels;
            levels[l].link.latencyUs = us;
            const double t = predict(regular(levels, s.sizes), plan, bytes, params).totalUs;
            CHECK(t <= last * slack);
            last = t;
          }
        }
      }
      const Hierarchy h = regular(s.levels, s.sizes);
      double last = 0;
      for (double bytes : {0.0, 1.0, 8.0, 100.0, 4096.0, 65536.0, 1e6, 1e7, 2.56e8, 1.2e9}) {
        const double t = predict(h, plan, bytes, params).totalUs;
        CHECK(t * slack >= last);
        last = t;
      }
    }
  }
}

TEST_CASE("cost model: small messages prefer fewer stages", "[cost_model]") {
  // 8 bytes over socket 2 x node 4 x network 4: blueconnect pays 2*0.5 + 2*3*1 latencies inside
  // the node plus a network allreduce (>= 2 * 1.5), > 10 us; one recursive doubling over all 32
  // ranks pays 5 * 1.5 plus well under 0.1 us of bandwidth.
  const Hierarchy h = regular({Level("socket", "mpi", link(LinkKind::kSmp, 20, 0.5)),
                               Level("node", "mpi", link(LinkKind::kPcie, 10, 1)),
                               Level("network", "mpi", link(LinkKind::kInfiniband, 6, 1.5), 8)},
                              {2, 4, 4});
  for (const CostParams& params : {CostParams{}, gpuParams()}) {
    const double blue =
        predict(h, staged("blueconnect", {stage({0}), stage({1}), stage({2})}), 8, params).totalUs;
    const double pass = predict(h, passthrough(), 8, params).totalUs;
    const double oneStage = predict(h, staged("flat", {stage({0, 1, 2})}), 8, params).totalUs;
    CHECK(blue > 10);
    CHECK(pass < blue);
    CHECK(pass == Approx(7.5).epsilon(0.05));
    CHECK(oneStage < blue);
  }
}

TEST_CASE("cost model: large messages on a slow network prefer the hierarchy", "[cost_model]") {
  // 256 MiB, 20 GB/s inside a node, 1.25 GB/s (10 GbE) between nodes. The flat ring pushes
  // 2 * (g-1)/g of the data through the network; the hierarchy only 2 * (nodes-1)/nodes of it,
  // even when all of a host's groups share one NIC.
  const double bytes = 256.0 * 1024 * 1024;
  const Level node("node", "mpi", link(LinkKind::kNvlink, 20, 1));
  const auto net = [](int sharing) {
    return Level("network", "mpi", link(LinkKind::kEthernet, 1.25, 10), sharing);
  };
  for (const CostParams& params : {CostParams{}, gpuParams()}) {
    for (int sharing : {8, 1}) {
      INFO("linkSharing " << sharing);
      const Hierarchy two = regular({node, net(sharing)}, {8, 4});
      const double flat =
          predict(two, staged("flat-ring", {stage({0, 1}, Algorithm::kRing)}), bytes, params)
              .totalUs;
      const double hier =
          predict(two, staged("two-level", {stage({0}), stage({1})}), bytes, params).totalUs;
      CHECK(hier < flat);
      const Hierarchy three =
          regular({Level("socket", "mpi", link(LinkKind::kNvlink, 20, 0.5)), node, net(sharing)},
                  {2, 4, 4});
      const double flat3 =
          predict(three, staged("flat-ring", {stage({0, 1, 2}, Algorithm::kRing)}), bytes, params)
              .totalUs;
      const double blue3 =
          predict(three, staged("blueconnect", {stage({0}), stage({1}), stage({2})}), bytes, params)
              .totalUs;
      CHECK(blue3 < flat3);
    }
  }
}

}  // namespace
}  // namespace strata::plan

namespace strata::plan {
namespace {

FabricTraits messages(const std::string& name, double bwDivisor, double latencyFactor) {
  FabricTraits t;
  t.name = name;
  t.cost = CostStyle::kMessages;
  t.sharedMemoryBandwidthDivisor = bwDivisor;
  t.sharedMemoryLatencyFactor = latencyFactor;
  return t;
}

FabricTraits slots(const std::string& name) {
  FabricTraits t;
  t.name = name;
  t.cost = CostStyle::kSharedSlots;
  return t;
}

}  // namespace

TEST_CASE("cost model: a fabric's traits, never its name, decide how it is costed",
          "[cost_model]") {
  // One host: 4 ranks over shared memory (10 GB/s, 1 us), on a fabric named "x".
  const Hierarchy h = regular({Level("node", "x", link(LinkKind::kSharedMemory, 10, 1.0))}, {4});
  const Plan flat = staged("flat", {stage({0})});
  CostParams none = noReduce();
  none.flatFabric = "x";
  // No traits for "x": message passing over the link as it is.
  const double plain = predict(h, flat, 1e6, none).totalUs;
  // Message passing whose shared-memory path keeps a third of the bandwidth costs more.
  CostParams fifo = none;
  fifo.fabrics = {messages("x", 3, 2)};
  CHECK(predict(h, flat, 1e6, fifo).totalUs > 2 * plain);
  // The passthrough runs on flatFabric and pays the same hints.
  CHECK(predict(h, passthrough(), 1e6, fifo).totalUs >
        2 * predict(h, passthrough(), 1e6, none).totalUs);
  // Shared slots: costed by the slot formulas: two barriers of two alphas each, and a copy
  // in, the shard reads and a copy out of n bytes each: 2 * 2 * 1 + 3 * 1e6 * 1e-4 = 304 us.
  CostParams shared = none;
  shared.fabrics = {slots("x")};
  const Prediction p = predict(h, flat, 1e6, shared);
  REQUIRE(p.stages.size() == 1);
  CHECK(p.stages[0].algorithm == "shm");
  CHECK(p.totalUs == Approx(304));
}

TEST_CASE("planner: a flat candidate only on a fabric that is not message passing",
          "[cost_model]") {
  const Hierarchy h = regular({Level("node", "x", link(LinkKind::kSharedMemory, 10, 1.0))}, {4});
  auto hasFlat = [&](const CostParams& params) {
    for (const Plan& p : candidatePlans(h, params)) {
      if (p.name == "flat") return true;
    }
    return false;
  };
  CostParams params = noReduce();
  params.fabrics = {messages("x", 1, 1)};
  CHECK_FALSE(hasFlat(params));  // it would be the passthrough again
  params.fabrics = {slots("x")};
  CHECK(hasFlat(params));
}

TEST_CASE(
    "cost model: a message fabric is costed by the allreduce it runs; small calls on one "
    "host take shm's one barrier",
    "[cost_model]") {
  // One host of 8 ranks over shared memory (10 GB/s, 0.3 us). "m" passes messages as the mpi
  // fabric: a third of the bandwidth and twice the latency in shared memory, recursive doubling
  // below 64 KiB and its ring from there on.
  const auto shmLink = link(LinkKind::kSharedMemory, 10, 0.3);
  const Hierarchy h = regular({Level("node", "s", shmLink)}, {8});
  FabricTraits rd = messages("m", 3, 2);
  rd.smallAllReduce = SmallAllReduce::kRecursiveDoubling;
  rd.smallAllReduceBytes = 65536;
  CostParams params = noReduce();
  params.fabrics = {slots("s"), rd};
  params.flatFabric = "m";
  // 8 B: 3 rounds of alpha 0.6 us + 8 B at 10/3 GB/s (0.0024 us) = 1.8072 us.
  Prediction pass = predict(h, passthrough(), 8, params);
  REQUIRE(pass.stages.size() == 1);
  CHECK(pass.stages[0].algorithm == "rd");
  CHECK(pass.totalUs == Approx(3 * (0.6 + 8 * 3e-4)));
  // From 64 KiB on it runs its ring.
  CHECK(predict(h, passthrough(), 65536, params).stages[0].algorithm == "ring");
  // 6 ranks: 2 rounds of 4 members, and the fold and the return of the other 2.
  const Hierarchy six = regular({Level("node", "s", shmLink)}, {6});
  CHECK(predict(six, passthrough(), 8, params).totalUs == Approx(4 * (0.6 + 8 * 3e-4)));
  // A fabric that sends every vector to every member below 32 KiB (ucx), and one that declares
  // nothing (the cheapest of ring, rhd, rd and direct: at 8 B recursive doubling's 3 alphas
  // beat direct's 7).
  FabricTraits direct = messages("m", 3, 2);
  direct.smallAllReduce = SmallAllReduce::kDirect;
  direct.smallAllReduceBytes = 32768;
  params.fabrics = {slots("s"), direct};
  CHECK(predict(h, passthrough(), 8, params).stages[0].algorithm == "direct");
  CHECK(predict(h, passthrough(), 32768, params).stages[0].algorithm == "ring");
  params.fabrics = {slots("s"), messages("m", 3, 2)};
  CHECK(predict(h, passthrough(), 8, params).stages[0].algorithm == "rd");
  // The planner: shm's one barrier (two alphas, 0.6 us, plus the copy in and the 8 reads of
  // 8 B: 72 B at 10 GB/s) beats recursive doubling's three rounds.
  params.fabrics = {slots("s"), rd};
  const Choice c = choosePlan(h, 8, params);
  CHECK(c.plan.name == "flat");
  REQUIRE(c.prediction.stages.size() == 1);
  CHECK(c.prediction.stages[0].algorithm == "shm");
  CHECK(c.prediction.totalUs == Approx(0.6 + 72 * 1e-4));
}

// A 400-byte topology file of 20 levels of size 2 once made strata-plan enumerate every order of
// every split (10^18 plans) until it ran out of memory; the library's choosePlan did the same.
TEST_CASE("candidatePlans stays bounded however many levels a topology file has", "[cost_model]") {
  auto levels = [](int k) {
    std::vector<Level> ls;
    for (int l = 0; l < k; ++l) ls.emplace_back("l" + std::to_string(l), "x");
    return ls;
  };
  CostParams params = noReduce();
  params.fabrics = {messages("x", 1, 1)};
  // Up to kMaxSplitLevels levels every split is there (2^(k-1) - 1 of them, after passthrough
  // and flat-ring), with the orders of those of up to kMaxReorderedStages stages.
  const Hierarchy four = regular(levels(4), {2, 2, 2, 2});
  CHECK(candidatePlans(four, params).size() == 2 + 3 * 2 + 3 * 6 + 1 * 24);
  const Hierarchy twenty = regular(levels(20), std::vector<int>(20, 2));
  const std::vector<Plan> plans = candidatePlans(twenty, params);
  // Each single boundary (19) and its 2 orders, plus one stage per level: 2 + 19 * 2 + 1.
  CHECK(plans.size() == 2 + 19 * 2 + 1);
  bool blueconnect = false;
  for (const Plan& p : plans) blueconnect = blueconnect || p.name == "blueconnect";
  CHECK(blueconnect);
  const Choice c = choosePlan(twenty, 1 << 20, params);
  CHECK(!c.plan.stages.empty());
}

}  // namespace strata::plan
