// The GPU/NIC connection matrix of every real machine in tests/data/topologies, cell by cell,
// against nvidia-smi topo -m's definitions. Each expected matrix was worked out by hand from the
// fixture's PCI tree (lstopo-no-graphics -i FILE for hwloc files), not copied from the output:
//   PIX  both below one PCIe switch or root port (at most a single bridge between them)
//   PXB  several bridges, not through the host bridge
//   PHB  through one host bridge (the CPU)
//   NODE through two host bridges of one NUMA node
//   SYS  between NUMA nodes (the SMP interconnect)
//   NV#  # NVLinks
// For nvidia-smi's own exports, the printed matrix must be the file's, cell by cell, with its
// affinity columns.
#include <catch2/catch.hpp>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

#include "topology/gpu_matrix.h"
#include "topology/hwloc_reader.h"
#include "topology/nccl_xml.h"
#include "topology/nvsmi.h"

using namespace strata::topo;  // NOLINT: test file
using strata::StatusOr;

namespace {

const std::string kData = STRATA_TEST_DATA_DIR "/topologies/";

std::vector<std::string> words(const std::string& line) {
  std::istringstream in(line);
  std::vector<std::string> out;
  for (std::string w; in >> w;) out.push_back(w);
  return out;
}

// Rows written as "X PIX PHB ...", one string per row.
std::vector<std::vector<std::string>> rows(const std::vector<std::string>& lines) {
  std::vector<std::vector<std::string>> out;
  for (const std::string& line : lines) out.push_back(words(line));
  return out;
}

NodeTopology nccl(const std::string& file) {
  StatusOr<NodeTopology> t = readNcclTopoXml(kData + "nccl/" + file);
  INFO(t.status().message());
  REQUIRE(t.isOk());
  return t.take();
}

NodeTopology hwloc(const std::string& file) {
  StatusOr<NodeTopology> t = readHwlocXml(kData + "hwloc/" + file);
  INFO(t.status().message());
  REQUIRE(t.isOk());
  return t.take();
}

// The cells among the first `n` devices (the GPUs, when n is the GPU count).
std::vector<std::vector<std::string>> corner(const ConnectionMatrix& m, size_t n) {
  std::vector<std::vector<std::string>> out;
  for (size_t r = 0; r < n && r < m.cells.size(); ++r) {
    out.emplace_back(m.cells[r].begin(), m.cells[r].begin() + long(std::min(n, m.cells[r].size())));
  }
  return out;
}

}  // namespace

TEST_CASE("fixture matrix: aws p4d, GPUs under the two CPUs are SYS apart", "[matrix][fixtures]") {
  // Per CPU two PCIe switches (the fake ffff:ff:0N.0), each with 2 GPUs and 1 EFA NIC.
  const NodeTopology t = nccl("p4d-24xl-topo.xml");
  const ConnectionMatrix m = connectionMatrix(t);
  CHECK(m.cells == rows({
                       "X   PIX PHB PHB SYS SYS SYS SYS PIX PHB SYS SYS",  // GPU0
                       "PIX X   PHB PHB SYS SYS SYS SYS PIX PHB SYS SYS",
                       "PHB PHB X   PIX SYS SYS SYS SYS PHB PIX SYS SYS",
                       "PHB PHB PIX X   SYS SYS SYS SYS PHB PIX SYS SYS",
                       "SYS SYS SYS SYS X   PIX PHB PHB SYS SYS PIX PHB",  // GPU4
                       "SYS SYS SYS SYS PIX X   PHB PHB SYS SYS PIX PHB",
                       "SYS SYS SYS SYS PHB PHB X   PIX SYS SYS PHB PIX",
                       "SYS SYS SYS SYS PHB PHB PIX X   SYS SYS PHB PIX",
                       "PIX PIX PHB PHB SYS SYS SYS SYS X   PHB SYS SYS",  // NIC0
                       "PHB PHB PIX PIX SYS SYS SYS SYS PHB X   SYS SYS",
                       "SYS SYS SYS SYS PIX PIX PHB PHB SYS SYS X   PHB",
                       "SYS SYS SYS SYS PHB PHB PIX PIX SYS SYS PHB X",
                   }));
  // <cpu affinity="000000ff,ffff0000,00ffffff"> and "ffffff00,0000ffff,ff000000".
  CHECK(m.cpuAffinity == std::vector<std::string>{"0-23,48-71", "0-23,48-71", "0-23,48-71",
                                                  "0-23,48-71", "24-47,72-95", "24-47,72-95",
                                                  "24-47,72-95", "24-47,72-95", "", "", "", ""});
  CHECK(m.numaAffinity ==
        std::vector<std::string>{"0", "0", "0", "0", "1", "1", "1", "1", "", "", "", ""});
  // EFA functions by PCI class only: no device name in the file.
  CHECK(m.legend[0] == "NIC0: unknown (efa, pci 0000:10:1b.0)");
  // Class codes only, no <gpu> elements: nothing is known about NVLink.
  CHECK_FALSE(t.nvlinkKnown);
  // GPU0-GPU4 crosses the sockets: an SMP link, not PCIe.
  CHECK(gpuPairLink(t, 0, 4).kind == LinkKind::kSmp);
  CHECK(gpuPairLink(t, 0, 2).kind == LinkKind::kPcie);
}

TEST_CASE("fixture matrix: azure ndv2, one PCI domain per device", "[matrix][fixtures]") {
  // Every device sits on its own domain (0001..0008, 0101) right under its CPU: two host
  // bridges of one NUMA node are NODE apart.
  const ConnectionMatrix m = connectionMatrix(nccl("ndv2-topo.xml"));
  CHECK(m.cells == rows({
                       "X    NODE NODE NODE SYS  SYS  SYS  SYS  NODE",
                       "NODE X    NODE NODE SYS  SYS  SYS  SYS  NODE",
                       "NODE NODE X    NODE SYS  SYS  SYS  SYS  NODE",
                       "NODE NODE NODE X    SYS  SYS  SYS  SYS  NODE",
                       "SYS  SYS  SYS  SYS  X    NODE NODE NODE SYS",
                       "SYS  SYS  SYS  SYS  NODE X    NODE NODE SYS",
                       "SYS  SYS  SYS  SYS  NODE NODE X    NODE SYS",
                       "SYS  SYS  SYS  SYS  NODE NODE NODE X    SYS",
                       "NODE NODE NODE NODE SYS  SYS  SYS  SYS  X",
                   }));
  CHECK(m.cpuAffinity[0] == "0-19");
  CHECK(m.cpuAffinity[7] == "20-39");
  CHECK(m.numaAffinity[7] == "1");
}

TEST_CASE("fixture matrix: azure ndv4, four NUMA nodes of one switch each", "[matrix][fixtures]") {
  // numaid 0..3, each with one switch holding 2 GPUs and 2 HCAs, in document order.
  const ConnectionMatrix m = connectionMatrix(nccl("ndv4-topo.xml"));
  std::vector<std::string> expected;
  const int groupOf[16] = {0, 0, 1, 1, 2, 2, 3, 3, 0, 0, 1, 1, 2, 2, 3, 3};  // GPUs, then NICs
  for (int r = 0; r < 16; ++r) {
    std::string row;
    for (int c = 0; c < 16; ++c) {
      row += r == c ? "X " : groupOf[r] == groupOf[c] ? "PIX " : "SYS ";
    }
    expected.push_back(row);
  }
  CHECK(m.cells == rows(expected));
  CHECK(m.cpuAffinity[0] == "0-23");
  CHECK(m.cpuAffinity[2] == "24-47");
  CHECK(m.cpuAffinity[4] == "48-71");
  CHECK(m.cpuAffinity[6] == "72-95");
  CHECK(m.numaAffinity[6] == "3");
}

TEST_CASE("fixture matrix: hwloc cts1-pascal, two GPUs and an HCA on one switch",
          "[matrix][fixtures]") {
  // HostBridge > root port > switch upstream port > one downstream port each for GPU0 (04:00.0),
  // GPU1 (07:00.0) and mlx5_0 (08:00.0): PIX. The two Ethernet ports (0c:00.0/1) sit on another
  // root port of the same host bridge: PHB to the rest, PIX to each other.
  const NodeTopology t = hwloc("cts1-pascal.xml");
  const ConnectionMatrix m = connectionMatrix(t);
  CHECK(m.names == std::vector<std::string>{"GPU0", "GPU1", "NIC0", "NIC1", "NIC2"});
  CHECK(m.cells == rows({
                       "X   PIX PIX PHB PHB",
                       "PIX X   PIX PHB PHB",
                       "PIX PIX X   PHB PHB",
                       "PHB PHB PHB X   PIX",
                       "PHB PHB PHB PIX X",
                   }));
  CHECK(m.legend == std::vector<std::string>{"NIC0: mlx5_0", "NIC1: enp12s0f0", "NIC2: enp12s0f1"});
  CHECK(m.cpuAffinity[0] == "0-17,36-53");
  CHECK(m.numaAffinity[0] == "0");
  CHECK_FALSE(t.nvlinkKnown);  // no NVLinkBandwidth matrix in the file
}

TEST_CASE("fixture matrix: hwloc sierra, one host bridge per device group", "[matrix][fixtures]") {
  // POWER9, v1 export: GPU0/GPU1 (0004:04, 0004:05) straight on one host bridge: PHB. The HCA
  // ports (0003:01:00.0/.1) and Ethernet ports (0005:01:00.0/.1) on their own host bridges of
  // NUMA node 0: NODE to the GPUs, PIX between the two functions of one card. GPU2/GPU3 and
  // mlx5_2/3 likewise on NUMA node 8; the two sockets are SYS apart.
  const NodeTopology t = hwloc("sierra.xml");
  const ConnectionMatrix m = connectionMatrix(t);
  CHECK(m.legend == std::vector<std::string>{"NIC0: mlx5_0", "NIC1: mlx5_1", "NIC2: enP5p1s0f0",
                                             "NIC3: enP5p1s0f1", "NIC4: mlx5_2", "NIC5: mlx5_3"});
  CHECK(m.cells == rows({
                       "X    PHB  SYS  SYS  NODE NODE NODE NODE SYS  SYS",
                       "PHB  X    SYS  SYS  NODE NODE NODE NODE SYS  SYS",
                       "SYS  SYS  X    PHB  SYS  SYS  SYS  SYS  NODE NODE",
                       "SYS  SYS  PHB  X    SYS  SYS  SYS  SYS  NODE NODE",
                       "NODE NODE SYS  SYS  X    PIX  NODE NODE SYS  SYS",
                       "NODE NODE SYS  SYS  PIX  X    NODE NODE SYS  SYS",
                       "NODE NODE SYS  SYS  NODE NODE X    PIX  SYS  SYS",
                       "NODE NODE SYS  SYS  NODE NODE PIX  X    SYS  SYS",
                       "SYS  SYS  NODE NODE SYS  SYS  SYS  SYS  X    PIX",
                       "SYS  SYS  NODE NODE SYS  SYS  SYS  SYS  PIX  X",
                   }));
  // NUMA node P#8: nvidia-smi prints OS indices.
  CHECK(m.numaAffinity[2] == "8");
  CHECK(m.cpuAffinity[2] == "88-175");
}

TEST_CASE("fixture matrix: hwloc 24em64t, two sockets whose host bridges share bus 00",
          "[matrix][fixtures]") {
  // Package 0: GPU0 (06:00.0), eth0/eth1 (04:00.0/.1) and mlx4_0 (05:00.0) each below their
  // own root port of one host bridge. Package 1: GPU1 (14:00.0) and GPU2 (11:00.0) below two
  // root ports of another. CPUs are numbered alternately between the sockets.
  const ConnectionMatrix m = connectionMatrix(hwloc("24em64t-2n6c2t-pci.xml"));
  CHECK(m.cells == rows({
                       "X   SYS SYS PHB PHB PHB",
                       "SYS X   PHB SYS SYS SYS",
                       "SYS PHB X   SYS SYS SYS",
                       "PHB SYS SYS X   PIX PHB",
                       "PHB SYS SYS PIX X   PHB",
                       "PHB SYS SYS PHB PHB X",
                   }));
  CHECK(m.cpuAffinity[0] == "0,2,4,6,8,10,12,14,16,18,20,22");
  CHECK(m.cpuAffinity[1] == "1,3,5,7,9,11,13,15,17,19,21,23");
}

TEST_CASE("fixture matrix: hwloc 32em64t, devices below one root port", "[matrix][fixtures]") {
  // GPU0 (03:00.0) alone on package 0. Package 1's host bridge: eth0/eth1 (81:00.0/.1), GPU1
  // (83:00.0), and GPU2, GPU3 (84:00.0/.1) with mlx5_0 (04:00.0), each group below one root port.
  const ConnectionMatrix m = connectionMatrix(hwloc("32em64t-2n8c2t-pci-wholeio.xml"));
  CHECK(m.cells == rows({
                       "X   SYS SYS SYS SYS SYS SYS",
                       "SYS X   PHB PHB PHB PHB PHB",
                       "SYS PHB X   PIX PHB PHB PIX",
                       "SYS PHB PIX X   PHB PHB PIX",
                       "SYS PHB PHB PHB X   PIX PHB",
                       "SYS PHB PHB PHB PIX X   PHB",
                       "SYS PHB PIX PIX PHB PHB X",
                   }));
}

TEST_CASE("fixture matrix: hwloc chimera, two NUMA nodes of one package are SYS apart",
          "[matrix][fixtures]") {
  // One package, NUMA nodes P#0 and P#2 (NVML's NODE is "the same NUMA node"). enp4s0 and
  // enp6s0 below two downstream ports of one switch: PIX; GPU0 on another root port: PHB.
  const ConnectionMatrix m = connectionMatrix(hwloc("chimera.xml"));
  CHECK(m.cells == rows({
                       "X   SYS PHB PHB",
                       "SYS X   SYS SYS",
                       "PHB SYS X   PIX",
                       "PHB SYS PIX X",
                   }));
  CHECK(m.numaAffinity == std::vector<std::string>{"0", "2", "", ""});
}

TEST_CASE("fixture matrix: hwloc power8 and epyc, one host bridge per GPU", "[matrix][fixtures]") {
  // POWER8: NVLink pairs 0-1 and 2-3 (NVLinkBandwidth), the sockets SYS apart.
  const NodeTopology p8 = hwloc("power8gpudistances.xml");
  CHECK(p8.nvlinkKnown);
  CHECK(connectionMatrix(p8).cells == rows({
                                          "X   NV2 SYS SYS",
                                          "NV2 X   SYS SYS",
                                          "SYS SYS X   NV2",
                                          "SYS SYS NV2 X",
                                      }));
  // EPYC: each MI50 on its own host bridge; 4 per socket: NODE within, SYS across.
  const ConnectionMatrix epyc = connectionMatrix(hwloc("epyc-corona-p2.xml"));
  CHECK(corner(epyc, 8) == rows({
                               "X    NODE NODE NODE SYS  SYS  SYS  SYS",
                               "NODE X    NODE NODE SYS  SYS  SYS  SYS",
                               "NODE NODE X    NODE SYS  SYS  SYS  SYS",
                               "NODE NODE NODE X    SYS  SYS  SYS  SYS",
                               "SYS  SYS  SYS  SYS  X    NODE NODE NODE",
                               "SYS  SYS  SYS  SYS  NODE X    NODE NODE",
                               "SYS  SYS  SYS  SYS  NODE NODE X    NODE",
                               "SYS  SYS  SYS  SYS  NODE NODE NODE X",
                           }));
}

TEST_CASE("fixture matrix: nvidia-smi exports print as the file has them", "[matrix][fixtures]") {
  // Cell by cell against the file's own rows: every device row, then the affinity columns of
  // the GPU rows (NIC rows have none).
  for (const char* file :
       {"dlperf-hugectr-dlrm_8xV100-SXM2_2xmlx5.txt", "dlperf_8xV100-SXM2_1xmlx5.txt",
        "princeton-della-i14g20_2xGPU_2xmlx5.txt", "xuesongtap_4xA10_2nics.txt",
        "xuesongtap_8xA100_17nics.txt"}) {
    INFO(file);
    const std::string path = kData + "nvidia-smi/" + file;
    StatusOr<ConnectionMatrix> parsed = readNvidiaSmiMatrix(path);
    REQUIRE(parsed.isOk());
    const ConnectionMatrix& m = parsed.value();
    std::ifstream in(path);
    std::string header;
    size_t row = 0;
    for (std::string line; std::getline(in, line) && row < m.names.size();) {
      std::vector<std::string> w = words(line);
      if (header.empty() && w.size() > 1 && w[0] == "GPU0" && w[1] == "GPU1") {
        header = line;
        continue;
      }
      if (w.empty() || w[0] != m.names[row]) continue;
      std::vector<std::string> want(w.begin() + 1, w.end());
      std::vector<std::string> got = m.cells[row];
      if (!m.cpuAffinity.empty() && !m.cpuAffinity[row].empty()) got.push_back(m.cpuAffinity[row]);
      if (!m.numaAffinity.empty() && !m.numaAffinity[row].empty()) {
        got.push_back(m.numaAffinity[row]);
      }
      // "GPU NUMA ID", when printed, is the last word of a GPU row; strata does not print it.
      if (header.find("GPU NUMA ID") != std::string::npos && w[0].rfind("GPU", 0) == 0) {
        want.pop_back();
      }
      CHECK(got == want);
      ++row;
    }
    CHECK(row == m.names.size());
    // The affinity columns the file has, and only those.
    const std::string text = formatMatrix(m);
    CHECK((text.find("CPU Affinity") != std::string::npos) ==
          (header.find("CPU Affinity") != std::string::npos));
    CHECK((text.find("NUMA Affinity") != std::string::npos) ==
          (header.find("NUMA Affinity") != std::string::npos));
  }
}
