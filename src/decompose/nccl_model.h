// NCCL's own cost model, as the baseline strata's plans are compared with: what NCCL would run
// for a collective on a cluster, and how long NCCL itself predicts it takes. Pure code.
//
// It follows NCCL 2.30.7 (NVIDIA/nccl, src/graph/tuning.cc: ncclTopoTuneModel and
// ncclTopoGetAlgoTime; src/graph/search.cc: the speed arrays and ncclTopoDupChannels), written
// anew from reading it. NCCL picks, per call, the (algorithm, protocol) pair of least
//   time = latency + bytes / (1000 * bandwidth)          [us, bytes, GB/s]
// where, for n ranks on N nodes of p = n/N GPUs, with a ring graph of C channels of b GB/s each
// (b = bwIntra on 1 or 2 nodes, bwInter beyond):
//   bus bandwidth  C * b, then per algorithm and protocol:
//     ring LL      min(llMax, 0.5 C b)       ring LL128   min(0.92 C b, C * perChRingLL128)
//     tree (allreduce)  min(0.92 C b, C * perChTree), then LL: min(x / 3.8, llMax),
//                  LL128: min(x * (N == 1 ? 7/9 : 120/128), C * perChTreeLL128)
//     PAT          0.75 C b (reduce-scatter and all-gather, one GPU per node, Simple only)
//   algorithm bandwidth = bus bandwidth * n / steps for the ring (steps = 2(n-1) for allreduce,
//   n-1 for reduce-scatter and all-gather), * 1/2 for the tree, as is for PAT.
//   latency  ring: base + (steps - s) * max(intraHw, netOverhead) + s * netHw, with s = 2(N-1)
//                  (allreduce) or N-1 network steps, netOverhead 1 us (Intel) or 2 us (AMD),
//                  x3 for Simple, 0 on one node;
//            tree: base + 2 ((p-1) * intraHw + floor(log2 N) * netHw);
//            PAT:  base + floor(log2 N) * netHw / 3.5 + 2.8 n.
//   netHw is the tree's network latency when p == 1. The tree's bandwidth is scaled by a
//   correction per size (0.4-1.0, 64 B to 256 MiB), and a multi-node ring allreduce with Simple
//   pays 1.4x its latency (1.9x before Ampere) once each channel's share of each rank is >= 64 B.
//   LL128 runs only where the GPUs of a node are joined by NVLink.
// The graph (C, b) comes from NCCL's topology search, which this model summarizes rather than
// repeats (ringGraph): the per-channel speed is the fastest entry of NCCL's speed array for the
// GPU generation that fits the NIC (one channel per NIC and per multiple of the speed in it) and
// the GPU's own intra-node bandwidth; as many channels as fit (at most 16), a slower speed
// replacing it only for more total bandwidth and while above 0.49 of it; then NCCL's
// doubling of the channels at half speed when the speed is >= 25 GB/s. On 2 nodes the tree's
// intra-node speed rises to twice the network's, as NCCL's second search pass does.
//
// The tree is NCCL's balanced tree (no 0.85 factor of its simple-tree fallback), and the ring's
// plateau counts the ring's channels for the communicator's.
// Not modelled: CollNet (switch reduction, SHARP) and NVLS (NVLink SHARP, Hopper NVSwitch
// systems), which need hardware the topology does not describe; NCCL's tuner plugins; the
// network plugin's own latency (0 for NCCL's IB and socket transports); more than one
// outstanding operation (aggregation). A cluster where NCCL uses NVLS would run faster than
// predicted here.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "topology/hierarchy.h"

namespace strata::plan::nccl {

enum class Func { kAllReduce, kReduceScatter, kAllGather };
enum class Algo { kTree, kRing, kPat };  // NCCL's order among the three modelled
enum class Proto { kLL, kLL128, kSimple };
// The GPU generation picks NCCL's constants: Volta stands for everything before Ampere, as in
// NCCL (compute capability < 80), Blackwell for 10.0 and later.
enum class Gpu { kVolta, kAmpere, kHopper, kBlackwell };
enum class Cpu { kIntel, kAmd };

const char* algoName(Algo a);    // "ring", "tree", "pat"
const char* protoName(Proto p);  // "LL", "LL128", "Simple"
const char* gpuName(Gpu g);      // "volta", ...
// "volta", "ampere", "hopper", "blackwell" (also "v100", "a100", "h100", "h200", "b200");
// false for anything else.
bool parseGpu(const std::string& text, Gpu* out);
bool parseCpu(const std::string& text, Cpu* out);  // "intel", "amd"

// What NCCL's search found for one algorithm: channels of bwIntra / bwInter GB/s each.
struct Graph {
  int channels = 1;
  double bwIntra = 0;
  double bwInter = 0;
};

// The cluster as NCCL's tuner sees it.
struct System {
  int nodes = 1;
  int ranks = 1;
  Gpu gpu = Gpu::kAmpere;
  Cpu cpu = Cpu::kIntel;
  bool nvlink = true;  // the GPUs of a node talk over NVLink (else PCIe)
  Graph ring;
  Graph tree;
};

// The hardware ringGraph searches: per GPU, its intra-node bandwidth; per node, its NICs.
struct Hardware {
  int nodes = 1;
  int gpusPerNode = 1;
  Gpu gpu = Gpu::kAmpere;
  Cpu cpu = Cpu::kIntel;
  bool nvlink = true;
  double intraGBps = 0;  // one GPU's bandwidth to the others of its node
  int nics = 1;          // per node
  double nicGBps = 0;    // each NIC
};

// NCCL's graph summary for `hw` (see the header comment); the ring and the tree.
System systemFor(const Hardware& hw);

// The hardware of a hierarchy: levels whose link is a network kind (infiniband, roce, ethernet,
// efa) are between nodes, the others inside one; a node's NICs are its GPUs / the top network
// level's link_sharing, each at that level's bandwidth; the intra bandwidth is the slowest
// inner level's. Fails when a level that matters has no bandwidth.
StatusOr<Hardware> hardwareOf(const topo::Hierarchy& h, Gpu gpu, Cpu cpu);

// One (algorithm, protocol) option for a collective: its latency (us) and algorithm bandwidth
// (GB/s), 0 bandwidth when NCCL would not run it.
struct Option {
  Algo algo = Algo::kRing;
  Proto proto = Proto::kSimple;
  double latencyUs = 0;
  double bandwidthGBps = 0;
};
std::vector<Option> options(const System& s, Func f);

// NCCL's predicted time of `o` for `bytes` (the collective's whole buffer: for reduce-scatter
// and all-gather, every rank's block), with its per-size corrections; < 0 when not available.
double timeUs(const System& s, Func f, const Option& o, double bytes);

struct Choice {
  Algo algo = Algo::kRing;
  Proto proto = Proto::kSimple;
  double us = 0;
};
// The option NCCL picks: the least time (ties: the earlier, tree before ring before PAT; LL before
// LL128 before Simple). A single rank costs nothing.
Choice choose(const System& s, Func f, double bytes);

// nccl-tests' bus bandwidth of a call of `bytes` that takes `us`: algorithm bandwidth times
// 2(n-1)/n for allreduce, (n-1)/n for reduce-scatter and all-gather.
double busBandwidthGBps(Func f, int ranks, double bytes, double us);

}  // namespace strata::plan::nccl
