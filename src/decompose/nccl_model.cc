// NCCL's cost model (nccl_model.h). The constants are NCCL 2.30.7's, from src/graph/tuning.cc
// (latencies, per-channel bandwidth caps, the tree's correction) and src/graph/search.cc (the
// speed arrays); each table says which. Indices: [algorithm: tree, ring, PAT][protocol: LL,
// LL128, Simple], generations [Volta, Ampere, Hopper, Blackwell], node counts [1, 2, more].
#include "decompose/nccl_model.h"

#include <algorithm>
#include <cmath>
#include <limits>

namespace strata::plan::nccl {
namespace {

constexpr int kAlgos = 3, kProtos = 3;
constexpr int kMaxRingChannels = 16;  // MAXCHANNELS / 2: the ring graph's maxChannels

// tuning.cc, baseLatencies (us).
constexpr double kBaseLatency[kAlgos][kProtos] = {
    {6.8, 14.0, 8.4}, {6.6, 14.0, 8.4}, {8.0, 8.0, 8.0}};
// tuning.cc, hwLatencies (us) for NVLink, PCIe and the network.
constexpr double kNvlinkLatency[kAlgos][kProtos] = {{0.6, 1.25, 4.0}, {0.6, 1.9, 3.4}, {0, 0, 4.0}};
constexpr double kPciLatency[kAlgos][kProtos] = {{1.0, 1.9, 4.0}, {1.0, 2.5, 5.7}, {0, 0, 4.0}};
constexpr double kNetLatency[kAlgos][kProtos] = {{5.0, 8.5, 14}, {2.7, 4.0, 14.0}, {0, 0, 14}};
// tuning.cc, llMaxBws: rows by GPU generation on one node, by CPU (Intel, AMD) on several.
constexpr double kLlMaxBw[4][3] = {
    {39.0, 39.0, 20.4}, {87.7, 22.5, 19.0}, {141.0, 45.0, 35.0}, {282.0, 90.0, 70.0}};
// tuning.cc, per-channel caps (GB/s): perChMaxRingLL128Bws, perChMaxTreeLL128Bws,
// perChMaxTreeBws.
constexpr double kPerChRingLL128[4][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 36.7}, {40.0, 40.0, 40.0}};
constexpr double kPerChTreeLL128[4][3] = {
    {20.0, 20.0, 20.0}, {20.0, 20.0, 20.0}, {36.7, 36.7, 29.0}, {55.6, 31.67, 20.0}};
constexpr double kPerChTree[4][3] = {
    {26.5, 18.5, 10.0}, {24.0, 23.6, 17.8}, {38.7, 41.4, 36.0}, {70.0, 42.8, 24.0}};
// tuning.cc, treeCorrectionFactor: powers of two from 64 B (index floor(log2(bytes / 64))).
constexpr double kTreeCorrection[kProtos][23] = {
    {1.0, 1.0, 1.0, 1.0, .9, .8, .7, .7,  .7,  .7,  .6, .5,
     .4,  .4,  .5,  .6,  .7, .8, .9, 1.0, 1.0, 1.0, 1.0},
    {1.0, 1.0, 1.0, 1.0, 1.0, .9, .8, .8, .8, .7,  .6, .6,
     .6,  .6,  .6,  .6,  .8,  .9, .9, .9, .9, 1.0, 1.0},
    {.9, .9, .9, .9, .9, .9, .9, .8, .7, .6, .6, .5, .5, .5, .5, .6, .7, .8, .7, .7, .8, .9, .9}};

// search.cc: the per-channel speeds (GB/s) the search tries, fastest first, for one node
// (intra) and several (inter), per generation (Volta and Ampere share one array).
const std::vector<double>& speeds(Gpu g, bool inter) {
  static const std::vector<double> intra80{40, 30, 20, 18, 15, 12, 10, 9, 7, 6, 5, 4, 3};
  static const std::vector<double> inter80{48, 30, 28, 24, 20, 18,  15,  12,   10,  9,
                                           7,  6,  5,  4,  3,  2.4, 1.2, 0.24, 0.12};
  static const std::vector<double> intra90{60, 50, 40, 30, 24, 20, 15, 12, 11, 6, 3};
  static const std::vector<double> inter90{48, 45, 42, 40, 30,  24,  22,   20,  17.5,
                                           15, 12, 6,  3,  2.4, 1.2, 0.24, 0.12};
  static const std::vector<double> intra100{90, 80, 70, 60, 50, 45, 40, 30, 24, 20, 19, 18};
  static const std::vector<double> inter100{96, 86,   80, 48, 45.1, 42, 40,  30,  24,   22,
                                            20, 17.5, 15, 12, 6,    3,  2.4, 1.2, 0.24, 0.12};
  switch (g) {
    case Gpu::kBlackwell:
      return inter ? inter100 : intra100;
    case Gpu::kHopper:
      return inter ? inter90 : intra90;
    default:
      return inter ? inter80 : intra80;
  }
}

int genIndex(Gpu g) { return static_cast<int>(g); }
int nodeIndex(int nodes) { return nodes <= 2 ? nodes - 1 : 2; }
int log2Floor(long long n) {
  int r = -1;
  while (n > 0) {
    n >>= 1;
    ++r;
  }
  return r;
}
int a(Algo x) { return static_cast<int>(x); }
int p(Proto x) { return static_cast<int>(x); }

double netOverheadUs(Cpu cpu) { return cpu == Cpu::kAmd ? 2.0 : 1.0; }

// The bus bandwidth of one option before the conversion to algorithm bandwidth; 0: not run.
double busBandwidth(const System& s, Func f, Algo al, Proto pr) {
  const Graph& g = al == Algo::kTree ? s.tree : s.ring;
  const double b = s.nodes <= 2 ? g.bwIntra : g.bwInter;
  const double c = g.channels;
  const int gi = genIndex(s.gpu), ni = nodeIndex(s.nodes);
  const int llRow = s.nodes == 1 ? gi : (s.cpu == Cpu::kAmd ? 1 : 0);
  const double llMax = kLlMaxBw[llRow][ni];
  double bus = c * b;
  if (al == Algo::kRing && pr == Proto::kLL) bus = std::min(llMax, bus * 0.5);
  if (al == Algo::kRing && pr == Proto::kLL128)
    bus = std::min(bus * 0.92, c * kPerChRingLL128[gi][ni]);
  if (al == Algo::kTree && f == Func::kAllReduce)
    bus = std::min(bus * 0.92, c * kPerChTree[gi][ni]);
  if (al == Algo::kTree && pr == Proto::kLL) bus = std::min(bus / 3.8, llMax);
  if (al == Algo::kTree && pr == Proto::kLL128) {
    bus = std::min(bus * (s.nodes == 1 ? 7.0 / 9.0 : 120.0 / 128.0), c * kPerChTreeLL128[gi][ni]);
  }
  if (al == Algo::kPat) bus *= 0.75;
  return bus;
}

bool available(const System& s, Func f, Algo al, Proto pr) {
  if (pr == Proto::kLL128 && !s.nvlink) return false;  // LL128 needs NVLink inside the node
  if (f == Func::kAllReduce) return al != Algo::kPat;
  // Reduce-scatter and all-gather: ring, or PAT with Simple on one GPU per node.
  if (al == Algo::kTree) return false;
  if (al == Algo::kPat) return pr == Proto::kSimple && s.nodes == s.ranks;
  return true;
}

double latency(const System& s, Func f, Algo al, Proto pr) {
  const double(&intraTable)[kAlgos][kProtos] = s.nvlink ? kNvlinkLatency : kPciLatency;
  const int n = s.ranks, nodes = s.nodes;
  const int ppn = n / std::max(1, nodes);
  double intra = intraTable[a(al)][p(pr)];
  // With one GPU per node the network hops are all exposed: NCCL uses the tree's network
  // latency then.
  const double inter = kNetLatency[ppn == 1 ? a(Algo::kTree) : a(al)][p(pr)];
  double lat = kBaseLatency[a(al)][p(pr)];
  const int steps = f == Func::kAllReduce ? 2 * (n - 1) : n - 1;
  if (al == Algo::kRing) {
    const double overhead = nodes > 1 ? netOverheadUs(s.cpu) * (pr == Proto::kSimple ? 3 : 1) : 0;
    intra = std::max(intra, overhead);
    const int netSteps = nodes == 1 ? 0 : (f == Func::kAllReduce ? 2 * (nodes - 1) : nodes - 1);
    lat += (steps - netSteps) * intra + netSteps * inter;
  } else if (al == Algo::kTree) {
    lat += 2 * ((ppn - 1) * intra + log2Floor(nodes) * inter);
  } else {
    lat += log2Floor(nodes) * (inter / 3.5) + n * 2.8;
  }
  return lat;
}

}  // namespace

const char* algoName(Algo x) {
  return x == Algo::kTree ? "tree" : x == Algo::kRing ? "ring" : "pat";
}
const char* protoName(Proto x) {
  return x == Proto::kLL ? "LL" : x == Proto::kLL128 ? "LL128" : "Simple";
}
const char* gpuName(Gpu g) {
  static const char* kNames[] = {"volta", "ampere", "hopper", "blackwell"};
  return kNames[genIndex(g)];
}

bool parseGpu(const std::string& text, Gpu* out) {
  static const std::pair<const char*, Gpu> kNames[] = {
      {"volta", Gpu::kVolta}, {"v100", Gpu::kVolta},          {"ampere", Gpu::kAmpere},
      {"a100", Gpu::kAmpere}, {"hopper", Gpu::kHopper},       {"h100", Gpu::kHopper},
      {"h200", Gpu::kHopper}, {"blackwell", Gpu::kBlackwell}, {"b200", Gpu::kBlackwell}};
  for (const auto& [name, g] : kNames) {
    if (text == name) {
      *out = g;
      return true;
    }
  }
  return false;
}

bool parseCpu(const std::string& text, Cpu* out) {
  if (text == "intel")
    *out = Cpu::kIntel;
  else if (text == "amd")
    *out = Cpu::kAmd;
  else
    return false;
  return true;
}

System systemFor(const Hardware& hw) {
  System s;
  s.nodes = std::max(1, hw.nodes);
  s.ranks = s.nodes * std::max(1, hw.gpusPerNode);
  s.gpu = hw.gpu;
  s.cpu = hw.cpu;
  s.nvlink = hw.nvlink;
  const bool inter = s.nodes > 1;
  // The most channels at `speed`: each traverses every GPU of the node once (so the GPU's
  // intra-node bandwidth bounds them; a lone GPU has no such bound) and, between nodes, takes one
  // NIC's worth of `speed`.
  auto channelsAt = [&](double speed) {
    long long c = kMaxRingChannels;
    if (hw.gpusPerNode > 1) c = std::min<long long>(c, std::floor(hw.intraGBps / speed + 1e-9));
    if (inter) {
      c = std::min<long long>(c, static_cast<long long>(std::max(1, hw.nics)) *
                                     static_cast<long long>(std::floor(hw.nicGBps / speed + 1e-9)));
    }
    return static_cast<int>(std::max<long long>(0, c));
  };
  Graph ring{0, 0, 0};
  // From the fastest speed down; once a solution is found, the search goes on down only while
  // the next speed is above 0.49 of it.
  for (double speed : speeds(hw.gpu, inter)) {
    if (ring.channels > 0 && speed <= 0.49 * ring.bwInter) break;
    const int c = channelsAt(speed);
    if (c > 0 && c * speed > ring.channels * ring.bwInter + 1e-9) ring = Graph{c, speed, speed};
  }
  if (ring.channels == 0) {  // slower than every speed NCCL tries: its last one, one channel
    const double slowest = speeds(hw.gpu, inter).back();
    ring = Graph{1, slowest, slowest};
  }
  // ncclTopoDupChannels: twice the channels at half the speed, unless the speed is below 25 GB/s
  // (or, after Ampere, below 50 GB/s with more than 4 channels already).
  const bool noDup =
      ring.bwIntra < 25.0 || (hw.gpu > Gpu::kAmpere && ring.bwIntra < 50.0 && ring.channels > 4);
  if (!noDup) {
    const int dup = std::min(2 * ring.channels, kMaxRingChannels);
    const int div = (dup + ring.channels - 1) / ring.channels;
    ring = Graph{dup, ring.bwIntra / div, ring.bwInter / div};
  }
  s.ring = ring;
  s.tree = ring;
  if (s.nodes == 2) {
    // The second search pass raises the tree's intra-node speed while it is below twice the
    // network's and the GPUs still carry every channel.
    for (double speed : speeds(hw.gpu, inter)) {
      if (speed <= s.tree.bwIntra || speed > 2 * s.tree.bwInter + 1e-9) continue;
      if (hw.gpusPerNode > 1 && s.tree.channels * speed > hw.intraGBps + 1e-9) continue;
      s.tree.bwIntra = speed;
      break;  // the fastest that fits (the array is fastest first)
    }
  }
  return s;
}

StatusOr<Hardware> hardwareOf(const topo::Hierarchy& h, Gpu gpu, Cpu cpu) {
  Hardware hw;
  hw.gpu = gpu;
  hw.cpu = cpu;
  hw.nodes = 1;
  hw.gpusPerNode = 1;
  hw.intraGBps = std::numeric_limits<double>::infinity();
  int top = -1;
  for (int l = 0; l < h.numLevels(); ++l) {
    const topo::LinkModel& link = h.level(l).link;
    const bool net = topo::isNetworkLink(link.kind);
    const int width = h.width(l);
    if (!(link.bandwidthGBps > 0) && width > 1) {
      return invalidArgument("NCCL's model needs the bandwidth of level '" + h.level(l).name +
                             "' (bandwidth_GBps)");
    }
    if (net) {
      hw.nodes *= width;
      top = l;
    } else {
      hw.gpusPerNode *= width;
      if (width > 1) {
        hw.intraGBps = std::min(hw.intraGBps, link.bandwidthGBps);
        if (link.kind != topo::LinkKind::kNvlink && link.kind != topo::LinkKind::kNvswitch) {
          hw.nvlink = false;
        }
      }
    }
  }
  if (!std::isfinite(hw.intraGBps)) hw.intraGBps = 0;
  if (hw.nodes > 1) {
    if (top < 0) return internalError("nodes without a network level");
    const int sharing = std::max(1, h.level(top).linkSharing);
    hw.nics = std::max(1, hw.gpusPerNode / sharing);
    hw.nicGBps = h.level(top).link.bandwidthGBps;
  } else {
    hw.nics = 0;
  }
  return hw;
}

std::vector<Option> options(const System& s, Func f) {
  std::vector<Option> out;
  for (Algo al : {Algo::kTree, Algo::kRing, Algo::kPat}) {
    for (Proto pr : {Proto::kLL, Proto::kLL128, Proto::kSimple}) {
      Option o{al, pr, 0, 0};
      if (available(s, f, al, pr)) {
        const int steps = f == Func::kAllReduce ? 2 * (s.ranks - 1) : s.ranks - 1;
        double bus = busBandwidth(s, f, al, pr);
        if (al == Algo::kRing) bus *= static_cast<double>(s.ranks) / steps;
        if (al == Algo::kTree) bus *= 0.5;
        o.bandwidthGBps = bus;
        o.latencyUs = latency(s, f, al, pr);
      }
      out.push_back(o);
    }
  }
  return out;
}

double timeUs(const System& s, Func f, const Option& o, double bytes) {
  if (!(o.bandwidthGBps > 0)) return -1;
  double bw = o.bandwidthGBps, lat = o.latencyUs;
  const int logSize = log2Floor(static_cast<long long>(bytes) >> 6);
  if (o.algo == Algo::kTree && f == Func::kAllReduce && logSize >= 0 && logSize < 23) {
    bw *= kTreeCorrection[p(o.proto)][logSize];
  }
  // The ring's "plateau": a multi-node Simple allreduce whose per-channel, per-rank share is at
  // least 64 bytes.
  if (o.algo == Algo::kRing && o.proto == Proto::kSimple && s.nodes > 1 && f == Func::kAllReduce &&
      bytes / (static_cast<double>(s.ring.channels) * s.ranks) >= 64) {
    lat *= s.gpu < Gpu::kAmpere ? 1.9 : 1.4;
  }
  return lat + bytes / (1000 * bw);
}

Choice choose(const System& s, Func f, double bytes) {
  if (s.ranks <= 1) return Choice{Algo::kRing, Proto::kSimple, 0};
  Choice best{Algo::kRing, Proto::kSimple, std::numeric_limits<double>::infinity()};
  for (const Option& o : options(s, f)) {
    const double t = timeUs(s, f, o, bytes);
    if (t >= 0 && t < best.us) best = Choice{o.algo, o.proto, t};
  }
  return best;
}

double busBandwidthGBps(Func f, int ranks, double bytes, double us) {
  if (!(us > 0) || ranks <= 1) return 0;
  const double algbw = bytes / (us * 1e3);  // bytes per us / 1e3 = GB/s
  const double factor =
      f == Func::kAllReduce ? 2.0 * (ranks - 1) / ranks : static_cast<double>(ranks - 1) / ranks;
  return algbw * factor;
}

}  // namespace strata::plan::nccl
