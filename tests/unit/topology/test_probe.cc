// The probes: RDMA ports from a fake sysfs tree, the matching behind the CUDA/NVML probe, the
// probe itself on a machine without a GPU, and the choice of a GPU's NIC.
#include <catch2/catch.hpp>
#include <filesystem>
#include <string>
#include <vector>

#include "topology/gpu_matrix.h"
#include "topology/probe.h"

namespace strata::topo {
namespace {

const std::string kSysfs = std::string(STRATA_TEST_DATA_DIR) + "/sysfs";

PciPlace place(const std::string& busid, std::vector<std::string> bridges, int package, int numa) {
  PciPlace p;
  p.busid = busid;
  p.bridges = std::move(bridges);
  p.package = package;
  p.numa = numa;
  return p;
}

Gpu gpu(const std::string& busid, std::vector<std::string> bridges = {}, int package = -1) {
  Gpu g;
  g.name = "cuda";
  g.pci = place(busid, std::move(bridges), package, package);
  return g;
}

Nic nic(const std::string& name, const std::string& busid, std::vector<std::string> bridges,
        int package, int numa) {
  Nic n;
  n.name = name;
  n.type = "infiniband";
  n.pci = place(busid, std::move(bridges), package, numa);
  return n;
}

NodeTopology fourGpus() {
  NodeTopology topo;
  for (const char* busid : {"0000:1a:00.0", "0000:1b:00.0", "0000:b3:00.0", "0000:d9:00.0"}) {
    topo.gpus.push_back(gpu(busid));
  }
  return topo;
}

// ---- sysfs ---------------------------------------------------------------------------------

TEST_CASE("probe: sysfs port files parse", "[probe]") {
  using detail::nicTypeOf;
  CHECK(detail::parsePortState("4: ACTIVE") == "active");
  CHECK(detail::parsePortState("1: DOWN") == "down");
  CHECK(detail::parsePortState("ACTIVE") == "active");
  CHECK(detail::parsePortState("") == "");
  CHECK(detail::parsePortRate("200 Gb/sec (4X HDR)") == 200);
  CHECK(detail::parsePortRate("2.5 Gb/sec (1X SDR)") == 2.5);
  CHECK(detail::parsePortRate("") == 0);
  CHECK(detail::parsePortRate("fast") == 0);
  CHECK(nicTypeOf("InfiniBand", "mlx5_0", "mlx5_core") == "infiniband");
  CHECK(nicTypeOf("Ethernet", "mlx5_1", "mlx5_core") == "roce");
  CHECK(nicTypeOf("", "mlx4_0", "") == "infiniband");
  CHECK(nicTypeOf("Unspecified", "rdmap0s6", "efa") == "efa");
  CHECK(nicTypeOf("Unspecified", "efa_0", "") == "efa");
  CHECK(nicTypeOf("Unspecified", "qedr0", "") == "unknown");
}

TEST_CASE("probe: sysfs ports become NICs with rate, state, type and bus id", "[probe]") {
  NodeTopology topo;
  REQUIRE(probeInfinibandSysfs(kSysfs + "/dual_port_ib_and_roce", &topo).isOk());
  REQUIRE(topo.nics.size() == 3);
  const Nic& hdr = topo.nics[0];
  CHECK(hdr.name == "mlx5_0");
  CHECK(hdr.port == 1);
  CHECK(hdr.type == "infiniband");
  CHECK(hdr.state == "active");
  CHECK(hdr.rateGbps == 200);
  CHECK(hdr.pci.busid == "0000:3b:00.0");
  const Nic& down = topo.nics[1];
  CHECK(down.name == "mlx5_0");
  CHECK(down.port == 2);
  CHECK(down.state == "down");
  CHECK(down.type == "infiniband");
  CHECK(down.pci.busid == "0000:3b:00.0");
  const Nic& roce = topo.nics[2];
  CHECK(roce.name == "mlx5_1");
  CHECK(roce.port == 1);
  CHECK(roce.type == "roce");
  CHECK(roce.state == "active");
  CHECK(roce.rateGbps == 100);
  CHECK(roce.pci.busid == "0000:d8:00.0");
}

TEST_CASE("probe: sysfs updates the NICs hwloc found and keeps their places", "[probe]") {
  NodeTopology topo;
  topo.nics.push_back(nic("mlx5_0", "0000:3b:00.0", {"0000:3a:00.0"}, 0, 0));
  topo.nics[0].type = "unknown";
  REQUIRE(probeInfinibandSysfs(kSysfs + "/dual_port_ib_and_roce", &topo).isOk());
  REQUIRE(topo.nics.size() == 3);
  CHECK(topo.nics[0].port == 1);
  CHECK(topo.nics[0].type == "infiniband");
  CHECK(topo.nics[0].pci.bridges == std::vector<std::string>{"0000:3a:00.0"});
  // The second port is a NIC of its own at the same place.
  CHECK(topo.nics[1].port == 2);
  CHECK(topo.nics[1].pci.bridges == topo.nics[0].pci.bridges);
  CHECK(topo.nics[1].pci.numa == 0);
  // Probing again changes nothing.
  REQUIRE(probeInfinibandSysfs(kSysfs + "/dual_port_ib_and_roce", &topo).isOk());
  CHECK(topo.nics.size() == 3);
}

TEST_CASE("probe: no infiniband class in sysfs is no NIC and no error", "[probe]") {
  NodeTopology topo;
  CHECK(probeInfinibandSysfs(kSysfs + "/no_infiniband", &topo).isOk());
  CHECK(probeInfinibandSysfs(kSysfs + "/does_not_exist", &topo).isOk());
  CHECK(topo.nics.empty());
  CHECK(probeInfinibandSysfs(kSysfs, nullptr).code() == Code::kInvalidArgument);
}

// ---- CUDA and NVML matching ----------------------------------------------------------------

TEST_CASE("probe: GPUs match by bus id in any spelling", "[probe]") {
  NodeTopology topo = fourGpus();
  CHECK(detail::gpuByBusid(topo, "00000000:B3:00.0") == 2);
  CHECK(detail::gpuByBusid(topo, "0000:1B:00.0") == 1);
  CHECK(detail::gpuByBusid(topo, "d9:00.0") == 3);
  CHECK(detail::gpuByBusid(topo, "0000:1a:00.1") == -1);
  CHECK(detail::gpuByBusid(topo, "") == -1);
}

TEST_CASE("probe: CUDA indices follow the runtime's order; hidden GPUs get -1", "[probe]") {
  NodeTopology topo = fourGpus();
  topo.gpus[1].cudaIndex = 1;  // stale, from a saved description
  // CUDA_VISIBLE_DEVICES=2,0 as the runtime reports it, plus a device the topology lacks.
  int matched =
      detail::applyCudaBusids({"00000000:B3:00.0", "00000000:1A:00.0", "0000:ee:00.0"}, &topo);
  CHECK(matched == 2);
  CHECK(topo.gpus[0].cudaIndex == 1);
  CHECK(topo.gpus[1].cudaIndex == -1);
  CHECK(topo.gpus[2].cudaIndex == 0);
  CHECK(topo.gpus[3].cudaIndex == -1);
}

detail::NvmlGpu nvmlGpu(const std::string& busid, std::vector<std::string> remotes) {
  return detail::NvmlGpu{busid, "Tesla V100-SXM2-16GB", std::move(remotes)};
}

TEST_CASE("probe: NVML links to GPUs count per peer", "[probe]") {
  NodeTopology topo = fourGpus();
  const std::string g0 = "00000000:1A:00.0", g1 = "00000000:1B:00.0", g2 = "00000000:B3:00.0";
  std::vector<detail::NvmlGpu> nvml = {
      nvmlGpu(g0, {g1, g1, g2}),
      nvmlGpu(g1, {g0, g0}),
      nvmlGpu(g2, {g0}),
      nvmlGpu("00000000:D9:00.0", {}),
      nvmlGpu("00000000:EE:00.0", {g0}),  // not in the topology: ignored
  };
  CHECK(detail::applyNvml(nvml, &topo) == 2);
  REQUIRE(topo.links.size() == 2);
  const GpuLink* l01 = topo.nvlinkBetween(0, 1);
  REQUIRE(l01 != nullptr);
  CHECK(l01->kind == LinkKind::kNvlink);
  CHECK(l01->count == 2);
  CHECK(l01->generation == 2);
  CHECK(l01->a == 0);
  CHECK(l01->b == 1);
  REQUIRE(topo.nvlinkBetween(2, 0) != nullptr);
  CHECK(topo.nvlinkBetween(2, 0)->count == 1);
  CHECK(topo.nvlinkBetween(1, 2) == nullptr);
  CHECK(topo.gpus[3].name == "Tesla V100-SXM2-16GB");
  CHECK(topo.nvswitches == 0);
  // The same facts again change nothing.
  CHECK(detail::applyNvml(nvml, &topo) == 0);
  CHECK(topo.links.size() == 2);
}

TEST_CASE("probe: NVML links to shared switches make NVSwitch pairs", "[probe]") {
  NodeTopology topo = fourGpus();
  // Every GPU has 18 links spread over four switches, as on an HGX H100 board.
  const std::vector<std::string> switches = {"0000:05:00.0", "0000:06:00.0", "0000:07:00.0",
                                             "0000:08:00.0"};
  const std::vector<int> perSwitch = {5, 4, 4, 5};
  std::vector<detail::NvmlGpu> nvml;
  for (const Gpu& g : topo.gpus) {
    detail::NvmlGpu info{g.pci.busid, "NVIDIA H100 80GB HBM3", {}};
    for (size_t s = 0; s < switches.size(); ++s) {
      for (int l = 0; l < perSwitch[s]; ++l) info.nvlinkRemotes.push_back(switches[s]);
    }
    nvml.push_back(info);
  }
  CHECK(detail::applyNvml(nvml, &topo) == 6);
  CHECK(topo.links.size() == 6);
  for (const GpuLink& link : topo.links) {
    CHECK(link.kind == LinkKind::kNvswitch);
    CHECK(link.count == 18);
    CHECK(link.generation == 4);
  }
  CHECK(topo.nvswitches == 4);
}

TEST_CASE("probe: NVML updates listed links; a changed count drops the bandwidth", "[probe]") {
  NodeTopology topo = fourGpus();
  GpuLink stale;
  stale.a = 1;
  stale.b = 0;
  stale.count = 4;
  stale.bandwidthGBps = 100;
  GpuLink kept = stale;
  kept.a = 2;
  kept.b = 3;
  kept.count = 1;
  kept.generation = 2;
  kept.bandwidthGBps = 24;
  topo.links = {stale, kept};
  const std::string g0 = "0000:1a:00.0", g1 = "0000:1b:00.0", g2 = "0000:b3:00.0",
                    g3 = "0000:d9:00.0";
  CHECK(detail::applyNvml({nvmlGpu(g0, {g1, g1}), nvmlGpu(g2, {g3})}, &topo) == 1);
  REQUIRE(topo.links.size() == 2);
  CHECK(topo.links[0].count == 2);
  CHECK(topo.links[0].bandwidthGBps == 0);
  CHECK(topo.links[0].generation == 2);
  CHECK(topo.links[1].count == 1);
  CHECK(topo.links[1].bandwidthGBps == 24);
}

// True on a machine where the NVIDIA driver has created its device nodes.
bool hasNvidiaDriver() {
  std::error_code ec;
  return std::filesystem::exists("/dev/nvidiactl", ec);
}

TEST_CASE("probe: CUDA/NVML probing without a GPU is ok and changes nothing", "[probe]") {
  NodeTopology topo = fourGpus();
  topo.gpus[0].cudaIndex = 3;
  GpuLink link;
  link.a = 0;
  link.b = 1;
  link.count = 2;
  topo.links.push_back(link);
  NodeTopology before = topo;
  REQUIRE(probeCudaAndNvml(&topo).isOk());
  CHECK(probeCudaAndNvml(nullptr).code() == Code::kInvalidArgument);
  if (hasNvidiaDriver()) return;  // a GPU machine: the probe may legitimately add facts
  REQUIRE(topo.gpus.size() == before.gpus.size());
  for (size_t g = 0; g < topo.gpus.size(); ++g) {
    CHECK(topo.gpus[g].cudaIndex == before.gpus[g].cudaIndex);
    CHECK(topo.gpus[g].name == before.gpus[g].name);
  }
  CHECK(topo.links.size() == 1);
  CHECK(topo.links[0].count == 2);
  CHECK(topo.nvswitches == 0);
  CHECK(currentGpu(topo) == -1);
}

// ---- closestNic ----------------------------------------------------------------------------

// Socket 0: GPU0 and NIC0 below one switch, GPU1 on its own root port of the same host bridge.
// Socket 1: GPU2 and NIC1 on two root ports of host bridge b2, GPU3 on host bridge d8.
NodeTopology nicNode() {
  NodeTopology topo;
  const std::string root = "0000:17:00.0", up = "0000:18:00.0";
  topo.gpus = {gpu("0000:1a:00.0", {root, up, "0000:19:08.0"}, 0),
               gpu("0000:3b:00.0", {"0000:17:02.0"}, 0), gpu("0000:b3:00.0", {"0000:b2:00.0"}, 1),
               gpu("0000:d9:00.0", {"0000:d8:00.0"}, 1)};
  topo.nics = {nic("mlx5_0", "0000:1c:00.0", {root, up, "0000:19:10.0"}, 0, 0),
               nic("mlx5_1", "0000:b4:00.0", {"0000:b2:02.0"}, 1, 1)};
  return topo;
}

TEST_CASE("probe: closestNic prefers the nearest PCIe path", "[probe]") {
  NodeTopology topo = nicNode();
  CHECK(closestNic(topo, 0, -1) == 0);  // PIX
  CHECK(closestNic(topo, 1, -1) == 0);  // PHB over SYS
  CHECK(closestNic(topo, 2, -1) == 1);  // PHB
  CHECK(closestNic(topo, 3, -1) == 1);  // NODE over SYS
  CHECK(closestNic(NodeTopology{}, 0, 0) == -1);
}

TEST_CASE("probe: closestNic breaks ties by hops, then NUMA, then index", "[probe]") {
  NodeTopology topo = nicNode();
  // A NIC on GPU0's own downstream port: one hop less than NIC0, listed later.
  topo.nics.push_back(
      nic("mlx5_2", "0000:1d:00.0", {"0000:17:00.0", "0000:18:00.0", "0000:19:08.0"}, 0, 0));
  CHECK(closestNic(topo, 0, -1) == 2);
  // GPU3 (NUMA 1 of socket 1) between two NODE NICs: the one on its NUMA node.
  topo.gpus[3].pci.numa = 1;
  topo.nics[1].pci.numa = 3;
  topo.nics.push_back(nic("mlx5_3", "0000:c4:00.0", {"0000:c3:00.0"}, 1, 1));
  CHECK(closestNic(topo, 3, -1) == 3);
  // Equal in every way: the lower index.
  topo.nics[3].pci.numa = 3;
  CHECK(closestNic(topo, 3, -1) == 1);
}

TEST_CASE("probe: closestNic passes over ports that are not active", "[probe]") {
  NodeTopology topo = nicNode();
  topo.nics[0].state = "down";
  topo.nics[1].state = "active";
  CHECK(closestNic(topo, 0, -1) == 1);
  // With nothing usable, the nearest one still.
  topo.nics[1].state = "init";
  CHECK(closestNic(topo, 0, -1) == 0);
}

TEST_CASE("probe: closestNic without a GPU goes by package", "[probe]") {
  NodeTopology topo = nicNode();
  CHECK(closestNic(topo, -1, 1) == 1);
  CHECK(closestNic(topo, -1, 0) == 0);
  CHECK(closestNic(topo, -1, 7) == 0);
  CHECK(closestNic(topo, -1, -1) == 0);
  CHECK(closestNic(topo, 17, 1) == 1);  // an index past the GPUs counts as no GPU
}

}  // namespace
}  // namespace strata::topo
