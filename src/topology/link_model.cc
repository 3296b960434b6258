// The default link table and the models built from what the hardware reports.
//
// Where the numbers come from (all bandwidths are per direction, GB/s = 1e9 bytes/s):
//
// PCIe (PCI-SIG base specifications): raw rate per lane 2.5, 5, 8, 16, 32, 64 GT/s for
//   gen1..gen6. Line encoding: 8b/10b for gen1-2, 128b/130b for gen3-5, and for gen6 the 256-byte
//   FLIT carries 236 bytes of TLP data (the rest is DLLP, CRC and FEC). On top of that each TLP
//   pays a header, sequence number and LCRC (~20-28 bytes per 256-byte payload), and the link
//   carries ACK and flow-control DLLPs, so transfers reach ~80% of the encoded rate (a gen3 x16
//   link gives the ~12-13 GB/s that cudaMemcpy benchmarks show). Latency ~1.5 us for a transfer
//   through the root complex or a switch.
// NVLink (NVIDIA product briefs), per link and direction: gen1 20 (P100), gen2 25 (V100), gen3
//   25 (A100), gen4 25 (H100), gen5 50 (B200). Links per GPU, used when the count is unknown (the
//   NVSwitch case, where every pair gets the GPU's full NVLink bandwidth): P100 4, V100 6,
//   A100 12, H100 18, B200 18. Latency ~1 us.
// SMP: one Intel UPI link moves 10.4 GT/s x 2 bytes = 20.8 GB/s per direction; PCIe peer
//   traffic that crosses sockets sees about half of that in practice, so 10 GB/s. It adds
//   ~0.5 us to a path.
// Shared memory within a socket: copy-in/copy-out through a shared segment runs at about one
//   core's memcpy rate, ~10 GB/s; ~0.3 us is a cache-line handoff through the shared L3 plus
//   flag polling.
// Networks: bandwidth = port rate (Gbit/s, as the NIC reports it, after line encoding) / 8 x an
//   efficiency for packet headers, acknowledgements and the software path:
//     InfiniBand 0.92  (LRH/BTH/CRC are ~1% at a 4 KiB MTU; large RDMA writes reach ~92-95%)
//     RoCE       0.90  (adds Ethernet preamble, gap and IP/UDP headers: ~2% more at 4 KiB MTU)
//     Ethernet   0.85  (kernel TCP: 1500-byte frames and a copy on each side)
//     EFA        0.85  (SRD over AWS's Ethernet fabric; libfabric adds its own headers)
//   Latencies: InfiniBand ~1.5 us, RoCE ~2.5 us, TCP ~20 us, EFA ~10 us (small-message
//   half-round-trip figures typical of each). Rates when the port reports none: InfiniBand 100,
//   RoCE 100, Ethernet 10, EFA 100 Gbit/s.
//
// Measured values (source "measured") replace all of these; the table only has to rank links
// correctly and be within a small factor.
#include "topology/link_model.h"

#include <algorithm>
#include <cctype>

namespace strata::topo {
namespace {

constexpr const char* kDefault = "default";
constexpr const char* kHardware = "hardware";

constexpr int kMaxPcieGen = 6;
// GB/s per lane after line encoding, by generation (index 0 unused).
constexpr double kPcieLaneGBps[kMaxPcieGen + 1] = {0,
                                                   2.5 * 8 / 10 / 8,
                                                   5.0 * 8 / 10 / 8,
                                                   8.0 * 128 / 130 / 8,
                                                   16.0 * 128 / 130 / 8,
                                                   32.0 * 128 / 130 / 8,
                                                   64.0 * 236 / 256 / 8};
constexpr double kPcieEfficiency = 0.8;
constexpr int kPcieDefaultGen = 3;
constexpr int kPcieDefaultWidth = 16;
constexpr double kPcieLatencyUs = 1.5;

constexpr int kMaxNvlinkGen = 5;
constexpr double kNvlinkLinkGBps[kMaxNvlinkGen + 1] = {0, 20, 25, 25, 25, 50};
constexpr int kNvlinkLinksPerGpu[kMaxNvlinkGen + 1] = {0, 4, 6, 12, 18, 18};
constexpr int kNvlinkDefaultGen = 2;
constexpr double kNvlinkLatencyUs = 1.0;

constexpr double kSmpGBps = 10.0;
constexpr double kSmpLatencyUs = 0.5;
constexpr double kShmGBps = 10.0;
constexpr double kShmLatencyUs = 0.3;

struct NetworkDefaults {
  double defaultRateGbps;
  double efficiency;
  double latencyUs;
};

NetworkDefaults networkDefaults(LinkKind kind) {
  switch (kind) {
    case LinkKind::kInfiniband:
      return {100, 0.92, 1.5};
    case LinkKind::kRoce:
      return {100, 0.90, 2.5};
    case LinkKind::kEfa:
      return {100, 0.85, 10};
    default:  // Ethernet, and anything that is not a network: the slowest, safest guess.
      return {10, 0.85, 20};
  }
}

// Whether `token` occurs in `text` as a model number: not glued to a letter or digit before
// it, nor to a digit after it ("A100-SXM4" and "A100X" match "A100"; "RTX A3000" does not
// match "A30").
bool hasModel(const std::string& text, const std::string& token) {
  for (size_t at = text.find(token); at != std::string::npos; at = text.find(token, at + 1)) {
    size_t end = at + token.size();
    bool cleanBefore = at == 0 || !std::isalnum(static_cast<unsigned char>(text[at - 1]));
    bool cleanAfter = end == text.size() || !std::isdigit(static_cast<unsigned char>(text[end]));
    if (cleanBefore && cleanAfter) return true;
  }
  return false;
}

}  // namespace

LinkModel pcieLink(int gen, int width) {
  bool known = gen > 0 && width > 0;
  if (gen <= 0) gen = kPcieDefaultGen;
  if (width <= 0) width = kPcieDefaultWidth;
  // A generation newer than the table is at least as fast as the newest one we know.
  gen = std::min(gen, kMaxPcieGen);
  return LinkModel{LinkKind::kPcie, kPcieLaneGBps[gen] * width * kPcieEfficiency, kPcieLatencyUs,
                   known ? kHardware : kDefault};
}

LinkModel nvlinkLink(int generation, int count) {
  bool known = generation > 0 && count > 0;
  if (generation <= 0) generation = kNvlinkDefaultGen;
  generation = std::min(generation, kMaxNvlinkGen);
  if (count <= 0) count = kNvlinkLinksPerGpu[generation];
  return LinkModel{LinkKind::kNvlink, kNvlinkLinkGBps[generation] * count, kNvlinkLatencyUs,
                   known ? kHardware : kDefault};
}

int nvlinkGenerationForModel(const std::string& model) {
  std::string upper = model;
  for (char& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  // Newest first; Grace-Hopper/Grace-Blackwell names are listed whole because hasModel does not
  // let "H200" match inside "GH200".
  static const struct {
    const char* token;
    int generation;
  } kModels[] = {
      {"GB300", 5}, {"GB200", 5}, {"B300", 5}, {"B200", 5}, {"B100", 5},
      {"GH200", 4}, {"H200", 4},  {"H100", 4}, {"H800", 4}, {"H20", 4},
      {"A100", 3},  {"A800", 3},  {"A30", 3},  {"V100", 2}, {"P100", 1},
  };
  for (const auto& entry : kModels) {
    if (hasModel(upper, entry.token)) return entry.generation;
  }
  return 0;
}

LinkModel smpLink() { return LinkModel{LinkKind::kSmp, kSmpGBps, kSmpLatencyUs, kDefault}; }

LinkModel sharedMemoryLink() {
  return LinkModel{LinkKind::kSharedMemory, kShmGBps, kShmLatencyUs, kDefault};
}

LinkModel networkLink(LinkKind kind, double rateGbps) {
  NetworkDefaults d = networkDefaults(kind);
  bool known = rateGbps > 0;
  double rate = known ? rateGbps : d.defaultRateGbps;
  return LinkModel{kind, rate / 8 * d.efficiency, d.latencyUs, known ? kHardware : kDefault};
}

}  // namespace strata::topo
