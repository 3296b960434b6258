// `nvidia-smi topo -m` outputs from real machines in tests/data/topologies/nvidia-smi (see
// SOURCES.tsv there). Every expected value below was read off the text by hand.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

#include "topology/nvsmi.h"

namespace strata::topo {
namespace {

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

std::string fixture(const std::string& name) {
  return std::string(STRATA_TEST_DATA_DIR) + "/topologies/nvidia-smi/" + name;
}

std::string slurp(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::ostringstream out;
  out << in.rdbuf();
  return out.str();
}

NodeTopology readOk(const std::string& path) {
  StatusOr<NodeTopology> topo = readNvidiaSmiTopo(path);
  INFO(topo.status().message());
  REQUIRE(topo.isOk());
  return topo.value();
}

ConnectionMatrix matrixOk(const std::string& path) {
  StatusOr<ConnectionMatrix> m = readNvidiaSmiMatrix(path);
  INFO(m.status().message());
  REQUIRE(m.isOk());
  return m.value();
}

class TempText {
 public:
  explicit TempText(const std::string& text)
      : path_((std::filesystem::temp_directory_path() /
               ("strata_nvsmi_test_" + std::to_string(getpid()) + ".txt"))
                  .string()) {
    std::ofstream(path_, std::ios::binary) << text;
  }
  ~TempText() { std::filesystem::remove(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

struct Nv {
  int a, b, count;
};

// The topology has exactly `expected` NVLinks (of `kind`), and no other GPU pair has one.
void checkNvlinks(const NodeTopology& topo, const std::vector<Nv>& expected, LinkKind kind) {
  CHECK(topo.links.size() == expected.size());
  const int n = static_cast<int>(topo.gpus.size());
  for (int a = 0; a < n; ++a) {
    for (int b = a + 1; b < n; ++b) {
      INFO("GPU" << a << " - GPU" << b);
      int count = 0;
      for (const Nv& e : expected) {
        if (e.a == a && e.b == b) count = e.count;
      }
      const GpuLink* link = topo.nvlinkBetween(a, b);
      if (count == 0) {
        CHECK(link == nullptr);
        continue;
      }
      REQUIRE(link != nullptr);
      CHECK(link->kind == kind);
      CHECK(link->count == count);
      CHECK(link->bandwidthGBps > 0);
    }
  }
}

void checkGpus(const NodeTopology& topo, const std::vector<int>& package,
               const std::vector<int>& numa) {
  REQUIRE(topo.gpus.size() == package.size());
  for (size_t g = 0; g < package.size(); ++g) {
    INFO("GPU" << g);
    CHECK(topo.gpus[g].name == "GPU" + std::to_string(g));
    CHECK(topo.gpus[g].vendor == "nvidia");
    CHECK(topo.gpus[g].cudaIndex == static_cast<int>(g));
    CHECK(topo.gpus[g].pci.package == package[g]);
    CHECK(topo.gpus[g].pci.numa == numa[g]);
  }
}

TEST_CASE("nvidia-smi: 8x v100 dgx-1 cube-mesh, older layout without numa column", "[nvsmi]") {
  // Columns GPU0..7, mlx5_0 (no legend), "CPU Affinity" only. GPU0-3 0-11,24-35, GPU4-7
  // 12-23,36-47. Each GPU has 6 lanes over 4 peers (e.g. GPU0: NV1 to 1 and 2, NV2 to 3 and 4).
  NodeTopology topo = readOk(fixture("dlperf_8xV100-SXM2_1xmlx5.txt"));
  CHECK(topo.packages == 2);
  CHECK(topo.numaNodes == 0);
  CHECK(topo.interSocket.kind == LinkKind::kSmp);
  checkGpus(topo, {0, 0, 0, 0, 1, 1, 1, 1}, {-1, -1, -1, -1, -1, -1, -1, -1});
  const std::vector<Nv> wiring = {{0, 1, 1}, {0, 2, 1}, {0, 3, 2}, {0, 4, 2}, {1, 2, 2}, {1, 3, 1},
                                  {1, 5, 2}, {2, 3, 2}, {2, 6, 1}, {3, 7, 1}, {4, 5, 1}, {4, 6, 1},
                                  {4, 7, 2}, {5, 6, 2}, {5, 7, 1}, {6, 7, 2}};
  checkNvlinks(topo, wiring, LinkKind::kNvlink);
  REQUIRE(topo.nics.size() == 1);
  CHECK(topo.nics[0].name == "mlx5_0");
  CHECK(topo.nics[0].type == "infiniband");
  CHECK(topo.nics[0].pci.package == 0);  // NODE to GPU0 and GPU1, PIX to GPU2 and GPU3
  CHECK(topo.nics[0].pci.numa == -1);

  ConnectionMatrix m = matrixOk(fixture("dlperf_8xV100-SXM2_1xmlx5.txt"));
  CHECK(m.names == std::vector<std::string>{"GPU0", "GPU1", "GPU2", "GPU3", "GPU4", "GPU5", "GPU6",
                                            "GPU7", "mlx5_0"});
  CHECK(m.legend.empty());
  CHECK(m.cells[8] ==
        std::vector<std::string>{"NODE", "NODE", "PIX", "PIX", "SYS", "SYS", "SYS", "SYS", "X"});
  CHECK(m.cells[0][3] == "NV2");
  CHECK(m.cells[3][8] == "PIX");
}

TEST_CASE("nvidia-smi: 8x v100 with hand-pasted tabs and 2 hcas", "[nvsmi]") {
  // Tabs and runs of spaces mixed ("GPU0\t X \t\tNV1\t    NV2"); the heading
  // "CPU Affinity    NUMA Affinity" uses spaces. GPU0-3 0-23,48-71 numa 0; GPU4-7 numa 1.
  // The wiring differs from the other DGX-1 file: GPU0 has NV1 to 1 and 3, NV2 to 2 and 7.
  NodeTopology topo = readOk(fixture("dlperf-hugectr-dlrm_8xV100-SXM2_2xmlx5.txt"));
  CHECK(topo.packages == 2);
  CHECK(topo.numaNodes == 2);
  checkGpus(topo, {0, 0, 0, 0, 1, 1, 1, 1}, {0, 0, 0, 0, 1, 1, 1, 1});
  const std::vector<Nv> wiring = {{0, 1, 1}, {0, 2, 2}, {0, 3, 1}, {0, 7, 2}, {1, 2, 1}, {1, 3, 2},
                                  {1, 6, 2}, {2, 3, 2}, {2, 5, 1}, {3, 4, 1}, {4, 5, 2}, {4, 6, 2},
                                  {4, 7, 1}, {5, 6, 1}, {5, 7, 2}, {6, 7, 1}};
  checkNvlinks(topo, wiring, LinkKind::kNvlink);
  REQUIRE(topo.nics.size() == 2);
  CHECK(topo.nics[0].name == "mlx5_0");
  CHECK(topo.nics[0].pci.numa == 0);  // NODE to GPU0/1, PIX to GPU2/3
  CHECK(topo.nics[0].pci.package == 0);
  CHECK(topo.nics[1].name == "mlx5_1");
  CHECK(topo.nics[1].pci.numa == 1);  // SYS to GPU0-3, NODE to GPU4/5
  CHECK(topo.nics[1].pci.package == 1);

  ConnectionMatrix m = matrixOk(fixture("dlperf-hugectr-dlrm_8xV100-SXM2_2xmlx5.txt"));
  REQUIRE(m.cells.size() == 10);
  CHECK(m.cells[0] == std::vector<std::string>{"X", "NV1", "NV2", "NV1", "SYS", "SYS", "SYS", "NV2",
                                               "NODE", "SYS"});
  CHECK(m.cells[9][6] == "PIX");
}

TEST_CASE("nvidia-smi: 8x a100 on nvswitches with a 17-nic legend", "[nvsmi]") {
  // NV12 between every two GPUs: 84 lanes per GPU, more than any GPU has, so NVSwitches.
  // All GPUs 0-103 and NUMA 0. NIC0..NIC15 are mlx5_2..mlx5_17, NIC16 is mlx5_bond_0; NIC0-3
  // are PXB to GPU0/1, NIC12-15 PXB to GPU6/7, NIC16 SYS to every GPU.
  NodeTopology topo = readOk(fixture("xuesongtap_8xA100_17nics.txt"));
  CHECK(topo.packages == 1);
  CHECK(topo.numaNodes == 1);
  CHECK(topo.interSocket.kind == LinkKind::kUnknown);
  checkGpus(topo, std::vector<int>(8, 0), std::vector<int>(8, 0));
  std::vector<Nv> all;
  for (int a = 0; a < 8; ++a) {
    for (int b = a + 1; b < 8; ++b) all.push_back({a, b, 12});
  }
  checkNvlinks(topo, all, LinkKind::kNvswitch);
  REQUIRE(topo.nics.size() == 17);
  for (int i = 0; i < 16; ++i) {
    INFO("NIC" << i);
    CHECK(topo.nics[i].name == "mlx5_" + std::to_string(i + 2));
    CHECK(topo.nics[i].type == "infiniband");
    CHECK(topo.nics[i].pci.numa == 0);
  }
  CHECK(topo.nics[16].name == "mlx5_bond_0");
  CHECK(topo.nics[16].type == "roce");
  CHECK(topo.nics[16].pci.numa == -1);

  ConnectionMatrix m = matrixOk(fixture("xuesongtap_8xA100_17nics.txt"));
  REQUIRE(m.names.size() == 25);
  CHECK(m.names[8] == "NIC0");
  CHECK(m.names[24] == "NIC16");
  REQUIRE(m.legend.size() == 17);
  CHECK(m.legend[0] == "NIC0: mlx5_2");
  CHECK(m.legend[16] == "NIC16: mlx5_bond_0");
  CHECK(m.cells[8][9] == "PIX");
  CHECK(m.cells[8][10] == "PXB");
  CHECK(m.cells[2][12] == "PXB");
}

TEST_CASE("nvidia-smi: 4x a10 without nvlink, nics on the other numa node", "[nvsmi]") {
  // All cells between GPUs SYS; all GPUs 0-127, NUMA 0, GPU NUMA ID N/A. NIC0/NIC1 (mlx5_0/1)
  // are PIX to each other and SYS to every GPU, so their NUMA node is unknown.
  NodeTopology topo = readOk(fixture("xuesongtap_4xA10_2nics.txt"));
  CHECK(topo.packages == 1);
  CHECK(topo.numaNodes == 1);
  checkGpus(topo, {0, 0, 0, 0}, {0, 0, 0, 0});
  CHECK(topo.links.empty());
  REQUIRE(topo.nics.size() == 2);
  CHECK(topo.nics[0].name == "mlx5_0");
  CHECK(topo.nics[1].name == "mlx5_1");
  for (const Nic& nic : topo.nics) {
    CHECK(nic.type == "infiniband");
    CHECK(nic.pci.numa == -1);
    CHECK(nic.pci.package == -1);
  }
  ConnectionMatrix m = matrixOk(fixture("xuesongtap_4xA10_2nics.txt"));
  CHECK(m.cells[4][5] == "PIX");
  CHECK(m.legend == std::vector<std::string>{"NIC0: mlx5_0", "NIC1: mlx5_1"});
}

TEST_CASE("nvidia-smi: 2 gpus on 2 sockets, one hca each", "[nvsmi]") {
  // GPU0 0-63 NUMA 0, GPU1 64-127 NUMA 1, SYS between them; mlx5_0 NODE to GPU0 only,
  // mlx5_1 NODE to GPU1 only.
  NodeTopology topo = readOk(fixture("princeton-della-i14g20_2xGPU_2xmlx5.txt"));
  CHECK(topo.packages == 2);
  CHECK(topo.numaNodes == 2);
  checkGpus(topo, {0, 1}, {0, 1});
  CHECK(topo.links.empty());
  REQUIRE(topo.nics.size() == 2);
  CHECK(topo.nics[0].pci.numa == 0);
  CHECK(topo.nics[0].pci.package == 0);
  CHECK(topo.nics[1].pci.numa == 1);
  CHECK(topo.nics[1].pci.package == 1);
}

TEST_CASE("nvidia-smi: prompt lines, colour codes and crlf around the table", "[nvsmi]") {
  std::string text = slurp(fixture("princeton-della-i14g20_2xGPU_2xmlx5.txt"));
  std::string crlf;
  for (char c : text) crlf += c == '\n' ? std::string("\r\n") : std::string(1, c);
  const size_t header = crlf.find("GPU0");
  crlf.insert(header, "\x1b[1m");
  crlf.insert(crlf.find("\r\n", header), "\x1b[0m");
  TempText file("[user@della-i14g20 ~]$ nvidia-smi topo -m\r\n" + crlf + "[user@della ~]$ \r\n");
  NodeTopology topo = readOk(file.path());
  CHECK(topo.gpus.size() == 2);
  CHECK(topo.nics.size() == 2);
  CHECK(topo.nics[1].pci.numa == 1);
}

void checkError(const std::string& text, const std::string& problem) {
  TempText file(text);
  StatusOr<NodeTopology> topo = readNvidiaSmiTopo(file.path());
  INFO(text);
  REQUIRE_FALSE(topo.isOk());
  CHECK(topo.status().code() == Code::kInvalidArgument);
  CHECK_THAT(topo.status().message(), StartsWith("nvidia-smi topo " + file.path()));
  CHECK_THAT(topo.status().message(), Contains(problem));
}

TEST_CASE("nvidia-smi: errors name the file, the line and the problem", "[nvsmi]") {
  StatusOr<ConnectionMatrix> missing = readNvidiaSmiMatrix("/nonexistent/topo.txt");
  REQUIRE_FALSE(missing.isOk());
  CHECK(missing.status().code() == Code::kSystemError);
  CHECK(missing.status().message() == "nvidia-smi topo /nonexistent/topo.txt: file not found");

  checkError("Legend:\n  X    = Self\n", "no header line found");
  checkError("", "no header line found");
  const std::string header = "\tGPU0\tGPU1\tmlx5_0\tCPU Affinity\tNUMA Affinity\n";
  checkError(header +
                 "GPU0\t X \tNV2\tNODE\t0-7\t0\n"
                 "GPU1\tNV2\t X\n"
                 "mlx5_0\tNODE\tNODE\t X\n",
             ":3: row GPU1 has 2 cells, the header has 3 devices and 2 affinity columns");
  // One device cell lost, the affinity slides left: the count still fits, the shape does not.
  checkError(header +
                 "GPU0\t X \tNV2\tNODE\t0-7\t0\n"
                 "GPU1\tNV2\t X \t0-7\t0\n"
                 "mlx5_0\tNODE\tNODE\t X\n",
             ":3: row GPU1: cell '0-7' under mlx5_0 is not a connection type");
  checkError(header + "GPU0\t X \tNV2\tNODE\t0-7\t0\t9\t9\n", ":2: row GPU0 has 7 cells");
  checkError(header +
                 "GPU0\t X \tNV2\tNODE\t0-7\t0\n"
                 "mlx5_0\tNODE\tNODE\t X\n",
             ":3: expected the row of GPU1, found 'mlx5_0'");
  checkError(header + "GPU0\t X \tNV2\tNODE\t0-7\t0\n", ":3: missing the row of GPU1");
  checkError(header + "GPU0\tNV2\t X \tNODE\t0-7\t0\n", ":2: row GPU0: cell 'NV2' under GPU0");
  checkError("\tGPU0\tGPU1\tCPU Affinity\tPCIe Gen\n", ":1: unrecognised column heading 'PCIe'");
  checkError("\tGPU0\tGPU0\tCPU Affinity\n", ":1: device GPU0 named twice in the header");
  // Only the legend's codes (tests/data/regressions/nvsmi_unknown_code.txt).
  checkError(header +
                 "GPU0\t X \tNVX\tNODE\t0-7\t0\n"
                 "GPU1\tNVX\t X \tNODE\t0-7\t0\n"
                 "mlx5_0\tNODE\tNODE\t X\n",
             ":2: row GPU0: cell 'NVX' under GPU1 is not a connection type (X, SYS, NODE");
  checkError(header +
                 "GPU0\t X \tNV0\tNODE\t0-7\t0\n"
                 "GPU1\tNV0\t X \tNODE\t0-7\t0\n"
                 "mlx5_0\tNODE\tNODE\t X\n",
             ":2: row GPU0: cell 'NV0' under GPU1 is not a connection type");
  // One relation per pair (tests/data/regressions/nvsmi_asymmetric.txt).
  checkError(header +
                 "GPU0\t X \tNV2\tNODE\t0-7\t0\n"
                 "GPU1\tNV2\t X \tNODE\t0-7\t0\n"
                 "mlx5_0\tNODE\tSYS\t X\n",
             ":4: row mlx5_0: cell 'SYS' under GPU1 differs from 'NODE' in row GPU1 under mlx5_0");
  // Affinities are ascending ranges (tests/data/regressions/nvsmi_cpu_range_35-0.txt).
  for (const char* bad : {"35-0", "0-", "-3", "0,,4", "0-3,", "a-b", "99999999999999999999"}) {
    checkError(header + "GPU0\t X \tNV2\tNODE\t" + bad + "\t0\n",
               "CPU Affinity '" + std::string(bad) + "' is not a list");
  }
  checkError(header + "GPU0\t X \tNV2\tNODE\t0-7\t1-0\n", "NUMA Affinity '1-0' is not a list");
  // Numbers too long for an int once threw std::out_of_range out of std::stoi: a crash.
  checkError("\tGPU0\tGPU99999999999\tCPU Affinity\n",
             ":1: device GPU99999999999: gpu index above");
  const std::string ok = "GPU0\t X \tNV2\tNODE\t0-7\t0\nGPU1\tNV2\t X \tNODE\t0-7\t";
  checkError(header + ok + "99999999999999999999\n", "NUMA Affinity '99999999999999999999'");
  // A trailing N/A and a plain number both read.
  TempText good(header + ok + "N/A\nmlx5_0\tNODE\tNODE\t X\n");
  CHECK(readNvidiaSmiTopo(good.path()).isOk());
}

}  // namespace
}  // namespace strata::topo
