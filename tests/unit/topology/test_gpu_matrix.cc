// PCIe relations, the nvidia-smi style matrix and the GPU pair link model.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "topology/gpu_matrix.h"
#include "topology/link_model.h"

namespace strata::topo {
namespace {

PciPlace place(const std::string& busid, std::vector<std::string> bridges, int package = -1,
               int numa = -1) {
  PciPlace p;
  p.busid = busid;
  p.bridges = std::move(bridges);
  p.package = package;
  p.numa = numa;
  return p;
}

// Below root port 0000:17:00.0 sits a PCIe switch: upstream port 18:00.0, downstream ports
// 19:08.0, 19:10.0 and 19:14.0. Under 19:08.0 a second switch (1a:00.0 -> 1b:00.0) nests.
const std::string kRoot = "0000:17:00.0", kUp = "0000:18:00.0";
const std::string kDown0 = "0000:19:08.0", kDown1 = "0000:19:10.0", kDown2 = "0000:19:14.0";

PathType relation(const PciPlace& a, const PciPlace& b) {
  PathType forward = pciRelation(a, b).type;
  CHECK(pciRelation(b, a).type == forward);  // symmetric, always
  return forward;
}

TEST_CASE("gpu matrix: bus ids normalise to lowercase with a 4-digit domain", "[gpu_matrix]") {
  CHECK(normalizeBusid("00000000:3B:00.0") == "0000:3b:00.0");
  CHECK(normalizeBusid("0000:3B:00.0") == "0000:3b:00.0");
  CHECK(normalizeBusid("3b:00.1") == "0000:3b:00.1");
  CHECK(normalizeBusid("0001:c1:1f.7") == "0001:c1:1f.7");
  CHECK(normalizeBusid("HostBridge0") == "hostbridge0");
  CHECK(isBusid("00000000:3B:00.0"));
  CHECK(isBusid("3b:00.0"));
  CHECK_FALSE(isBusid("0000:3a"));
  CHECK_FALSE(isBusid("0000:3b:00"));
  CHECK_FALSE(isBusid("0000:3b:00.0x"));
  CHECK_FALSE(isBusid("pci0000:3a"));
  CHECK_FALSE(isBusid(""));
}

TEST_CASE("gpu matrix: the same device is X, whatever the spelling", "[gpu_matrix]") {
  PciPlace a = place("0000:3b:00.0", {kRoot});
  PciPlace b = place("00000000:3B:00.0", {kRoot});
  CHECK(relation(a, b) == PathType::kSelf);
  CHECK(pathTypeName(pciRelation(a, b)) == "X");
}

TEST_CASE("gpu matrix: two devices behind one switch are PIX", "[gpu_matrix]") {
  PciPlace gpu = place("0000:1c:00.0", {kRoot, kUp, kDown1});
  PciPlace nic = place("0000:1d:00.0", {kRoot, kUp, kDown2});
  CHECK(relation(gpu, nic) == PathType::kPix);
  CHECK(pciHops(gpu, nic) == 2);
  // Two functions below one port, and a device of the switch itself.
  CHECK(relation(place("0000:1c:00.0", {kRoot}), place("0000:1c:00.1", {kRoot})) == PathType::kPix);
  CHECK(relation(gpu, place("0000:1e:00.0", {kRoot, kUp})) == PathType::kPix);
  // Readers that list only switches (NCCL's XML) give one-entry chains.
  CHECK(relation(place("0000:08:00.0", {"0000:07:00.0"}),
                 place("0000:09:00.0", {"0000:07:00.0"})) == PathType::kPix);
}

TEST_CASE("gpu matrix: two functions of one device are PIX", "[gpu_matrix]") {
  // Sierra's v1 export hangs both ports of an HCA straight on the host bridge.
  CHECK(relation(place("0003:01:00.0", {}, 0, 0), place("0003:01:00.1", {}, 0, 0)) ==
        PathType::kPix);
  CHECK(relation(place("0003:01:00.0", {}, 0, 0), place("0003:02:00.0", {}, 0, 0)) ==
        PathType::kNode);
}

TEST_CASE("gpu matrix: nested switches are PXB", "[gpu_matrix]") {
  PciPlace deep = place("0000:1c:00.0", {kRoot, kUp, kDown0, "0000:1a:00.0", "0000:1b:00.0"});
  PciPlace shallow = place("0000:1d:00.0", {kRoot, kUp, kDown2});
  CHECK(relation(deep, shallow) == PathType::kPxb);
  CHECK(pciHops(deep, shallow) == 4);
  CHECK(pathTypeName(pciRelation(deep, shallow)) == "PXB");
}

TEST_CASE("gpu matrix: root ports of one host bridge are PHB", "[gpu_matrix]") {
  // Root ports on root bus 0000:3a belong to the same host bridge.
  PciPlace a = place("0000:3b:00.0", {"0000:3a:00.0"}, 0, 0);
  PciPlace b = place("0000:3c:00.0", {"0000:3a:02.0"}, 0, 0);
  CHECK(relation(a, b) == PathType::kPhb);
  CHECK(pciHops(a, b) == -1);
  // Devices on the root bus itself.
  CHECK(relation(place("0000:00:02.0", {}), place("0000:00:03.0", {})) == PathType::kPhb);
  // A host bridge a reader names in front of the chain.
  CHECK(relation(place("0000:3b:00.0", {"hostbridge0", "0000:3a:00.0"}),
                 place("0000:3c:00.0", {"HostBridge0", "0000:3a:02.0"})) == PathType::kPhb);
}

TEST_CASE("gpu matrix: host bridges of one NUMA node are NODE, of two SYS", "[gpu_matrix]") {
  PciPlace a = place("0000:3b:00.0", {"0000:3a:00.0"}, 0, 0);
  PciPlace sameNuma = place("0000:18:00.0", {"0000:17:00.0"}, 0, 0);
  PciPlace otherNuma = place("0000:5e:00.0", {"0000:5d:00.0"}, 0, 1);  // SNC / NPS
  PciPlace otherSocket = place("0000:af:00.0", {"0000:ae:00.0"}, 1, 2);
  CHECK(relation(a, sameNuma) == PathType::kNode);
  // NVML's NODE is "connected to the same NUMA node": two NUMA nodes of a socket are SYS.
  CHECK(relation(a, otherNuma) == PathType::kSys);
  CHECK(relation(a, otherSocket) == PathType::kSys);
  CHECK(relation(place("0000:3b:00.0", {"hostbridge0", "0000:3a:00.0"}, 0, 0),
                 place("0000:3c:00.0", {"hostbridge1", "0000:3a:02.0"}, 0, 0)) == PathType::kNode);
  CHECK(pathTypeName(pciRelation(a, sameNuma)) == "NODE");
  CHECK(pathTypeName(pciRelation(a, otherSocket)) == "SYS");
}

TEST_CASE("gpu matrix: without packages NUMA decides, without either SYS", "[gpu_matrix]") {
  PciPlace a = place("0000:3b:00.0", {"0000:3a:00.0"}, -1, 0);
  CHECK(relation(a, place("0000:18:00.0", {"0000:17:00.0"}, -1, 0)) == PathType::kNode);
  CHECK(relation(a, place("0000:af:00.0", {"0000:ae:00.0"}, -1, 1)) == PathType::kSys);
  CHECK(relation(place("", {}), place("", {})) == PathType::kSys);
  // Without NUMA nodes the packages decide.
  CHECK(relation(place("0000:3b:00.0", {"0000:3a:00.0"}, 0, -1),
                 place("0000:18:00.0", {"0000:17:00.0"}, 0, -1)) == PathType::kNode);
  CHECK(relation(place("0000:3b:00.0", {"0000:3a:00.0"}, 0, -1),
                 place("0000:af:00.0", {"0000:ae:00.0"}, 1, -1)) == PathType::kSys);
  CHECK(relation(place("0000:3b:00.0", {}), place("0000:af:00.0", {})) == PathType::kSys);
}

// Two sockets. Socket 0 (package 0, NUMA 0): a switch below root port 17:00.0 holds GPU0, GPU1
// and NIC0. Socket 1: GPU2 and NIC1 on two root ports of host bridge b2, GPU3 on host bridge d8.
// NVLinks: GPU0-GPU1 x2 and GPU1-GPU2 x1 (listed from GPU2's end).
NodeTopology twoSocketNode() {
  NodeTopology topo;
  topo.packages = 2;
  topo.numaNodes = 2;
  auto gpu = [&](const std::string& busid, std::vector<std::string> bridges, int socket,
                 int width) {
    Gpu g;
    g.name = "Tesla V100-SXM2-16GB";
    g.vendor = "nvidia";
    g.pci = place(busid, std::move(bridges), socket, socket);
    g.pci.linkGen = 3;
    g.pci.linkWidth = width;
    // Socket 0's affinity is known, socket 1's is not (the columns then say N/A).
    if (socket == 0) g.cpuAffinity = "0-23,48-71";
    if (socket == 0) g.numaAffinity = "0";
    topo.gpus.push_back(g);
  };
  gpu("0000:1a:00.0", {kRoot, kUp, kDown0}, 0, 16);
  gpu("0000:1b:00.0", {kRoot, kUp, kDown1}, 0, 16);
  gpu("0000:b3:00.0", {"0000:b2:00.0"}, 1, 16);
  gpu("0000:d9:00.0", {"0000:d8:00.0"}, 1, 8);
  auto nic = [&](const std::string& name, const std::string& busid,
                 std::vector<std::string> bridges, int socket) {
    Nic n;
    n.name = name;
    n.type = "infiniband";
    n.pci = place(busid, std::move(bridges), socket, socket);
    topo.nics.push_back(n);
  };
  nic("mlx5_0", "0000:1c:00.0", {kRoot, kUp, kDown2}, 0);
  nic("mlx5_1", "0000:b4:00.0", {"0000:b2:02.0"}, 1);
  GpuLink l01;
  l01.a = 0;
  l01.b = 1;
  l01.count = 2;
  GpuLink l21;
  l21.a = 2;
  l21.b = 1;
  l21.count = 1;
  topo.links = {l01, l21};
  return topo;
}

TEST_CASE("gpu matrix: the connection matrix of a two-socket node", "[gpu_matrix]") {
  ConnectionMatrix m = connectionMatrix(twoSocketNode());
  CHECK(m.names == std::vector<std::string>{"GPU0", "GPU1", "GPU2", "GPU3", "NIC0", "NIC1"});
  CHECK(m.legend == std::vector<std::string>{"NIC0: mlx5_0", "NIC1: mlx5_1"});
  std::vector<std::vector<std::string>> expected = {
      {"X", "NV2", "SYS", "SYS", "PIX", "SYS"},  {"NV2", "X", "NV1", "SYS", "PIX", "SYS"},
      {"SYS", "NV1", "X", "NODE", "SYS", "PHB"}, {"SYS", "SYS", "NODE", "X", "SYS", "NODE"},
      {"PIX", "PIX", "SYS", "SYS", "X", "SYS"},  {"SYS", "SYS", "PHB", "NODE", "SYS", "X"}};
  CHECK(m.cells == expected);
}

TEST_CASE("gpu matrix: formatMatrix prints aligned columns and both legends", "[gpu_matrix]") {
  const std::string expected =
      "      GPU0  GPU1  GPU2  GPU3  NIC0  NIC1  CPU Affinity  NUMA Affinity\n"
      "GPU0  X     NV2   SYS   SYS   PIX   SYS   0-23,48-71    0\n"
      "GPU1  NV2   X     NV1   SYS   PIX   SYS   0-23,48-71    0\n"
      "GPU2  SYS   NV1   X     NODE  SYS   PHB   N/A           N/A\n"
      "GPU3  SYS   SYS   NODE  X     SYS   NODE  N/A           N/A\n"
      "NIC0  PIX   PIX   SYS   SYS   X     SYS\n"
      "NIC1  SYS   SYS   PHB   NODE  SYS   X\n"
      "\n"
      "Legend:\n"
      "\n"
      "  X    = Self\n"
      "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes "
      "(e.g., QPI/UPI)\n"
      "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges "
      "within a NUMA node\n"
      "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n"
      "  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host "
      "Bridge)\n"
      "  PIX  = Connection traversing at most a single PCIe bridge\n"
      "  NV#  = Connection traversing a bonded set of # NVLinks\n"
      "\n"
      "NIC Legend:\n"
      "\n"
      "  NIC0: mlx5_0\n"
      "  NIC1: mlx5_1\n";
  CHECK(formatMatrix(connectionMatrix(twoSocketNode())) == expected);
}

TEST_CASE("gpu matrix: NVSwitch pairs print their link count, wider columns stay aligned",
          "[gpu_matrix]") {
  NodeTopology topo;
  topo.gpus.resize(3);
  GpuLink full;
  full.a = 0;
  full.b = 1;
  full.kind = LinkKind::kNvswitch;
  full.count = 18;
  GpuLink unknown = full;
  unknown.b = 2;
  unknown.count = 0;
  topo.links = {full, unknown};
  const std::string expected =
      "      GPU0  GPU1  GPU2  CPU Affinity  NUMA Affinity\n"
      "GPU0  X     NV18  NV    N/A           N/A\n"
      "GPU1  NV18  X     SYS   N/A           N/A\n"
      "GPU2  NV    SYS   X     N/A           N/A\n";
  std::string text = formatMatrix(connectionMatrix(topo));
  CHECK(text.substr(0, text.find("\nLegend:")) == expected);
  CHECK(text.find("NIC Legend") == std::string::npos);
}

TEST_CASE("gpu matrix: an unnamed NIC's legend says unknown, with what is known", "[gpu_matrix]") {
  Nic named;
  named.name = "mlx5_0";
  CHECK(nicLegendEntry(0, named) == "NIC0: mlx5_0");
  Nic efa;
  efa.type = "efa";
  efa.pci.busid = "0000:10:1b.0";
  CHECK(nicLegendEntry(3, efa) == "NIC3: unknown (efa, pci 0000:10:1b.0)");
  CHECK(nicLegendEntry(1, Nic{}) == "NIC1: unknown");
  // A node of NICs only has no affinity columns: nvidia-smi prints them for GPU rows.
  NodeTopology nicsOnly;
  nicsOnly.nics = {efa, named};
  const ConnectionMatrix m = connectionMatrix(nicsOnly);
  CHECK(m.cpuAffinity.empty());
  CHECK(formatMatrix(m).find("Affinity") == std::string::npos);
  CHECK(m.legend ==
        std::vector<std::string>{"NIC0: unknown (efa, pci 0000:10:1b.0)", "NIC1: mlx5_0"});
}

TEST_CASE("gpu matrix: an empty node prints only the legend", "[gpu_matrix]") {
  ConnectionMatrix m = connectionMatrix(NodeTopology{});
  CHECK(m.names.empty());
  CHECK(formatMatrix(m).rfind("\nLegend:\n", 0) == 0);
}

TEST_CASE("gpu matrix: gpu pairs over NVLink use the link, V100 being NVLink 2", "[gpu_matrix]") {
  NodeTopology topo = twoSocketNode();
  LinkModel nv = gpuPairLink(topo, 1, 0);
  CHECK(nv.kind == LinkKind::kNvlink);
  CHECK(nv.bandwidthGBps == 50);
  CHECK(nv.latencyUs == 1.0);
  CHECK(nv.source == "hardware");
  CHECK(gpuPairLink(topo, 1, 2).bandwidthGBps == 25);
  // A bandwidth the reader found beats the table.
  topo.links[0].bandwidthGBps = 48.5;
  CHECK(gpuPairLink(topo, 0, 1).bandwidthGBps == 48.5);
  // NVSwitch with an unknown count: the whole GPU's links.
  topo.links[0].kind = LinkKind::kNvswitch;
  topo.links[0].count = 0;
  topo.links[0].bandwidthGBps = 0;
  topo.links[0].generation = 3;
  LinkModel sw = gpuPairLink(topo, 0, 1);
  CHECK(sw.kind == LinkKind::kNvswitch);
  CHECK(sw.bandwidthGBps == 300);
}

TEST_CASE("gpu matrix: gpu pairs without NVLink go over PCIe or SMP", "[gpu_matrix]") {
  NodeTopology topo = twoSocketNode();
  // GPU2-GPU3: NODE, the slower device link (gen3 x8) limits.
  LinkModel node = gpuPairLink(topo, 2, 3);
  CHECK(node.kind == LinkKind::kPcie);
  CHECK(node.bandwidthGBps == Approx(pcieLink(3, 8).bandwidthGBps));
  CHECK(node.latencyUs == 1.5);
  CHECK(node.source == "hardware");
  // GPU0-GPU2: SYS, the SMP link limits and adds its latency.
  LinkModel sys = gpuPairLink(topo, 0, 2);
  CHECK(sys.kind == LinkKind::kSmp);
  CHECK(sys.bandwidthGBps == smpLink().bandwidthGBps);
  CHECK(sys.latencyUs == Approx(2.0));
  // GPU0-GPU3: SYS, but the x8 link is slower still.
  CHECK(gpuPairLink(topo, 0, 3).bandwidthGBps == Approx(pcieLink(3, 8).bandwidthGBps));
  // Without link facts, the table's gen3 x16.
  topo.gpus[2].pci.linkGen = 0;
  topo.gpus[3].pci.linkGen = 0;
  CHECK(gpuPairLink(topo, 2, 3).source == "default");
}

TEST_CASE("gpu matrix: the same gpu is loopback, unknown gpus unknown", "[gpu_matrix]") {
  NodeTopology topo = twoSocketNode();
  CHECK(gpuPairLink(topo, 1, 1).kind == LinkKind::kLoopback);
  CHECK(gpuPairLink(topo, 0, 4).kind == LinkKind::kUnknown);
  CHECK(gpuPairLink(topo, -1, 0).kind == LinkKind::kUnknown);
}

}  // namespace
}  // namespace strata::topo
