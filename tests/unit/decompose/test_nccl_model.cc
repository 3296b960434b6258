// NCCL's cost model (decompose/nccl_model.h): hand-worked cases of its graph summary, latencies,
// bandwidths and choices, and the published nccl-tests figures it reproduces (or the documented
// reason it does not) from the topology files under configs/topologies.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "decompose/nccl_model.h"
#include "topology/topo_file.h"

namespace strata::plan::nccl {
namespace {

Hardware hardware(int nodes, int gpus, double intra, int nics, double nic, Gpu gpu = Gpu::kAmpere) {
  Hardware hw;
  hw.nodes = nodes;
  hw.gpusPerNode = gpus;
  hw.gpu = gpu;
  hw.intraGBps = intra;
  hw.nics = nics;
  hw.nicGBps = nic;
  return hw;
}

const Option& option(const std::vector<Option>& all, Algo a, Proto p) {
  for (const Option& o : all) {
    if (o.algo == a && o.proto == p) return o;
  }
  FAIL("no option");
  return all.front();
}

// The hierarchy of a configs/topologies file, with the network level resized to `nodes` (0: as
// written).
topo::Hierarchy published(const std::string& name, int nodes = 0) {
  const std::string path = std::string(STRATA_SOURCE_DIR) + "/configs/topologies/" + name;
  auto file = topo::loadTopoFile(path, {"mpi", "shm", "ucx"});
  REQUIRE(file.isOk());
  topo::TopoFile f = file.value();
  if (nodes > 0) f.sizes.back() = nodes;
  int ranks = 1;
  for (int s : f.sizes) ranks *= s;
  auto h = topo::hierarchyFromTopoFile(f, path, ranks);
  REQUIRE(h.isOk());
  return h.value();
}

System publishedSystem(const std::string& name, Gpu gpu, int nodes = 0) {
  auto hw = hardwareOf(published(name, nodes), gpu, Cpu::kIntel);
  REQUIRE(hw.isOk());
  return systemFor(hw.value());
}

bool within(double value, double target, double share) {
  return value >= target * (1 - share) && value <= target * (1 + share);
}

}  // namespace

TEST_CASE("nccl model: the graph summary follows NCCL's search", "[nccl_model]") {
  SECTION("4 HDR NICs per node: one channel per NIC at 24 GB/s, the fastest speed under 25") {
    // Ampere inter speeds 48, 30, 28 exceed a 25 GB/s NIC; 24 fits once per NIC: 4 x 24 = 96.
    // 12 x 8 would also make 96, but the search keeps the faster speed. 24 < 25: no doubling.
    const System s = systemFor(hardware(3, 8, 240, 4, 25));
    CHECK(s.ring.channels == 4);
    CHECK(s.ring.bwInter == Approx(24));
    CHECK(s.tree.bwIntra == Approx(24));  // more than 2 nodes: the tree keeps the ring's speed
  }
  SECTION("one node of 8 NVSwitch A100: 6 channels of 40, doubled to 12 of 20") {
    const System s = systemFor(hardware(1, 8, 240, 0, 0));
    CHECK(s.ring.channels == 12);
    CHECK(s.ring.bwIntra == Approx(20));
  }
  SECTION("2 nodes: the tree's intra-node speed rises to twice the network's") {
    // 8 NICs of 12.5 GB/s: 8 channels of 12; the tree's 24 = 2 x 12 and 8 x 24 <= 240.
    const System s = systemFor(hardware(2, 8, 240, 8, 12.5));
    CHECK(s.ring.channels == 8);
    CHECK(s.ring.bwInter == Approx(12));
    CHECK(s.tree.bwIntra == Approx(24));
    CHECK(s.tree.bwInter == Approx(12));
  }
  SECTION("a link slower than every speed NCCL tries gets its slowest, one channel") {
    const System s = systemFor(hardware(4, 1, 0, 1, 0.05));
    CHECK(s.ring.channels == 1);
    CHECK(s.ring.bwInter == Approx(0.12));
  }
}

TEST_CASE("nccl model: latencies and bandwidths, worked by hand", "[nccl_model]") {
  // 3 nodes x 8 A100, 4 channels x 24 GB/s, 24 ranks; allreduce steps 2(24-1) = 46, of which
  // 2(3-1) = 4 cross the network.
  const System s = systemFor(hardware(3, 8, 240, 4, 25));
  const std::vector<Option> all = options(s, Func::kAllReduce);
  SECTION("ring/Simple: 8.4 + 42 x max(3.4, 3 x 1.0) + 4 x 14 us; 96 GB/s x 24/46") {
    const Option& o = option(all, Algo::kRing, Proto::kSimple);
    CHECK(o.latencyUs == Approx(8.4 + 42 * 3.4 + 4 * 14.0));  // 207.2
    CHECK(o.bandwidthGBps == Approx(96.0 * 24 / 46));         // 50.087
  }
  SECTION("ring/LL: 6.6 + 42 x max(0.6, 1.0) + 4 x 2.7; min(20.4, 48) x 24/46") {
    const Option& o = option(all, Algo::kRing, Proto::kLL);
    CHECK(o.latencyUs == Approx(6.6 + 42 * 1.0 + 4 * 2.7));  // 59.4
    CHECK(o.bandwidthGBps == Approx(20.4 * 24 / 46));
  }
  SECTION("ring/LL128: min(0.92 x 96, 4 x 20) x 24/46; 14 + 42 x 1.9 + 4 x 4.0") {
    const Option& o = option(all, Algo::kRing, Proto::kLL128);
    CHECK(o.latencyUs == Approx(14.0 + 42 * 1.9 + 4 * 4.0));  // 109.8
    CHECK(o.bandwidthGBps == Approx(80.0 * 24 / 46));
  }
  SECTION("tree/Simple: 8.4 + 2 (7 x 4.0 + 1 x 14); min(0.92 x 96, 4 x 17.8) / 2") {
    const Option& o = option(all, Algo::kTree, Proto::kSimple);
    CHECK(o.latencyUs == Approx(92.4));
    CHECK(o.bandwidthGBps == Approx(35.6));
  }
  SECTION("PAT is not an allreduce algorithm") {
    CHECK(option(all, Algo::kPat, Proto::kSimple).bandwidthGBps == 0);
  }
  SECTION("the times: corrections and the ring's plateau") {
    // 128 MiB, ring/Simple: each channel's share of each rank is far above 64 B, so the latency
    // is 1.4 x 207.2 = 290.08 us; 134217728 B / 50087 B/us = 2679.65 us.
    const Option& ring = option(all, Algo::kRing, Proto::kSimple);
    CHECK(timeUs(s, Func::kAllReduce, ring, 134217728.0) ==
          Approx(290.08 + 134217728.0 / (1000 * 96.0 * 24 / 46)));
    // 64 KiB, tree/Simple: floor(log2(65536 / 64)) = 10, correction 0.6: 35.6 x 0.6 GB/s.
    const Option& tree = option(all, Algo::kTree, Proto::kSimple);
    CHECK(timeUs(s, Func::kAllReduce, tree, 65536.0) == Approx(92.4 + 65536.0 / (1000 * 21.36)));
    // 8 B: no correction below 64 B, and no plateau: 207.2 + 8 / 50087.
    CHECK(timeUs(s, Func::kAllReduce, ring, 8.0) == Approx(207.2 + 8.0 / (1000 * 96.0 * 24 / 46)));
  }
  SECTION("the choice: tree/LL for 8 B, ring/Simple for 128 MiB") {
    // 8 B: tree/LL's latency 6.8 + 2 (7 x 0.6 + 1 x 5.0) = 25.2 us is the least.
    const Choice small = choose(s, Func::kAllReduce, 8.0);
    CHECK(small.algo == Algo::kTree);
    CHECK(small.proto == Proto::kLL);
    CHECK(small.us == Approx(25.2 + 8.0 / (1000 * std::min(20.4, 96 * 0.92 / 3.8) * 0.5)));
    const Choice large = choose(s, Func::kAllReduce, 134217728.0);
    CHECK(large.algo == Algo::kRing);
    CHECK(large.proto == Proto::kSimple);
  }
  SECTION("a single rank costs nothing") {
    CHECK(choose(systemFor(hardware(1, 1, 0, 0, 0)), Func::kAllReduce, 1e6).us == 0);
  }
}

TEST_CASE("nccl model: PAT for reduce-scatter and all-gather on one GPU per node", "[nccl_model]") {
  // 16 nodes of one GPU, one 25 GB/s NIC each: one channel of 24 GB/s, 16 ranks.
  const System s = systemFor(hardware(16, 1, 0, 1, 25));
  const std::vector<Option> rs = options(s, Func::kReduceScatter);
  const Option& pat = option(rs, Algo::kPat, Proto::kSimple);
  // 8 + floor(log2 16) x 14 / 3.5 + 16 x 2.8 (with one GPU per node the tree's net latency).
  CHECK(pat.latencyUs == Approx(8 + 4 * 14.0 / 3.5 + 16 * 2.8));  // 68.8
  CHECK(pat.bandwidthGBps == Approx(24 * 0.75));                  // no conversion for PAT
  // The ring: 15 steps, all between nodes, at the tree's network latency of 14 us each.
  const Option& ring = option(rs, Algo::kRing, Proto::kSimple);
  CHECK(ring.latencyUs == Approx(8.4 + 15 * 14.0));
  CHECK(ring.bandwidthGBps == Approx(24.0 * 16 / 15));
  CHECK(option(rs, Algo::kTree, Proto::kSimple).bandwidthGBps == 0);
  // 1 MiB: PAT 68.8 + 1048576 / 18000 = 127.1 us beats the ring's 218.4 + 40.96 us.
  const Choice c = choose(s, Func::kReduceScatter, 1048576.0);
  CHECK(c.algo == Algo::kPat);
  CHECK(c.us == Approx(68.8 + 1048576.0 / 18000));
  // With 8 GPUs per node there is no PAT.
  const System eight = systemFor(hardware(2, 8, 240, 8, 25));
  CHECK(option(options(eight, Func::kAllGather), Algo::kPat, Proto::kSimple).bandwidthGBps == 0);
}

TEST_CASE("nccl model: LL128 only over NVLink; AMD CPUs pay more per network step",
          "[nccl_model]") {
  Hardware hw = hardware(4, 8, 24, 8, 12.5);
  hw.nvlink = false;
  const System pcie = systemFor(hw);
  CHECK(option(options(pcie, Func::kAllReduce), Algo::kRing, Proto::kLL128).bandwidthGBps == 0);
  hw.nvlink = true;
  hw.cpu = Cpu::kAmd;
  const System amd = systemFor(hw);
  // Ring/Simple on AMD: max(3.4, 3 x 2.0) = 6 us per intra-node step.
  const int steps = 2 * 31, net = 2 * 3;
  CHECK(option(options(amd, Func::kAllReduce), Algo::kRing, Proto::kSimple).latencyUs ==
        Approx(8.4 + (steps - net) * 6.0 + net * 14.0));
}

TEST_CASE("nccl model: the hardware of a hierarchy", "[nccl_model]") {
  const topo::Hierarchy h = published("nccl_tests_119_3x8_a100_4hdr.yaml");
  auto hw = hardwareOf(h, Gpu::kAmpere, Cpu::kIntel);
  REQUIRE(hw.isOk());
  CHECK(hw.value().nodes == 3);
  CHECK(hw.value().gpusPerNode == 8);
  CHECK(hw.value().nics == 4);  // 8 GPUs, 2 per NIC
  CHECK(hw.value().nicGBps == Approx(25));
  CHECK(hw.value().intraGBps == Approx(240));
  CHECK(hw.value().nvlink);
  // A level without a bandwidth cannot be modelled.
  std::vector<topo::Level> levels{topo::Level("node", "mpi"), topo::Level("network", "mpi")};
  auto bare = topo::Hierarchy::regular(levels, {2, 2});
  REQUIRE(bare.isOk());
  auto refused = hardwareOf(bare.value(), Gpu::kAmpere, Cpu::kIntel);
  REQUIRE_FALSE(refused.isOk());
  CHECK_THAT(refused.status().message(), Catch::Contains("bandwidth of level 'node'"));
}

TEST_CASE("nccl model: published nccl-tests figures", "[nccl_model]") {
  SECTION("#119, 3 x 8 A100, 4 HDR: 84.8 GB/s average, about 96 peak (within 15%)") {
    // all_reduce_perf -b 8 -e 128M with 1 MiB steps: 8, 8 + 1 MiB, ..., below 128 MiB + 8.
    const System s = publishedSystem("nccl_tests_119_3x8_a100_4hdr.yaml", Gpu::kAmpere);
    double sum = 0, peak = 0;
    int count = 0;
    for (double b = 8; b <= 134217728.0; b += 1048576.0, ++count) {
      const double bus =
          busBandwidthGBps(Func::kAllReduce, s.ranks, b, choose(s, Func::kAllReduce, b).us);
      sum += bus;
      peak = std::max(peak, bus);
    }
    CHECK(count == 128);
    CHECK(within(sum / count, 84.8, 0.15));  // 74.3 GB/s predicted
    CHECK(within(peak, 96.0, 0.15));         // 86.6 GB/s predicted
  }
  SECTION("#169, 2 x 8 A100, 8 x 100G RoCE: the ring's 96 GB/s against about 100") {
    const System s = publishedSystem("nccl_tests_169_2x8_a100_8roce.yaml", Gpu::kAmpere);
    const Option ring = option(options(s, Func::kAllReduce), Algo::kRing, Proto::kSimple);
    for (double b : {1073741824.0, 8589934592.0}) {
      const double bus =
          busBandwidthGBps(Func::kAllReduce, s.ranks, b, timeUs(s, Func::kAllReduce, ring, b));
      CHECK(within(bus, 100.0, 0.15));
    }
    // Documented exception (docs/decomposition.md): NCCL's own choice on 2 nodes is its tree,
    // whose model doubles the tree's intra-node speed; it predicts about 165 GB/s, which the
    // reported 100 does not show.
    const Choice c = choose(s, Func::kAllReduce, 1073741824.0);
    CHECK(c.algo == Algo::kTree);
    CHECK(busBandwidthGBps(Func::kAllReduce, s.ranks, 1073741824.0, c.us) > 150);
  }
  SECTION("#169 on 3 to 6 nodes: the model stays near 95 GB/s (documented exception)") {
    // Reported 70, 58, 58, 40 GB/s: the model assumes every NIC runs at its rate whatever the
    // node count, as NCCL's own does; the drop is the RoCE fabric's, outside both.
    for (int nodes = 3; nodes <= 6; ++nodes) {
      const System s = publishedSystem("nccl_tests_169_2x8_a100_8roce.yaml", Gpu::kAmpere, nodes);
      const double b = 1073741824.0;
      const double bus =
          busBandwidthGBps(Func::kAllReduce, s.ranks, b, choose(s, Func::kAllReduce, b).us);
      CHECK(within(bus, 95.0, 0.03));
    }
  }
  SECTION("#22, 2 x 8 V100, one 100 Gb/s EFA: ring 268 ms (documented exception)") {
    const System s = publishedSystem("nccl_tests_22_2x8_v100_efa.yaml", Gpu::kVolta);
    const Option ring = option(options(s, Func::kAllReduce), Algo::kRing, Proto::kSimple);
    // One channel of 12 GB/s: 1e9 B / (12 x 16/30 GB/s) = 156.25 ms, plus 1.9 x 131.6 us.
    const double us = timeUs(s, Func::kAllReduce, ring, 1e9);
    CHECK(us == Approx(1.9 * (8.4 + 28 * 3.4 + 2 * 14.0) + 1e9 / (1000 * 12.0 * 16 / 30)));
    // 42% below the reported 268 ms: EFA then carried about 7 GB/s, not its 12.5.
    CHECK(us / 268e3 == Approx(0.584).margin(0.01));
  }
}

}  // namespace strata::plan::nccl
