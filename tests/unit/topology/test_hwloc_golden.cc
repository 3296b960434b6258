// hwloc XML exports of real machines in, NodeTopology out.
//
// Every expectation below was read off the fixture itself, not off the reader: the counts with
// `lstopo-no-graphics -i FILE --filter io:all` (and --only package|numanode|core), the device
// ids, infos and the NVLinkBandwidth matrix from the XML text. Where the two disagree with the
// fixture README, the comment says so. Provenance: tests/data/topologies/hwloc/SOURCES.tsv.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <set>
#include <string>
#include <vector>

#include "topology/hwloc_reader.h"

namespace strata::topo {
namespace {

const std::string kDir = std::string(STRATA_TEST_DATA_DIR) + "/topologies/hwloc/";

NodeTopology load(const std::string& file) {
  StatusOr<NodeTopology> topo = readHwlocXml(kDir + file);
  INFO(topo.status().message());
  REQUIRE(topo.isOk());
  return topo.take();
}

const Gpu& gpuAt(const NodeTopology& t, const std::string& busid) {
  for (const Gpu& g : t.gpus) {
    if (g.pci.busid == busid) return g;
  }
  FAIL("no gpu at " << busid);
  throw;  // unreachable, FAIL throws
}

const Nic& nicNamed(const NodeTopology& t, const std::string& name, int port = -1) {
  for (const Nic& n : t.nics) {
    if (n.name == name && (port < 0 || n.port == port)) return n;
  }
  FAIL("no nic " << name << " port " << port);
  throw;
}

std::vector<std::string> nicNames(const NodeTopology& t) {
  std::vector<std::string> names;
  for (const Nic& n : t.nics) names.push_back(n.name);
  return names;
}

std::set<std::string> vendors(const NodeTopology& t) {
  std::set<std::string> v;
  for (const Gpu& g : t.gpus) v.insert(g.vendor);
  return v;
}

int gpusOnPackage(const NodeTopology& t, int package) {
  int n = 0;
  for (const Gpu& g : t.gpus) n += g.pci.package == package;
  return n;
}

void checkCpus(const NodeTopology& t, int packages, int numa, int cores) {
  CHECK(t.packages == packages);
  CHECK(t.numaNodes == numa);
  CHECK(t.cores == cores);
  CHECK(t.interSocket.kind == (packages > 1 ? LinkKind::kSmp : LinkKind::kUnknown));
}

// A file in a temporary directory, removed at the end of the test.
struct TempFile {
  std::string path;
  explicit TempFile(const std::string& text) {
    char tmpl[] = "/tmp/strata_hwloc_XXXXXX.xml";
    int fd = mkstemps(tmpl, 4);
    REQUIRE(fd >= 0);
    close(fd);
    path = tmpl;
    std::ofstream(path) << text;
  }
  ~TempFile() { std::remove(path.c_str()); }
};

void checkLoadError(const std::string& path, const std::string& reason,
                    Code code = Code::kInvalidArgument) {
  StatusOr<NodeTopology> topo = readHwlocXml(path);
  REQUIRE_FALSE(topo.isOk());
  CHECK(topo.status().code() == code);
  CHECK_THAT(topo.status().message(), Catch::Matchers::StartsWith("hwloc xml " + path + ":"));
  CHECK_THAT(topo.status().message(), Catch::Matchers::Contains(reason));
}

}  // namespace

// DGX-2H trimmed to 4 PUs. 16 PCI devices [10de:1db8] class 0302 each with a co-processor
// (osdev_type 5) "nvml*" carrying GPUModel "Tesla V100-SXM3-32GB-H"; 8 sit under each package.
// 12 PCI devices with subtype "NVSwitch": 11 are [10de:1ac2] class 0680, one (66:00.0) reads
// class 0000 vendor 0000. The 28x28 NVLinkBandwidth matrix has no GPU-GPU entry; GPUs 0-7 have
// 25000 (MB/s) to each of 6 switches, GPUs 8-15 to the other 6. No HostName info. (The README
// says lstopo shows neither GPU kind; lstopo 2.9 does show the PCI (3D) and CoProc nvml*.)
TEST_CASE("hwloc golden: nvidiaDGX2", "[topology][hwloc]") {
  NodeTopology t = load("nvidiaDGX2.xml");
  checkCpus(t, 2, 2, 4);
  CHECK(t.host == "nvidiaDGX2.xml");
  REQUIRE(t.gpus.size() == 16);
  CHECK(vendors(t) == std::set<std::string>{"nvidia"});
  for (const Gpu& g : t.gpus) CHECK(g.name == "Tesla V100-SXM3-32GB-H");
  CHECK(t.gpus[0].osdev == "nvml0");
  CHECK(gpusOnPackage(t, 0) == 8);
  CHECK(gpusOnPackage(t, 1) == 8);
  const Gpu& first = gpuAt(t, "0000:34:00.0");
  CHECK(first.pci.package == 0);
  CHECK(first.pci.numa == 0);
  // The host bridge (named by the bus it leads to), root port 2b:00.0, four PLX switch ports.
  CHECK(first.pci.bridges == std::vector<std::string>{"hostbridge 0000:2b", "0000:2b:00.0",
                                                      "0000:2c:00.0", "0000:2d:04.0",
                                                      "0000:32:00.0", "0000:33:00.0"});
  // pci_link_speed 15.753846 GB/s: 16 lanes of 8 GT/s with 128b/130b.
  CHECK(first.pci.linkGen == 3);
  CHECK(first.pci.linkWidth == 16);
  CHECK(gpuAt(t, "0000:e7:00.0").pci.package == 1);
  CHECK(gpuAt(t, "0000:e7:00.0").pci.numa == 1);
  CHECK(t.nvswitches == 12);
  CHECK(t.nics.empty());
  // Every pair, across the two baseboards too: 6 links of 25 GB/s into the switches.
  CHECK(t.links.size() == 16 * 15 / 2);
  for (const GpuLink& l : t.links) {
    CHECK(l.kind == LinkKind::kNvswitch);
    CHECK(l.bandwidthGBps == Approx(150));
    CHECK(l.count == 6);
    CHECK(l.generation == 2);
  }
  REQUIRE(t.nvlinkBetween(0, 15) != nullptr);
  REQUIRE(t.nvlinkBetween(3, 5) != nullptr);
}

// POWER8 (Minsky): 4 PCI [10de:15f9] each with cuda*, opencl0d*, nvml* (GPUModel "Tesla
// P100-SXM2-16GB"), 2 per package. NVLinkBandwidth over nvml0..3 and the two packages: 40000
// between nvml0-nvml1 and nvml2-nvml3, 40000 from each GPU to its package, 1000000 on the
// diagonal.
TEST_CASE("hwloc golden: power8gpudistances", "[topology][hwloc]") {
  NodeTopology t = load("power8gpudistances.xml");
  checkCpus(t, 2, 2, 8);
  CHECK(t.host == "drac-12.grenoble.grid5000.fr");
  REQUIRE(t.gpus.size() == 4);
  CHECK(vendors(t) == std::set<std::string>{"nvidia"});
  for (int i = 0; i < 4; ++i) {
    CHECK(t.gpus[i].name == "Tesla P100-SXM2-16GB");
    CHECK(t.gpus[i].osdev == "cuda" + std::to_string(i));
    CHECK(t.gpus[i].cudaIndex == i);
  }
  CHECK(gpuAt(t, "0002:01:00.0").pci.package == 0);
  CHECK(gpuAt(t, "0003:01:00.0").pci.numa == 0);
  CHECK(gpuAt(t, "000a:01:00.0").pci.package == 1);
  CHECK(gpuAt(t, "000b:01:00.0").pci.numa == 1);
  CHECK(gpuAt(t, "0002:01:00.0").pci.bridges ==
        std::vector<std::string>{"hostbridge 0002:00", "0002:00:00.0"});
  // Only the two GPU pairs: the CPU entries and the diagonal are not GPU links.
  REQUIRE(t.links.size() == 2);
  for (auto [a, b] : {std::pair{0, 1}, std::pair{2, 3}}) {
    const GpuLink* l = t.nvlinkBetween(a, b);
    REQUIRE(l != nullptr);
    CHECK(l->kind == LinkKind::kNvlink);
    CHECK(l->bandwidthGBps == Approx(40));
    CHECK(l->count == 2);  // two 20 GB/s NVLink 1 links
    CHECK(l->generation == 1);
  }
  CHECK(t.nvlinkBetween(0, 2) == nullptr);
  CHECK(t.nvswitches == 0);
  CHECK(t.nics.empty());
}

// LLNL Sierra (POWER9), hwloc 1.11 (v1) export. Packages sit beside their NUMA node inside
// Group1 objects; 4 more NUMA nodes P#252-255 (16GB each, the GPUs' memory) make 6. GPUs:
// [10de:1db1] 0004:04/05 and 0035:03/04 with cuda0..3 and DRM card*/renderD*; 0002:02:00.0 is
// the ASPEED VGA [1a03:2000] with card4/controlD68. mlx5_0..3 [15b3:1019] each with a Net hsi*
// (20-byte address), Port1State 4; two Broadcom enP5p1s0f* Ethernet ports. No NVLink matrix.
TEST_CASE("hwloc golden: sierra (v1)", "[topology][hwloc]") {
  NodeTopology t = load("sierra.xml");
  checkCpus(t, 2, 6, 44);
  CHECK(t.host == "sierra3682");
  REQUIRE(t.gpus.size() == 4);
  CHECK(vendors(t) == std::set<std::string>{"nvidia"});
  CHECK(t.gpus[0].name == "Tesla V100-SXM2-16GB");
  CHECK(t.gpus[0].osdev == "cuda0");
  for (const char* busid : {"0004:04:00.0", "0004:05:00.0"}) {
    CHECK(gpuAt(t, busid).pci.package == 0);
    CHECK(gpuAt(t, busid).pci.numa == 0);
    // Right under the host bridge, which both share.
    CHECK(gpuAt(t, busid).pci.bridges == gpuAt(t, "0004:04:00.0").pci.bridges);
    REQUIRE(gpuAt(t, busid).pci.bridges.size() == 1);
    CHECK(gpuAt(t, busid).pci.bridges[0].rfind("hostbridge 0004:", 0) == 0);
  }
  for (const char* busid : {"0035:03:00.0", "0035:04:00.0"}) {
    CHECK(gpuAt(t, busid).pci.package == 1);
    CHECK(gpuAt(t, busid).pci.numa == 1);
  }
  CHECK(nicNames(t) == std::vector<std::string>{"mlx5_0", "mlx5_1", "enP5p1s0f0", "enP5p1s0f1",
                                                "mlx5_2", "mlx5_3"});
  for (const char* name : {"mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"}) {
    const Nic& n = nicNamed(t, name);
    CHECK(n.type == "infiniband");
    CHECK(n.port == 1);
    CHECK(n.state == "active");
  }
  CHECK(nicNamed(t, "mlx5_1").pci.package == 0);
  CHECK(nicNamed(t, "mlx5_2").pci.package == 1);
  CHECK(nicNamed(t, "mlx5_3").pci.numa == 1);
  CHECK(nicNamed(t, "enP5p1s0f0").type == "ethernet");
  CHECK(t.links.empty());
}

// LLNL CTS-1 Pascal node: two [10de:15f8] with opencl/cuda/nvml (GPUModel "Tesla
// P100-PCIE-16GB") and mlx5_0 (+ Net hsi0) behind one PLX switch on package 0; an ASPEED VGA
// and two Ethernet ports enp12s0f0/1 on the same package. Package 1 has no I/O.
TEST_CASE("hwloc golden: cts1-pascal", "[topology][hwloc]") {
  NodeTopology t = load("cts1-pascal.xml");
  checkCpus(t, 2, 2, 36);
  CHECK(t.host == "pascal4");
  REQUIRE(t.gpus.size() == 2);
  CHECK(vendors(t) == std::set<std::string>{"nvidia"});
  for (const Gpu& g : t.gpus) {
    CHECK(g.name == "Tesla P100-PCIE-16GB");
    CHECK(g.pci.package == 0);
    CHECK(g.pci.numa == 0);
    CHECK(g.pci.bridges.size() == 4);  // the host bridge, root port, switch up and down ports
  }
  CHECK(gpuAt(t, "0000:07:00.0").osdev == "cuda1");
  CHECK(nicNames(t) == std::vector<std::string>{"mlx5_0", "enp12s0f0", "enp12s0f1"});
  CHECK(nicNamed(t, "mlx5_0").type == "infiniband");
  CHECK(nicNamed(t, "mlx5_0").pci.busid == "0000:08:00.0");
  CHECK(nicNamed(t, "mlx5_0").pci.package == 0);
  CHECK(nicNamed(t, "enp12s0f1").type == "ethernet");
  CHECK(t.links.empty());
  CHECK(t.nvswitches == 0);
}

// Hand-edited hwloc test file. NVIDIA [10de:1094] at 03:00.0 (package 0), 83:00.0 and 84:00.0
// (package 1); only 84:00.0 has cuda0, whose GPUModel "Tesla K40m" differs from its PCIDevice.
// AMD [1002:6798] VGA 84:00.1 carries opencl0d1; a Matrox VGA at 05:03.0. A ConnectX-4 (ib0 +
// mlx5_0) on package 1 reuses busid 0000:04:00.0, also taken by a SATA controller on package 0.
// The README's "1 CUDA GPU" is the cuda0 one; the other two NVIDIA cards have no OS device.
TEST_CASE("hwloc golden: 32em64t-2n8c2t-pci-wholeio", "[topology][hwloc]") {
  NodeTopology t = load("32em64t-2n8c2t-pci-wholeio.xml");
  checkCpus(t, 2, 2, 16);
  REQUIRE(t.gpus.size() == 4);
  CHECK(vendors(t) == std::set<std::string>{"nvidia", "amd"});
  CHECK(gpuAt(t, "0000:03:00.0").pci.package == 0);
  CHECK(gpuAt(t, "0000:03:00.0").osdev.empty());
  CHECK(gpuAt(t, "0000:84:00.0").name == "Tesla K40m");
  CHECK(gpuAt(t, "0000:84:00.0").osdev == "cuda0");
  CHECK(gpuAt(t, "0000:84:00.0").pci.package == 1);
  CHECK(gpuAt(t, "0000:84:00.1").vendor == "amd");
  CHECK(gpuAt(t, "0000:84:00.1").osdev == "opencl0d1");
  CHECK(nicNames(t) == std::vector<std::string>{"eth0", "eth1", "mlx5_0"});
  const Nic& ib = nicNamed(t, "mlx5_0");
  CHECK(ib.type == "infiniband");
  CHECK(ib.state == "active");
  CHECK(ib.pci.busid == "0000:04:00.0");
  CHECK(ib.pci.package == 1);
  CHECK(ib.pci.numa == 1);
}

// HP SL390s: three [10de:06d2] class 0302 with no OS device and no PCIDevice info (06:00.0 on
// package 0, 14:00.0 and 11:00.0 on package 1), pci_link_speed 4.0; an ATI Rage XL VGA
// [1002:515e] that is no GPU. A ConnectX (VPI) with mlx4_0 (no infos), ib0 and eth2.
TEST_CASE("hwloc golden: 24em64t-2n6c2t-pci", "[topology][hwloc]") {
  NodeTopology t = load("24em64t-2n6c2t-pci.xml");
  checkCpus(t, 2, 2, 12);
  REQUIRE(t.gpus.size() == 3);
  CHECK(vendors(t) == std::set<std::string>{"nvidia"});
  CHECK(gpuAt(t, "0000:06:00.0").pci.package == 0);
  CHECK(gpuAt(t, "0000:14:00.0").pci.package == 1);
  CHECK(gpuAt(t, "0000:11:00.0").pci.numa == 1);
  CHECK(gpuAt(t, "0000:11:00.0").name == "10de:06d2");  // nothing better in the file
  CHECK(gpuAt(t, "0000:06:00.0").pci.linkGen * gpuAt(t, "0000:06:00.0").pci.linkWidth == 16);
  CHECK(nicNames(t) == std::vector<std::string>{"eth0", "eth1", "mlx4_0"});
  CHECK(nicNamed(t, "mlx4_0").type == "infiniband");
  CHECK(nicNamed(t, "mlx4_0").port == 0);
  CHECK(nicNamed(t, "mlx4_0").pci.package == 0);
}

// v1 export (hwloc 1.11.12): one package split into 4 Group0 (2 with a NUMA node). NVIDIA
// [10de:1b81] VGA with cuda0/nvml0 ("GeForce GTX 1070") under NUMA 0; AMD [1002:6863] VGA with
// opencl0d0 ("Vega 10 XTX [Radeon Vega Frontier Edition]") under NUMA 1. Net enp4s0, wlp5s0
// (Wi-Fi), enp6s0.
TEST_CASE("hwloc golden: chimera (v1)", "[topology][hwloc]") {
  NodeTopology t = load("chimera.xml");
  checkCpus(t, 1, 2, 32);
  CHECK(t.host == "chimera");
  REQUIRE(t.gpus.size() == 2);
  CHECK(vendors(t) == std::set<std::string>{"nvidia", "amd"});
  const Gpu& nv = gpuAt(t, "0000:08:00.0");
  CHECK(nv.name == "GeForce GTX 1070");
  CHECK(nv.vendor == "nvidia");
  CHECK(nv.pci.numa == 0);
  const Gpu& amd = gpuAt(t, "0000:44:00.0");
  CHECK(amd.name == "Vega 10 XTX [Radeon Vega Frontier Edition]");
  CHECK(amd.vendor == "amd");
  CHECK(amd.pci.numa == 1);
  CHECK(amd.pci.package == 0);
  CHECK(nicNames(t) == std::vector<std::string>{"enp4s0", "enp6s0"});  // no Wi-Fi
  CHECK(t.links.empty());
}

// LLNL Corona: 8 AMD [1002:66a1] class 0380, each with opencl0d* and rsmi* (8 of each), 4 per
// package, pci_link_speed 31.0. The rsmi GPUModel reads "deon Instinct MI50 32GB" in the file
// (cut short by the hwloc 2.5 RSMI backend); opencl has "Vega 20 WKS GL-XE [Radeon Pro VII]".
// ConnectX-6 c4:00.0 (mlx5_0 + Net hsi0) on package 1; eno1/eno2 Ethernet; ASPEED VGA.
TEST_CASE("hwloc golden: epyc-corona-p2", "[topology][hwloc]") {
  NodeTopology t = load("epyc-corona-p2.xml");
  checkCpus(t, 2, 2, 48);
  CHECK(t.host == "corona282");
  REQUIRE(t.gpus.size() == 8);
  CHECK(vendors(t) == std::set<std::string>{"amd"});
  for (const Gpu& g : t.gpus) {
    CHECK(g.name == "deon Instinct MI50 32GB");
    CHECK(g.osdev.rfind("rsmi", 0) == 0);
    CHECK(g.pci.linkGen == 4);  // 31.0 GB/s is closest to 16 lanes of 16 GT/s (31.5)
    CHECK(g.pci.linkWidth == 16);
  }
  CHECK(gpusOnPackage(t, 0) == 4);
  CHECK(gpusOnPackage(t, 1) == 4);
  CHECK(gpuAt(t, "0000:03:00.0").osdev == "rsmi2");
  CHECK(gpuAt(t, "0000:c3:00.0").pci.numa == 1);
  CHECK(nicNames(t) == std::vector<std::string>{"mlx5_0", "eno1", "eno2"});
  CHECK(nicNamed(t, "mlx5_0").pci.package == 1);
  CHECK(nicNamed(t, "mlx5_0").type == "infiniband");
  CHECK(t.links.empty());
}

// SGI UV2000: 24 packages with a NUMA node each, 192 cores. Matrox VGA [102b:0534] only; six
// ethN; a ConnectX [15b3:1003] (ib0 + mlx4_0, Port1LID but no Port1State) under package 6.
TEST_CASE("hwloc golden: 192em64t-24n8c2t", "[topology][hwloc]") {
  NodeTopology t = load("192em64t-24n8c2t.xml");
  checkCpus(t, 24, 24, 192);
  CHECK(t.host == "uv2000");
  CHECK(t.gpus.empty());
  REQUIRE(t.nics.size() == 7);
  const Nic& ib = nicNamed(t, "mlx4_0");
  CHECK(ib.type == "infiniband");
  CHECK(ib.port == 1);
  CHECK(ib.state.empty());
  CHECK(ib.pci.busid == "0003:01:00.0");
  CHECK(ib.pci.package == 6);
  CHECK(ib.pci.numa == 6);
  CHECK(nicNamed(t, "eth4").pci.package == 4);
  CHECK(nicNamed(t, "eth4").type == "ethernet");
}

// v1 export without nodesets: one NUMA node at the machine root, two packages, and the host
// bridge under the machine, so no device has a package. The ATI ES1000 VGA [1002:515e] is no
// GPU. A dual-port ConnectX: mlx4_0 with Port1LID/Port2LID, and ib0 (Port 1), ib1 (Port 2).
TEST_CASE("hwloc golden: 8em64t-2p2ca2co-nonodesets (v1)", "[topology][hwloc]") {
  NodeTopology t = load("8em64t-2p2ca2co-nonodesets.v1.xml");
  checkCpus(t, 2, 1, 8);
  CHECK(t.gpus.empty());
  CHECK(nicNames(t) == std::vector<std::string>{"eth1", "mlx4_0", "mlx4_0", "eth0"});
  CHECK(nicNamed(t, "mlx4_0", 1).type == "infiniband");
  CHECK(nicNamed(t, "mlx4_0", 2).type == "infiniband");
  CHECK(nicNamed(t, "mlx4_0", 2).pci.package == -1);
  CHECK(nicNamed(t, "mlx4_0", 2).pci.numa == 0);
}

// 8 packages, 8 NUMA nodes and 64 cores in the file, but the allowed cpuset is 0x0000ffff and
// the allowed nodeset 0x3: hwloc keeps 16 cores and 2 NUMA nodes, plus packages 2, 3 and 4
// (logical) for the I/O under them, as lstopo shows. NVIDIA [10de:11ba] VGA devices at
// 0002:01:00.0 (package L#2) and 0004:01:00.0 (package L#4), whose NUMA nodes are disallowed.
TEST_CASE("hwloc golden: 64intel64-3g2n+2n-irregulargroups+pci", "[topology][hwloc]") {
  NodeTopology t = load("64intel64-3g2n+2n-irregulargroups+pci.xml");
  checkCpus(t, 5, 2, 16);
  REQUIRE(t.gpus.size() == 2);
  CHECK(vendors(t) == std::set<std::string>{"nvidia"});
  CHECK(gpuAt(t, "0002:01:00.0").pci.package == 2);
  CHECK(gpuAt(t, "0004:01:00.0").pci.package == 4);
  CHECK(gpuAt(t, "0004:01:00.0").pci.numa == -1);
  CHECK(nicNames(t) == std::vector<std::string>{"eth0", "eth1"});
  CHECK(nicNamed(t, "eth0").pci.package == 0);
  CHECK(nicNamed(t, "eth0").pci.numa == 0);
}

// The remaining hwloc test files: CPU counts from lstopo, and no GPU in any of them. devel09's
// mlx4_0 is typed as a network device (osdev_type 2) beside ib0 and ib1: still one HCA.
TEST_CASE("hwloc golden: CPU-only machines", "[topology][hwloc]") {
  struct Case {
    const char* file;
    int packages, numa, cores;
    size_t nics;
  };
  for (const Case& c :
       {Case{"96em64t-4n4d3ca2co-pci.xml", 16, 4, 96, 8},
        Case{"16amd64-4distances.xml", 8, 8, 16, 0}, Case{"memorysidecaches.xml", 2, 4, 40, 0},
        Case{"2intel64-1n2c-numaroot.v1tov2.xml", 2, 1, 2, 0},
        Case{"devel09-pci.xml", 2, 2, 4, 3}}) {
    INFO(c.file);
    NodeTopology t = load(c.file);
    checkCpus(t, c.packages, c.numa, c.cores);
    CHECK(t.gpus.empty());
    CHECK(t.links.empty());
    CHECK(t.nics.size() == c.nics);
  }
  NodeTopology devel = load("devel09-pci.xml");
  CHECK(nicNames(devel) == std::vector<std::string>{"eth0", "eth1", "mlx4_0"});
  CHECK(nicNamed(devel, "mlx4_0").type == "infiniband");
}

TEST_CASE("hwloc xml: the source names the file", "[topology][hwloc]") {
  CHECK(load("sierra.xml").source == "hwloc xml " + kDir + "sierra.xml");
}

TEST_CASE("hwloc xml: unreadable files are refused naming the file", "[topology][hwloc]") {
  SECTION("missing") {
    checkLoadError("/nonexistent/strata/x.xml", "file not found", Code::kSystemError);
  }
  SECTION("empty") {
    TempFile f("");
    checkLoadError(f.path, "the file is empty");
  }
  SECTION("cut short") {
    TempFile f("<?xml version=\"1.0\"?>\n<topology version=\"2.0\">\n<object type=\"Machine\"");
    checkLoadError(f.path, "not a valid hwloc xml export");
  }
  SECTION("not xml") {
    TempFile f("packages: 2\n");
    checkLoadError(f.path, "not a valid hwloc xml export");
  }
  SECTION("xml of another kind") {
    TempFile f("<system version=\"1\"><cpu numaid=\"0\"/></system>\n");
    checkLoadError(f.path, "not a valid hwloc xml export");
  }
  SECTION("a directory") { checkLoadError(kDir, "is a directory"); }
}

TEST_CASE("hwloc live: this machine has CPUs", "[topology][hwloc]") {
  StatusOr<NodeTopology> live = readLiveHwloc();
  INFO(live.status().message());
  REQUIRE(live.isOk());
  const NodeTopology& t = live.value();
  CHECK(t.source == "live");
  CHECK_FALSE(t.host.empty());
  CHECK(t.packages > 0);
  CHECK(t.numaNodes > 0);
  CHECK(t.cores > 0);
  CHECK(t.cores >= t.packages);
  for (const GpuLink& l : t.links) CHECK(l.a < static_cast<int>(t.gpus.size()));
}

// hwloc's link speed is GB/s over all lanes; the known gen x width products must come back.
TEST_CASE("hwloc pci link speed to generation and width", "[topology][hwloc]") {
  struct Case {
    double gbps;
    int gen, width;
  };
  for (const Case& c : {Case{15.753846, 3, 16}, Case{31.507692, 4, 16}, Case{63.015385, 5, 16},
                        Case{3.938462, 3, 4}, Case{4.0, 1, 16}, Case{8.0, 2, 16}, Case{0.25, 1, 1},
                        Case{0.984615, 3, 1}, Case{31.0, 4, 16}}) {
    INFO(c.gbps);
    int gen = 0, width = 0;
    REQUIRE(detail::pcieFromLinkSpeed(c.gbps, &gen, &width));
    CHECK(gen == c.gen);
    CHECK(width == c.width);
  }
  for (double junk : {0.0, -1.0, 0.2, 0.1, 1000.0}) {
    INFO(junk);
    int gen = 7, width = 7;
    CHECK_FALSE(detail::pcieFromLinkSpeed(junk, &gen, &width));
    CHECK(gen == 7);
    CHECK(width == 7);
  }
}

}  // namespace strata::topo
