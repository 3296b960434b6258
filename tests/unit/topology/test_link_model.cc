// The link model: the default table, models built from hardware facts, and link-kind names.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "topology/link_model.h"
#include "topology/node_topology.h"

namespace strata::topo {
namespace {

const std::vector<LinkKind> kAllKinds = {
    LinkKind::kUnknown, LinkKind::kLoopback, LinkKind::kNvlink,       LinkKind::kNvswitch,
    LinkKind::kPcie,    LinkKind::kSmp,      LinkKind::kSharedMemory, LinkKind::kInfiniband,
    LinkKind::kRoce,    LinkKind::kEthernet, LinkKind::kEfa};

TEST_CASE("link model: pcie bandwidth is the encoded lane rate times 80%", "[link_model]") {
  // gen3: 8 GT/s with 128b/130b is 0.985 GB/s a lane; x16 and 80% efficiency give 12.6.
  LinkModel gen3 = pcieLink(3, 16);
  CHECK(gen3.kind == LinkKind::kPcie);
  CHECK(gen3.bandwidthGBps == Approx(12.6).epsilon(1e-3));
  CHECK(gen3.latencyUs == 1.5);
  CHECK(gen3.source == "hardware");
  CHECK(pcieLink(1, 1).bandwidthGBps == Approx(0.2));   // 2.5 GT/s, 8b/10b
  CHECK(pcieLink(2, 16).bandwidthGBps == Approx(6.4));  // 5 GT/s, 8b/10b
  CHECK(pcieLink(4, 16).bandwidthGBps == Approx(25.2).epsilon(1e-3));
  CHECK(pcieLink(5, 16).bandwidthGBps == Approx(50.4).epsilon(1e-3));
  CHECK(pcieLink(6, 16).bandwidthGBps == Approx(94.4).epsilon(1e-3));  // 236 of 256 FLIT bytes
}

TEST_CASE("link model: unknown pcie gen or width assumes gen3 x16, from the table",
          "[link_model]") {
  CHECK(pcieLink(0, 0).bandwidthGBps == pcieLink(3, 16).bandwidthGBps);
  CHECK(pcieLink(0, 0).source == "default");
  CHECK(pcieLink(4, 0).bandwidthGBps == pcieLink(4, 16).bandwidthGBps);
  CHECK(pcieLink(4, 0).source == "default");
  CHECK(pcieLink(0, 8).bandwidthGBps == pcieLink(3, 8).bandwidthGBps);
  CHECK(pcieLink(-1, -4).bandwidthGBps == pcieLink(3, 16).bandwidthGBps);
  // A generation past the table counts as the newest one known, never as unknown.
  CHECK(pcieLink(7, 16).bandwidthGBps == pcieLink(6, 16).bandwidthGBps);
}

TEST_CASE("link model: nvlink per-link rates by generation", "[link_model]") {
  CHECK(nvlinkLink(1, 1).bandwidthGBps == 20);  // P100
  CHECK(nvlinkLink(2, 1).bandwidthGBps == 25);  // V100
  CHECK(nvlinkLink(3, 1).bandwidthGBps == 25);  // A100
  CHECK(nvlinkLink(4, 1).bandwidthGBps == 25);  // H100
  CHECK(nvlinkLink(5, 1).bandwidthGBps == 50);  // B200
  CHECK(nvlinkLink(3, 12).bandwidthGBps == 300);
  CHECK(nvlinkLink(4, 18).bandwidthGBps == 450);
  LinkModel v100 = nvlinkLink(2, 6);
  CHECK(v100.kind == LinkKind::kNvlink);
  CHECK(v100.latencyUs == 1.0);
  CHECK(v100.source == "hardware");
}

TEST_CASE("link model: unknown nvlink generation is 2, unknown count is the whole GPU",
          "[link_model]") {
  CHECK(nvlinkLink(0, 6).bandwidthGBps == 150);
  CHECK(nvlinkLink(0, 6).source == "default");
  CHECK(nvlinkLink(1, 0).bandwidthGBps == 80);   // P100: 4 links
  CHECK(nvlinkLink(2, 0).bandwidthGBps == 150);  // V100: 6 links
  CHECK(nvlinkLink(3, 0).bandwidthGBps == 300);  // A100: 12 links
  CHECK(nvlinkLink(4, 0).bandwidthGBps == 450);  // H100: 18 links
  CHECK(nvlinkLink(5, 0).bandwidthGBps == 900);  // B200: 18 links
  CHECK(nvlinkLink(4, 0).source == "default");
  CHECK(nvlinkLink(9, 1).bandwidthGBps == 50);
}

TEST_CASE("link model: nvlink generation from the GPU model name", "[link_model]") {
  CHECK(nvlinkGenerationForModel("Tesla P100-SXM2-16GB") == 1);
  CHECK(nvlinkGenerationForModel("Tesla V100-SXM2-16GB") == 2);
  CHECK(nvlinkGenerationForModel("Tesla V100-SXM3-32GB") == 2);
  CHECK(nvlinkGenerationForModel("NVIDIA A100-SXM4-80GB") == 3);
  CHECK(nvlinkGenerationForModel("nvidia a100-pcie-40gb") == 3);
  CHECK(nvlinkGenerationForModel("NVIDIA A800 80GB PCIe") == 3);
  CHECK(nvlinkGenerationForModel("NVIDIA H100 80GB HBM3") == 4);
  CHECK(nvlinkGenerationForModel("NVIDIA H200") == 4);
  CHECK(nvlinkGenerationForModel("NVIDIA GH200 480GB") == 4);
  CHECK(nvlinkGenerationForModel("NVIDIA H20") == 4);
  CHECK(nvlinkGenerationForModel("NVIDIA B200") == 5);
  CHECK(nvlinkGenerationForModel("NVIDIA GB200") == 5);
  // Names that merely contain a known one are not it.
  CHECK(nvlinkGenerationForModel("NVIDIA RTX A3000 Laptop GPU") == 0);
  CHECK(nvlinkGenerationForModel("NVIDIA A10") == 0);
  CHECK(nvlinkGenerationForModel("NVIDIA GeForce RTX 4090") == 0);
  CHECK(nvlinkGenerationForModel("cuda0") == 0);
  CHECK(nvlinkGenerationForModel("") == 0);
}

TEST_CASE("link model: smp and shared memory come from the table", "[link_model]") {
  LinkModel smp = smpLink();
  CHECK(smp.kind == LinkKind::kSmp);
  CHECK(smp.bandwidthGBps == 10);
  CHECK(smp.latencyUs == 0.5);
  CHECK(smp.source == "default");
  LinkModel shm = sharedMemoryLink();
  CHECK(shm.kind == LinkKind::kSharedMemory);
  CHECK(shm.bandwidthGBps == 10);
  CHECK(shm.latencyUs == 0.3);
  CHECK(shm.source == "default");
}

TEST_CASE("link model: network bandwidth is rate / 8 times the kind's efficiency", "[link_model]") {
  LinkModel hdr = networkLink(LinkKind::kInfiniband, 200);
  CHECK(hdr.kind == LinkKind::kInfiniband);
  CHECK(hdr.bandwidthGBps == Approx(23.0));
  CHECK(hdr.latencyUs == 1.5);
  CHECK(hdr.source == "hardware");
  CHECK(networkLink(LinkKind::kRoce, 100).bandwidthGBps == Approx(11.25));
  CHECK(networkLink(LinkKind::kRoce, 100).latencyUs == 2.5);
  CHECK(networkLink(LinkKind::kEthernet, 25).bandwidthGBps == Approx(2.65625));
  CHECK(networkLink(LinkKind::kEthernet, 25).latencyUs == 20);
  CHECK(networkLink(LinkKind::kEfa, 100).bandwidthGBps == Approx(10.625));
  CHECK(networkLink(LinkKind::kEfa, 100).latencyUs == 10);
}

TEST_CASE("link model: unknown network rates take the documented defaults", "[link_model]") {
  struct Case {
    LinkKind kind;
    double rateGbps;
  };
  for (Case c : {Case{LinkKind::kInfiniband, 100}, Case{LinkKind::kRoce, 100},
                 Case{LinkKind::kEthernet, 10}, Case{LinkKind::kEfa, 100}}) {
    INFO(linkKindName(c.kind));
    LinkModel unknown = networkLink(c.kind, 0);
    CHECK(unknown.bandwidthGBps == networkLink(c.kind, c.rateGbps).bandwidthGBps);
    CHECK(unknown.source == "default");
    CHECK(networkLink(c.kind, -5).source == "default");
  }
  // Not a network: Ethernet's numbers, the kind kept.
  LinkModel odd = networkLink(LinkKind::kNvlink, 0);
  CHECK(odd.kind == LinkKind::kNvlink);
  CHECK(odd.bandwidthGBps == networkLink(LinkKind::kEthernet, 0).bandwidthGBps);
}

TEST_CASE("link model: more lanes, newer generations and higher rates are never slower",
          "[link_model]") {
  const std::vector<int> widths = {1, 2, 4, 8, 16, 32};
  for (int gen = 1; gen <= 7; ++gen) {
    for (size_t w = 0; w < widths.size(); ++w) {
      INFO("gen " << gen << " x" << widths[w]);
      if (w > 0) {
        CHECK(pcieLink(gen, widths[w]).bandwidthGBps > pcieLink(gen, widths[w - 1]).bandwidthGBps);
      }
      if (gen > 1) {
        CHECK(pcieLink(gen, widths[w]).bandwidthGBps >= pcieLink(gen - 1, widths[w]).bandwidthGBps);
      }
    }
  }
  for (int gen = 1; gen <= 6; ++gen) {
    for (int count = 1; count <= 18; ++count) {
      INFO("nvlink gen " << gen << " x" << count);
      if (count > 1)
        CHECK(nvlinkLink(gen, count).bandwidthGBps > nvlinkLink(gen, count - 1).bandwidthGBps);
      if (gen > 1)
        CHECK(nvlinkLink(gen, count).bandwidthGBps >= nvlinkLink(gen - 1, count).bandwidthGBps);
    }
  }
  for (LinkKind kind :
       {LinkKind::kInfiniband, LinkKind::kRoce, LinkKind::kEthernet, LinkKind::kEfa}) {
    double previous = 0;
    for (double rate : {1.0, 10.0, 25.0, 56.0, 100.0, 200.0, 400.0, 800.0}) {
      INFO(linkKindName(kind) << " at " << rate);
      CHECK(networkLink(kind, rate).bandwidthGBps > previous);
      previous = networkLink(kind, rate).bandwidthGBps;
    }
  }
}

TEST_CASE("link model: the table ranks links as the hardware does", "[link_model]") {
  // NVLink > PCIe > SMP path > 100G network > TCP, by bandwidth; the reverse by latency where
  // the table says so.
  CHECK(nvlinkLink(2, 1).bandwidthGBps > pcieLink(3, 16).bandwidthGBps);
  CHECK(pcieLink(3, 16).bandwidthGBps > smpLink().bandwidthGBps);
  CHECK(networkLink(LinkKind::kInfiniband, 0).bandwidthGBps >
        networkLink(LinkKind::kEthernet, 0).bandwidthGBps);
  CHECK(nvlinkLink(0, 0).latencyUs < pcieLink(0, 0).latencyUs);
  CHECK(networkLink(LinkKind::kInfiniband, 0).latencyUs <
        networkLink(LinkKind::kRoce, 0).latencyUs);
  CHECK(networkLink(LinkKind::kRoce, 0).latencyUs < networkLink(LinkKind::kEfa, 0).latencyUs);
  CHECK(networkLink(LinkKind::kEfa, 0).latencyUs < networkLink(LinkKind::kEthernet, 0).latencyUs);
}

TEST_CASE("link kinds: names round-trip and parsing ignores case", "[link_model]") {
  std::vector<std::string> names;
  for (LinkKind kind : kAllKinds) {
    std::string name = linkKindName(kind);
    LinkKind parsed = LinkKind::kUnknown;
    INFO(name);
    REQUIRE(parseLinkKind(name, &parsed));
    CHECK(parsed == kind);
    for (const std::string& seen : names) CHECK(seen != name);
    names.push_back(name);
  }
  CHECK(std::string(linkKindName(LinkKind::kNvlink)) == "nvlink");
  CHECK(std::string(linkKindName(LinkKind::kInfiniband)) == "infiniband");
  LinkKind kind = LinkKind::kUnknown;
  CHECK(parseLinkKind("NVLink", &kind));
  CHECK(kind == LinkKind::kNvlink);
  CHECK(parseLinkKind("PCIe", &kind));
  CHECK(kind == LinkKind::kPcie);
  CHECK(std::string(linkKindName(LinkKind::kSharedMemory)) == "shm");
  // Short names people write by hand.
  CHECK(parseLinkKind("ib", &kind));
  CHECK(kind == LinkKind::kInfiniband);
  CHECK(parseLinkKind("TCP", &kind));
  CHECK(kind == LinkKind::kEthernet);
}

TEST_CASE("link kinds: an unknown name is refused and leaves the output alone", "[link_model]") {
  LinkKind kind = LinkKind::kSmp;
  CHECK_FALSE(parseLinkKind("qpi", &kind));
  CHECK_FALSE(parseLinkKind("", &kind));
  CHECK_FALSE(parseLinkKind("nvlink ", &kind));
  CHECK(kind == LinkKind::kSmp);
  CHECK(std::string(linkKindName(static_cast<LinkKind>(99))) == "unknown");
}

TEST_CASE("node topology: nvlinkBetween finds a link from either end", "[link_model]") {
  NodeTopology topo;
  topo.gpus.resize(3);
  GpuLink link;
  link.a = 2;
  link.b = 0;
  link.count = 4;
  topo.links.push_back(link);
  REQUIRE(topo.nvlinkBetween(0, 2) != nullptr);
  CHECK(topo.nvlinkBetween(0, 2)->count == 4);
  CHECK(topo.nvlinkBetween(2, 0) == topo.nvlinkBetween(0, 2));
  CHECK(topo.nvlinkBetween(0, 1) == nullptr);
  CHECK(topo.nvlinkBetween(2, 2) == nullptr);
  CHECK(topo.nvlinkBetween(-1, 5) == nullptr);
}

}  // namespace
}  // namespace strata::topo
