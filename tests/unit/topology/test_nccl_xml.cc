// NCCL topology XML: the cloud vendors' NCCL_TOPO_FILE inputs in tests/data/topologies/nccl
// (see SOURCES.tsv there), and small synthetic NCCL_TOPO_DUMP_FILE-shaped documents for the
// <gpu>/<nvlink>/<nic><net> elements, which none of those real files contains: the vendors' files
// only pin the PCI tree and let NCCL add the devices it detects. Every expected value below was
// read off the XML by hand.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "topology/nccl_xml.h"

namespace strata::topo {
namespace {

using Catch::Matchers::Contains;
using Catch::Matchers::StartsWith;

std::string fixture(const std::string& name) {
  return std::string(STRATA_TEST_DATA_DIR) + "/topologies/nccl/" + name;
}

NodeTopology readOk(const std::string& path) {
  StatusOr<NodeTopology> topo = readNcclTopoXml(path);
  INFO(topo.status().message());
  REQUIRE(topo.isOk());
  return topo.value();
}

class TempXml {
 public:
  explicit TempXml(const std::string& text)
      : path_((std::filesystem::temp_directory_path() /
               ("strata_nccl_xml_test_" + std::to_string(getpid()) + ".xml"))
                  .string()) {
    std::ofstream(path_) << text;
  }
  ~TempXml() { std::filesystem::remove(path_); }
  const std::string& path() const { return path_; }

 private:
  std::string path_;
};

// Whether the two GPUs have a link of `kind` with `count` lanes.
void checkLink(const NodeTopology& topo, int a, int b, LinkKind kind, int count) {
  INFO("gpus " << a << " and " << b);
  const GpuLink* link = topo.nvlinkBetween(a, b);
  REQUIRE(link != nullptr);
  CHECK(link->kind == kind);
  CHECK(link->count == count);
  CHECK(link->bandwidthGBps > 0);
}

TEST_CASE("nccl xml: azure ndv2, 8 gpus and 1 infiniband hca over 2 numa nodes", "[nccl_xml]") {
  // Two <cpu numaid=0/1>; under numaid 0 the 3D controllers (class 0x030200) 0001..0004:00:00.0
  // and the InfiniBand controller (0x020700) 0101:00:00.0; under numaid 1 GPUs 0005..0008.
  // Every <pci> says 16 GT/s x16 and sits right under its <cpu>. No NVLink in the file.
  NodeTopology topo = readOk(fixture("ndv2-topo.xml"));
  CHECK(topo.source == "nccl xml " + fixture("ndv2-topo.xml"));
  CHECK(topo.numaNodes == 2);
  CHECK(topo.packages == 2);
  CHECK(topo.interSocket.kind == LinkKind::kSmp);
  REQUIRE(topo.gpus.size() == 8);
  const std::vector<std::string> busids = {"0001:00:00.0", "0002:00:00.0", "0003:00:00.0",
                                           "0004:00:00.0", "0005:00:00.0", "0006:00:00.0",
                                           "0007:00:00.0", "0008:00:00.0"};
  for (int g = 0; g < 8; ++g) {
    INFO("gpu " << g);
    CHECK(topo.gpus[g].pci.busid == busids[g]);
    CHECK(topo.gpus[g].pci.numa == (g < 4 ? 0 : 1));
    CHECK(topo.gpus[g].pci.package == (g < 4 ? 0 : 1));
    // Only its host bridge: the <cpu> and the device's own domain and bus.
    CHECK(topo.gpus[g].pci.bridges ==
          std::vector<std::string>{(g < 4 ? "numa0/" : "numa1/") + busids[g].substr(0, 7)});
    CHECK(topo.gpus[g].pci.linkGen == 4);
    CHECK(topo.gpus[g].pci.linkWidth == 16);
    CHECK(topo.gpus[g].vendor == "nvidia");
    CHECK(topo.gpus[g].name == "NVIDIA GPU");  // no <gpu sm>, no vendor/device ids
    CHECK(topo.gpus[g].cudaIndex == -1);
  }
  REQUIRE(topo.nics.size() == 1);
  CHECK(topo.nics[0].type == "infiniband");
  CHECK(topo.nics[0].pci.busid == "0101:00:00.0");
  CHECK(topo.nics[0].pci.numa == 0);
  CHECK(topo.nics[0].rateGbps == 0);  // no <net speed>: unknown
  CHECK(topo.links.empty());          // the cube-mesh is detected live, not written here
  CHECK(topo.nvswitches == 0);
}

TEST_CASE("nccl xml: azure ndv4, 2 gpus and 2 hcas behind one switch per numa node", "[nccl_xml]") {
  // Four <cpu numaid=0..3>, each holding one bridge ffff:ff:0N.0 (class 0x060400) with two
  // GPUs and two InfiniBand controllers, in this document order:
  //   numa 0: GPUs 0003, 0004; HCAs 0103, 0104      numa 1: GPUs 0001, 0002; HCAs 0101, 0102
  //   numa 2: GPUs 000d, 000e; HCAs 0107, 0108      numa 3: GPUs 000b, 000c; HCAs 0105, 0106
  NodeTopology topo = readOk(fixture("ndv4-topo.xml"));
  CHECK(topo.numaNodes == 4);
  CHECK(topo.packages == 4);  // one per <cpu>: the file cannot say NUMA nodes share a socket
  REQUIRE(topo.gpus.size() == 8);
  REQUIRE(topo.nics.size() == 8);
  const std::vector<std::string> gpuBus = {"0003", "0004", "0001", "0002",
                                           "000d", "000e", "000b", "000c"};
  const std::vector<std::string> nicBus = {"0103", "0104", "0101", "0102",
                                           "0107", "0108", "0105", "0106"};
  for (int i = 0; i < 8; ++i) {
    INFO("device " << i);
    const int numa = i / 2;
    // The <cpu>'s host bridge, then the switch.
    const std::vector<std::string> bridge = {"numa" + std::to_string(numa) + "/ffff:ff",
                                             "ffff:ff:0" + std::to_string(numa + 1) + ".0"};
    CHECK(topo.gpus[i].pci.busid == gpuBus[i] + ":00:00.0");
    CHECK(topo.gpus[i].pci.numa == numa);
    CHECK(topo.gpus[i].pci.package == numa);
    CHECK(topo.gpus[i].pci.bridges == bridge);
    CHECK(topo.gpus[i].pci.linkGen == 4);
    CHECK(topo.nics[i].pci.busid == nicBus[i] + ":00:00.0");
    CHECK(topo.nics[i].type == "infiniband");
    CHECK(topo.nics[i].pci.numa == numa);
    CHECK(topo.nics[i].pci.bridges == bridge);
  }
  CHECK(topo.links.empty());  // NVSwitch links are not in the file
}

TEST_CASE("nccl xml: aws p4d, a100s and efa behind 4 pcie switches", "[nccl_xml]") {
  // Two <cpu>, two switches each (ffff:ff:01.0..04.0, 8 GT/s x16); every switch holds GPUs
  // bb:1c.0 and bb:1d.0 (10de:20b0, A100-SXM4-40GB) and NIC bb:1b.0 (1d0f:efa0, EFA) for
  // bb = 10, 20 (numa 0) and 90, a0 (numa 1). XML comments sit between the elements.
  NodeTopology topo = readOk(fixture("p4d-24xl-topo.xml"));
  CHECK(topo.numaNodes == 2);
  REQUIRE(topo.gpus.size() == 8);
  REQUIRE(topo.nics.size() == 4);
  const std::vector<std::string> bus = {"10", "20", "90", "a0"};
  for (int s = 0; s < 4; ++s) {
    INFO("switch " << s);
    const std::vector<std::string> bridge = {"numa" + std::to_string(s / 2) + "/ffff:ff",
                                             "ffff:ff:0" + std::to_string(s + 1) + ".0"};
    for (int k = 0; k < 2; ++k) {
      const Gpu& gpu = topo.gpus[2 * s + k];
      CHECK(gpu.pci.busid == "0000:" + bus[s] + (k == 0 ? ":1c.0" : ":1d.0"));
      CHECK(gpu.name == "NVIDIA GPU 10de:20b0");
      CHECK(gpu.vendor == "nvidia");
      CHECK(gpu.pci.numa == s / 2);
      CHECK(gpu.pci.bridges == bridge);
      CHECK(gpu.pci.linkGen == 3);
      CHECK(gpu.pci.linkWidth == 16);
    }
    CHECK(topo.nics[s].type == "efa");
    CHECK(topo.nics[s].pci.busid == "0000:" + bus[s] + ":1b.0");
    CHECK(topo.nics[s].pci.numa == s / 2);
    CHECK(topo.nics[s].pci.bridges == bridge);
  }
  CHECK(topo.links.empty());
}

TEST_CASE("nccl xml: aws g5, a pci skeleton without class codes", "[nccl_xml]") {
  // Two <cpu numaid=0/1> holding 4 and 5 <pci busid> with no class, vendor or children: the
  // switches NCCL's detected devices will hang from. Nothing there is a GPU or a NIC yet.
  NodeTopology topo = readOk(fixture("g5.48xl-topo.xml"));
  CHECK(topo.numaNodes == 2);
  CHECK(topo.packages == 2);
  CHECK(topo.gpus.empty());
  CHECK(topo.nics.empty());
  CHECK(topo.links.empty());
}

// Shaped like NCCL_TOPO_DUMP_FILE output (attribute names from NCCL's xml.cc), 4 V100s in a
// ring of NVLinks with a doubled 0-1 link, NICs of each kind. Busids in mixed case and NVML's
// 8-digit domain, as dumps have them.
const char* kDumpV100 = R"(<system version="1">
  <cpu numaid="1" affinity="ffff0000" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="85">
    <pci busid="0000:85:00.0" class="0x060400" link_speed="8.0 GT/s PCIe" link_width="16">
      <pci busid="0000:86:00.0" class="0x030200" vendor="0x10de" device="0x1db1"
           link_speed="8.0 GT/s PCIe" link_width="16">
        <gpu dev="2" sm="70" rank="2" gdr="1">
          <nvlink target="0000:87:00.0" count="1" tclass="0x030200"/>
          <nvlink target="00000000:06:00.0" count="1" tclass="0x030200"/>
        </gpu>
      </pci>
      <pci busid="0000:87:00.0" class="0x030200" link_speed="8.0 GT/s PCIe" link_width="16">
        <gpu dev="3" sm="70" rank="3" gdr="1">
          <nvlink target="0000:86:00.0" count="1" tclass="0x030200"/>
          <nvlink target="0000:07:00.0" count="1" tclass="0x030200"/>
        </gpu>
      </pci>
    </pci>
    <nic>
      <net name="efa0" dev="2" speed="-1" port="1" gdr="0"/>
    </nic>
  </cpu>
  <cpu numaid="0" affinity="0000ffff" arch="x86_64" vendor="GenuineIntel" familyid="6" modelid="85">
    <pci busid="0000:04:00.0" class="0x060400" link_speed="16.0 GT/s PCIe" link_width="16">
      <pci busid="0000:06:00.0" class="0x030200" link_speed="16.0 GT/s PCIe" link_width="16">
        <gpu dev="0" sm="70" rank="0" gdr="1">
          <nvlink target="0000:07:00.0" count="2" tclass="0x030200"/>
          <nvlink target="0000:86:00.0" count="1" tclass="0x030200"/>
          <nvlink target="0000:00:00.0" count="1" tclass="0x068001"/>
        </gpu>
      </pci>
      <pci busid="0000:07:00.0" class="0x030200" link_speed="16.0 GT/s PCIe" link_width="16">
        <gpu dev="1" sm="70" rank="1" gdr="1">
          <nvlink target="0000:06:00.0" count="2" tclass="0x030200"/>
          <nvlink target="0000:87:00.0" count="1" tclass="0x030200"/>
        </gpu>
      </pci>
      <pci busid="0000:0C:00.0" class="0x020700" vendor="0x15b3" link_speed="16.0 GT/s PCIe"
           link_width="16">
        <nic>
          <net name="mlx5_0" dev="0" speed="100000" port="1" guid="0x1" maxconn="262144" gdr="1"/>
          <net name="mlx5_1" dev="1" speed="200000" port="2" guid="0x2" maxconn="262144" gdr="1"/>
        </nic>
      </pci>
      <pci busid="0000:0d:00.0" class="0x020000" vendor="0x15b3" link_speed="16.0 GT/s PCIe"
           link_width="8">
        <nic>
          <net name="mlx5_2" dev="3" speed="25000" port="1" gdr="1"/>
        </nic>
      </pci>
    </pci>
  </cpu>
</system>
)";

TEST_CASE("nccl xml: dump with <gpu>, <nvlink> and <nic><net>", "[nccl_xml]") {
  TempXml file(kDumpV100);
  NodeTopology topo = readOk(file.path());
  // numaid 1 comes first in the document, but logical NUMA indices follow the numaids.
  CHECK(topo.numaNodes == 2);
  REQUIRE(topo.gpus.size() == 4);
  CHECK(topo.gpus[0].cudaIndex == 2);
  CHECK(topo.gpus[0].name == "NVIDIA GPU sm_70");
  CHECK(topo.gpus[0].pci.numa == 1);
  CHECK(topo.gpus[0].pci.linkGen == 3);
  CHECK(topo.gpus[0].pci.bridges == std::vector<std::string>{"numa1/0000:85", "0000:85:00.0"});
  CHECK(topo.gpus[2].cudaIndex == 0);
  CHECK(topo.gpus[2].pci.numa == 0);
  CHECK(topo.gpus[2].pci.linkGen == 4);

  // Document order: [0]=86 (dev 2), [1]=87 (dev 3), [2]=06 (dev 0), [3]=07 (dev 1).
  REQUIRE(topo.links.size() == 4);
  checkLink(topo, 0, 1, LinkKind::kNvlink, 1);
  checkLink(topo, 0, 2, LinkKind::kNvlink, 1);  // target written 00000000:06:00.0
  checkLink(topo, 1, 3, LinkKind::kNvlink, 1);
  checkLink(topo, 2, 3, LinkKind::kNvlink, 2);
  CHECK(topo.nvlinkBetween(0, 3) == nullptr);
  CHECK(topo.nvlinkBetween(1, 2) == nullptr);
  CHECK(topo.nvlinkBetween(2, 3)->generation == 2);
  CHECK(topo.nvswitches == 0);  // the 0x068001 link goes to a CPU, not a switch

  REQUIRE(topo.nics.size() == 4);
  CHECK(topo.nics[0].name == "efa0");  // a <nic> right under <cpu>: no PCI place
  CHECK(topo.nics[0].type == "efa");
  CHECK(topo.nics[0].rateGbps == 0);  // speed -1: unknown
  CHECK(topo.nics[0].pci.busid.empty());
  CHECK(topo.nics[0].pci.numa == 1);
  CHECK(topo.nics[1].name == "mlx5_0");
  CHECK(topo.nics[1].type == "infiniband");
  CHECK(topo.nics[1].rateGbps == 100);  // speed is in Mbit/s
  CHECK(topo.nics[1].port == 1);
  CHECK(topo.nics[1].pci.busid == "0000:0c:00.0");
  CHECK(topo.nics[1].pci.bridges == std::vector<std::string>{"numa0/0000:04", "0000:04:00.0"});
  CHECK(topo.nics[2].name == "mlx5_1");
  CHECK(topo.nics[2].rateGbps == 200);
  CHECK(topo.nics[2].port == 2);
  CHECK(topo.nics[3].type == "roce");  // mlx5 on an Ethernet-class function
  CHECK(topo.nics[3].pci.linkWidth == 8);
}

// DGX A100 shape: each GPU has 2 lanes to each of 6 NVSwitches (12 in all); one GPU (the last)
// is cut down to 4 switches.
std::string nvswitchDump() {
  std::string xml = "<system version=\"1\">\n  <cpu numaid=\"0\">\n";
  for (int g = 0; g < 4; ++g) {
    xml += "    <pci busid=\"0000:0" + std::to_string(g + 1) + ":00.0\" class=\"0x030200\">\n";
    xml += "      <gpu dev=\"" + std::to_string(g) + "\" sm=\"80\" rank=\"" + std::to_string(g) +
           "\" gdr=\"1\">\n";
    for (int s = 0; s < (g == 3 ? 4 : 6); ++s) {
      xml += "        <nvlink target=\"0000:c" + std::to_string(s) +
             ":00.0\" count=\"2\" tclass=\"0x068000\"/>\n";
    }
    xml += "      </gpu>\n    </pci>\n";
  }
  return xml + "  </cpu>\n</system>\n";
}

TEST_CASE("nccl xml: gpus on nvswitches are linked all to all", "[nccl_xml]") {
  TempXml file(nvswitchDump());
  NodeTopology topo = readOk(file.path());
  REQUIRE(topo.gpus.size() == 4);
  CHECK(topo.packages == 1);
  CHECK(topo.interSocket.kind == LinkKind::kUnknown);
  CHECK(topo.nvswitches == 6);
  REQUIRE(topo.links.size() == 6);
  for (int a = 0; a < 4; ++a) {
    for (int b = a + 1; b < 4; ++b) {
      checkLink(topo, a, b, LinkKind::kNvswitch, b == 3 ? 8 : 12);
      CHECK(topo.nvlinkBetween(a, b)->generation == 3);
    }
  }
  CHECK(topo.nvlinkBetween(0, 1)->bandwidthGBps > topo.nvlinkBetween(0, 3)->bandwidthGBps);
}

void checkError(const std::string& text, const std::string& problem) {
  TempXml file(text);
  StatusOr<NodeTopology> topo = readNcclTopoXml(file.path());
  INFO(text);
  REQUIRE_FALSE(topo.isOk());
  CHECK(topo.status().code() == Code::kInvalidArgument);
  CHECK_THAT(topo.status().message(), StartsWith("nccl topology xml " + file.path()));
  CHECK_THAT(topo.status().message(), Contains(problem));
}

TEST_CASE("nccl xml: errors name the file, the line and the problem", "[nccl_xml]") {
  StatusOr<NodeTopology> missing = readNcclTopoXml("/nonexistent/topo.xml");
  REQUIRE_FALSE(missing.isOk());
  CHECK(missing.status().code() == Code::kSystemError);
  CHECK(missing.status().message() == "nccl topology xml /nonexistent/topo.xml: file not found");

  checkError(
      "<system version=\"1\">\n  <cpu numaid=\"0\">\n    <pci busid=\"0000:01:00.0\">\n"
      "  </cpu>\n</system>\n",
      ":4: ");  // the mismatched end tag is on line 4
  checkError("<system>\n  <cpu numaid=\"0\">\n", "Start-end tags mismatch");  // pugixml's words
  checkError("<?xml version=\"1.0\"?>\n<topology version=\"2.0\"/>\n",
             ":2: root element is <topology>, expected <system>");
  checkError(
      "<system>\n <cpu numaid=\"0\">\n  <pci busid=\"0000:01:00.0\">\n"
      "   <gpu dev=\"0\" sm=\"eighty\"/>\n  </pci>\n </cpu>\n</system>\n",
      ":4: <gpu> attribute sm=\"eighty\" is not an integer");
  checkError("<system>\n <cpu numaid=\"0\">\n  <pci class=\"0x030200\"/>\n </cpu>\n</system>\n",
             ":3: <pci> without a busid");
  checkError("<system>\n <cpu numaid=\"0\"/>\n <cpu numaid=\"0\"/>\n</system>\n",
             ":3: a second <cpu> with numaid 0");
  // A <system> with no <cpu> describes no machine (tests/data/regressions/nccl_empty_system.xml).
  checkError("<system version=\"1\">\n</system>\n", ":1: <system> has no <cpu> element");
  checkError("<system version=\"1\"><pci busid=\"0000:01:00.0\"/></system>\n",
             "<system> has no <cpu> element");
  // The walk recurses per <pci>: nesting is bounded well below what the stack takes.
  std::string deep = "<system>\n<cpu numaid=\"0\">\n";
  for (int i = 0; i < 40; ++i) deep += "<pci busid=\"0000:01:00.0\">\n";
  for (int i = 0; i < 40; ++i) deep += "</pci>\n";
  checkError(deep + "</cpu>\n</system>\n", ":35: <pci> nested more than 32 deep");
  // A NUL byte: pugixml would stop there and ignore the rest.
  checkError(std::string("<system><cpu numaid=\"0\"/>\0</system>", 35), "a binary file, not text");
}

TEST_CASE("nccl xml: looksLikeNcclTopoXml tells <system> from hwloc's <topology>", "[nccl_xml]") {
  for (const char* name :
       {"ndv2-topo.xml", "ndv4-topo.xml", "p4d-24xl-topo.xml", "g5.48xl-topo.xml"}) {
    INFO(name);
    CHECK(looksLikeNcclTopoXml(fixture(name)));
  }
  TempXml hwloc("<?xml version=\"1.0\"?>\n<topology version=\"2.0\"><object/></topology>\n");
  CHECK_FALSE(looksLikeNcclTopoXml(hwloc.path()));
  CHECK_FALSE(looksLikeNcclTopoXml("/nonexistent/topo.xml"));
}

}  // namespace
}  // namespace strata::topo
