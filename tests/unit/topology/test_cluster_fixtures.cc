// The levels strata builds for real machines: clusters of identical nodes read from the
// fixtures in tests/data/topologies (hand-checked facts are in the readers' golden tests).
#include <catch2/catch.hpp>
#include <string>

#include "topology/cluster.h"
#include "topology/hwloc_reader.h"
#include "topology/link_model.h"
#include "topology/nvsmi.h"

using namespace strata::topo;  // NOLINT: test file

namespace {

const std::string kData = STRATA_TEST_DATA_DIR "/topologies/";

// `hosts` copies of `node`, one rank per GPU (in GPU order), each bound to its GPU's package.
Cluster perGpu(const NodeTopology& node, int hosts) {
  Cluster c;
  for (int h = 0; h < hosts; ++h) {
    NodeTopology t = node;
    t.host = "host" + std::to_string(h);
    for (size_t g = 0; g < t.gpus.size(); ++g) {
      // nvidia-smi inputs have no bus ids: give each GPU one so ranks can name it.
      if (t.gpus[g].pci.busid.empty()) t.gpus[g].pci.busid = "0000:0" + std::to_string(g) + ":00.0";
      c.ranks.push_back({t.host, t.gpus[g].pci.package, t.gpus[g].pci.busid});
    }
    c.hosts[t.host] = t;
  }
  return c;
}

ClusterHierarchy build(const Cluster& c) {
  auto ch = buildClusterHierarchy(c, "shm", "mpi");
  INFO(ch.status().message());
  REQUIRE(ch.isOk());
  return ch.take();
}

}  // namespace

TEST_CASE("two DGX-2: one NVSwitch level of 16 under the network", "[cluster][fixtures]") {
  auto node = readHwlocXml(kData + "hwloc/nvidiaDGX2.xml");
  REQUIRE(node.isOk());
  ClusterHierarchy ch = build(perGpu(node.value(), 2));
  const Hierarchy& h = ch.hierarchy;
  CHECK(h.describe() == "nvlink(16) x network(2)");
  CHECK(h.level(0).link.kind == LinkKind::kNvswitch);
  CHECK(h.level(0).link.bandwidthGBps == Approx(150));  // 6 NVLink2 links x 25 GB/s
  // The fixture lists no NIC: the network is the documented Ethernet default.
  CHECK(h.level(1).link.kind == LinkKind::kEthernet);
  CHECK(h.level(1).linkSharing == 16);
  CHECK(ch.differences.empty());
}

TEST_CASE("POWER8: two NVLink pairs joined across sockets", "[cluster][fixtures]") {
  auto node = readHwlocXml(kData + "hwloc/power8gpudistances.xml");
  REQUIRE(node.isOk());
  ClusterHierarchy ch = build(perGpu(node.value(), 1));
  const Hierarchy& h = ch.hierarchy;
  CHECK(h.describe() == "nvlink(2) x node(2)");
  CHECK(h.level(0).link.kind == LinkKind::kNvlink);
  CHECK(h.level(0).link.bandwidthGBps == Approx(40));  // 2 NVLink1 links x 20 GB/s
  CHECK(h.level(1).link.bandwidthGBps < h.level(0).link.bandwidthGBps);
}

TEST_CASE("Sierra: PCIe GPUs per socket, 4 IB HCAs", "[cluster][fixtures]") {
  auto node = readHwlocXml(kData + "hwloc/sierra.xml");
  REQUIRE(node.isOk());
  ClusterHierarchy ch = build(perGpu(node.value(), 3));
  const Hierarchy& h = ch.hierarchy;
  CHECK(h.describe() == "socket(2) x node(2) x network(3)");
  CHECK(h.level(0).link.kind == LinkKind::kPcie);
  CHECK(h.level(1).link.kind == LinkKind::kSmp);
  CHECK(h.level(2).link.kind == LinkKind::kInfiniband);
  CHECK(h.level(2).linkSharing == 1);  // 4 ranks reach the network, over 4 HCAs
}

TEST_CASE("8x A100 (nvidia-smi): NVSwitch, many NICs", "[cluster][fixtures]") {
  auto node = readNvidiaSmiTopo(kData + "nvidia-smi/xuesongtap_8xA100_17nics.txt");
  REQUIRE(node.isOk());
  ClusterHierarchy ch = build(perGpu(node.value(), 2));
  CHECK(ch.hierarchy.describe() == "nvlink(8) x network(2)");
  CHECK(ch.hierarchy.level(0).link.kind == LinkKind::kNvswitch);
  CHECK(ch.hierarchy.level(1).linkSharing == 1);
}

TEST_CASE("8x V100 cube mesh (nvidia-smi): one NVLink level over the links",
          "[cluster][fixtures]") {
  auto node = readNvidiaSmiTopo(kData + "nvidia-smi/dlperf_8xV100-SXM2_1xmlx5.txt");
  REQUIRE(node.isOk());
  ClusterHierarchy ch = build(perGpu(node.value(), 2));
  CHECK(ch.hierarchy.describe() == "nvlink(8) x network(2)");
  // Not every pair is linked, but the level runs over NVLink: the slowest link is one NV1.
  CHECK(ch.hierarchy.level(0).link.kind == LinkKind::kNvlink);
  CHECK(ch.hierarchy.level(0).link.bandwidthGBps == Approx(nvlinkLink(0, 1).bandwidthGBps));
  CHECK(ch.hierarchy.level(1).linkSharing == 8);  // one HCA for 8 ranks
}

TEST_CASE("4x A10 (nvidia-smi): no NVLink, PCIe node", "[cluster][fixtures]") {
  auto node = readNvidiaSmiTopo(kData + "nvidia-smi/xuesongtap_4xA10_2nics.txt");
  REQUIRE(node.isOk());
  ClusterHierarchy ch = build(perGpu(node.value(), 2));
  CHECK(ch.hierarchy.describe() == "node(4) x network(2)");
  CHECK(ch.hierarchy.level(1).linkSharing == 2);
}
