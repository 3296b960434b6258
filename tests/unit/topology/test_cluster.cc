// The cluster hierarchy: levels and their links from hand-built nodes.
#include <catch2/catch.hpp>
#include <string>

#include "topology/cluster.h"
#include "topology/link_model.h"

using namespace strata::topo;  // NOLINT: test file

namespace {

// A DGX-like host: `n` GPUs on 2 packages, all joined by NVSwitch, `nics` IB NICs at `rate`.
NodeTopology nvswitchHost(const std::string& host, int n, int nics, double rate) {
  NodeTopology t;
  t.host = host;
  t.packages = 2;
  t.numaNodes = 2;
  t.cores = 64;
  for (int i = 0; i < n; ++i) {
    Gpu g;
    g.name = "A100";
    g.vendor = "nvidia";
    g.pci.busid = "0000:" + std::to_string(10 + i) + ":00.0";
    g.pci.package = i < n / 2 ? 0 : 1;
    t.gpus.push_back(g);
  }
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b) {
      t.links.push_back(GpuLink{a, b, LinkKind::kNvswitch, 12, 300, 3});
    }
  }
  for (int i = 0; i < nics; ++i) {
    Nic nic;
    nic.name = "mlx5_" + std::to_string(i);
    nic.type = "infiniband";
    nic.rateGbps = rate;
    nic.state = "active";
    t.nics.push_back(nic);
  }
  return t;
}

Cluster gpuCluster(int hosts, int gpusPerHost, int nics, double rate) {
  Cluster c;
  for (int h = 0; h < hosts; ++h) {
    const std::string name = "h" + std::to_string(h);
    c.hosts[name] = nvswitchHost(name, gpusPerHost, nics, rate);
    for (int g = 0; g < gpusPerHost; ++g) {
      c.ranks.push_back({name, -1, c.hosts[name].gpus[g].pci.busid});
    }
  }
  return c;
}

}  // namespace

TEST_CASE("NVSwitch hosts give an nvlink level under the network", "[cluster]") {
  auto ch = buildClusterHierarchy(gpuCluster(3, 8, 8, 200), "shm", "mpi");
  REQUIRE(ch.isOk());
  const Hierarchy& h = ch.value().hierarchy;
  REQUIRE(h.describe() == "nvlink(8) x network(3)");
  REQUIRE(h.level(0).fabric == "shm");  // inside a host
  REQUIRE(h.level(1).fabric == "mpi");
  REQUIRE(h.level(0).link.kind == LinkKind::kNvswitch);
  REQUIRE(h.level(0).link.bandwidthGBps == Approx(300));
  REQUIRE(h.level(1).link.kind == LinkKind::kInfiniband);
  REQUIRE(h.level(1).link.bandwidthGBps ==
          Approx(networkLink(LinkKind::kInfiniband, 200).bandwidthGBps));
  REQUIRE(h.level(1).linkSharing == 1);  // 8 ranks drive the network, one NIC each
  REQUIRE(ch.value().differences.empty());
}

TEST_CASE("fewer NICs than ranks share them", "[cluster]") {
  auto ch = buildClusterHierarchy(gpuCluster(2, 8, 2, 100), "shm", "mpi");
  REQUIRE(ch.isOk());
  REQUIRE(ch.value().hierarchy.level(1).linkSharing == 4);
}

TEST_CASE("host-only ranks get socket, node and network levels", "[cluster]") {
  Cluster c;
  for (int h = 0; h < 2; ++h) {
    NodeTopology t;
    t.host = "h" + std::to_string(h);
    t.packages = 2;
    c.hosts[t.host] = t;
    for (int r = 0; r < 4; ++r) c.ranks.push_back({t.host, r / 2, ""});
  }
  auto ch = buildClusterHierarchy(c, "shm", "mpi");
  REQUIRE(ch.isOk());
  const Hierarchy& h = ch.value().hierarchy;
  REQUIRE(h.describe() == "socket(2) x node(2) x network(2)");
  REQUIRE(h.level(0).link.kind == LinkKind::kSharedMemory);
  REQUIRE(h.level(1).link.kind == LinkKind::kSmp);
  // No NIC known: the network is assumed to be Ethernet, and says so.
  REQUIRE(h.level(2).link.kind == LinkKind::kEthernet);
}

TEST_CASE("unbound host-only ranks: node and network only", "[cluster]") {
  Cluster c;
  for (int r = 0; r < 6; ++r) c.ranks.push_back({r < 3 ? "a" : "b", -1, ""});
  auto ch = buildClusterHierarchy(c, "shm", "mpi");
  REQUIRE(ch.isOk());
  REQUIRE(ch.value().hierarchy.describe() == "node(3) x network(2)");
}

TEST_CASE("one host keeps only the node level", "[cluster]") {
  Cluster c;
  for (int r = 0; r < 4; ++r) c.ranks.push_back({"solo", -1, ""});
  auto ch = buildClusterHierarchy(c, "shm", "mpi");
  REQUIRE(ch.isOk());
  REQUIRE(ch.value().hierarchy.describe() == "node(4)");
}

TEST_CASE("heterogeneous hosts are reported and stay correct", "[cluster]") {
  Cluster c = gpuCluster(1, 8, 8, 200);
  c.hosts["small"] = nvswitchHost("small", 4, 1, 100);
  for (int g = 0; g < 4; ++g) c.ranks.push_back({"small", -1, c.hosts["small"].gpus[g].pci.busid});
  auto ch = buildClusterHierarchy(c, "shm", "mpi");
  REQUIRE(ch.isOk());
  REQUIRE(ch.value().hierarchy.describe() == "nvlink(4..8) x network(2)");
  REQUIRE(ch.value().differences.size() == 1);
  REQUIRE_THAT(ch.value().differences[0], Catch::Contains("4 GPUs"));
  // The network level is as fast as the slowest host's NIC.
  REQUIRE(ch.value().hierarchy.level(1).link.bandwidthGBps ==
          Approx(networkLink(LinkKind::kInfiniband, 100).bandwidthGBps));
}

TEST_CASE("NVLink islands split a node", "[cluster]") {
  // Two pairs of GPUs, each pair joined by NVLink, the pairs only by PCIe/SMP (like Sierra).
  NodeTopology t;
  t.host = "p9";
  t.packages = 2;
  for (int i = 0; i < 4; ++i) {
    Gpu g;
    g.pci.busid = "0000:0" + std::to_string(i) + ":00.0";
    g.pci.package = i / 2;
    t.gpus.push_back(g);
  }
  t.links.push_back(GpuLink{0, 1, LinkKind::kNvlink, 3, 75, 2});
  t.links.push_back(GpuLink{2, 3, LinkKind::kNvlink, 3, 75, 2});
  Cluster c;
  c.hosts["p9"] = t;
  for (int i = 0; i < 4; ++i) c.ranks.push_back({"p9", -1, t.gpus[i].pci.busid});
  auto ch = buildClusterHierarchy(c, "shm", "mpi");
  REQUIRE(ch.isOk());
  const Hierarchy& h = ch.value().hierarchy;
  REQUIRE(h.describe() == "nvlink(2) x node(2)");
  REQUIRE(h.level(0).link.kind == LinkKind::kNvlink);
  REQUIRE(h.level(0).link.bandwidthGBps == Approx(75));
  REQUIRE(h.level(1).link.kind == LinkKind::kSmp);
}

TEST_CASE("bus ids match across domain widths and case", "[cluster]") {
  NodeTopology t;
  Gpu g;
  g.pci.busid = "0000:3b:00.0";
  t.gpus.push_back(g);
  REQUIRE(gpuByBusid(t, "00000000:3B:00.0") == 0);
  REQUIRE(gpuByBusid(t, "0000:3c:00.0") == -1);
  REQUIRE(gpuByBusid(t, "") == -1);
}
