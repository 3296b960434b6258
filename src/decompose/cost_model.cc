// The alpha-beta cost model (cost_model.h). Times are in microseconds and sizes in bytes.
//
// Conventions the formulas rely on:
//   alpha = link.latencyUs; beta = 1e-3 / link.bandwidthGBps us per byte (1 GB/s = 1e9 B/s
//   = 1e3 bytes per us); beta_eff = beta * sharing; the local reduction combines gamma =
//   params.reduceGBps GB/s (<= 0: not modelled, costs nothing).
//   A group of one rank moves nothing and costs nothing, latency included.
#include "decompose/cost_model.h"

#include <algorithm>
#include <cmath>
#include <utility>

#include "decompose/cost_detail.h"

namespace strata::plan {
namespace {

// A link without a usable bandwidth (0, negative or NaN: "unknown") is costed as a slow,
// high-latency network port rather than divided by. Its kind does not matter: a link of unknown
// kind whose numbers were given or measured is costed by those numbers.
constexpr double kFallbackBandwidthGBps = 1.0;
constexpr double kFallbackLatencyUs = 10.0;

topo::LinkModel usable(const topo::LinkModel& link) {
  topo::LinkModel out = link;
  if (!(link.bandwidthGBps > 0) || !std::isfinite(link.bandwidthGBps)) {
    out.bandwidthGBps = kFallbackBandwidthGBps;
    out.latencyUs =
        std::max(kFallbackLatencyUs, std::isfinite(link.latencyUs) ? link.latencyUs : 0);
  } else if (!(link.latencyUs >= 0) || !std::isfinite(link.latencyUs)) {
    out.latencyUs = kFallbackLatencyUs;
  }
  return out;
}

bool contains(const std::vector<int>& levels, int l) {
  return std::find(levels.begin(), levels.end(), l) != levels.end();
}

}  // namespace

// Shared with rooted_cost.cc (cost_detail.h).
namespace detail {

double alphaUs(const topo::LinkModel& link) { return usable(link).latencyUs; }

double betaEffUsPerByte(const topo::LinkModel& link, int sharing) {
  return 1e-3 / usable(link).bandwidthGBps * std::max(1, sharing);
}

double reduceUs(double bytes, const CostParams& params) {
  return params.reduceGBps > 0 ? bytes * 1e-3 / params.reduceGBps : 0;
}

// (g-1)/g: the fraction of its range a ring member sends in a reduce-scatter or all-gather.
double ringFraction(int g) { return static_cast<double>(g - 1) / g; }

// The shm fabric (fabrics/shm): members copy into shared slots, meet at a barrier and read
// each other's slots. A barrier is two alphas whatever g: one for the last arrival's cache line
// to reach the others, one for each member's reads of the g arrival lines, which are
// independent loads the core overlaps (not g cache misses one after another). An allreduce
// of up to kShmDirectBytes takes one barrier and every member reduces the whole range; above,
// two barriers, each member reduces a 1/g shard, and everyone copies the result out:
// copy-in n + shard reads n + copy-out n.
constexpr double kShmDirectBytes = 16 << 10;

static double shmBarrierUs(const topo::LinkModel& link) { return 2 * alphaUs(link); }

AllReduceCost shmAllReduce(int g, double n, const topo::LinkModel& link, const CostParams& params) {
  const double a = shmBarrierUs(link), b = betaEffUsPerByte(link, 1);
  if (n <= kShmDirectBytes) return {a + (n + g * n) * b + reduceUs((g - 1) * n, params), n};
  return {2 * a + 3 * n * b + reduceUs(n * (g - 1) / g, params), n};
}

double shmReduceScatterUs(int g, double n, const topo::LinkModel& link, const CostParams& params) {
  if (g <= 1) return 0;
  const double b = betaEffUsPerByte(link, 1);
  return shmBarrierUs(link) + 2 * n * b + reduceUs(n * (g - 1) / g, params);
}

double shmAllGatherUs(int g, double n, const topo::LinkModel& link) {
  if (g <= 1) return 0;
  return shmBarrierUs(link) + (n / g + n) * betaEffUsPerByte(link, 1);
}

// A message-passing fabric between ranks of one host passes every message through its own
// shared FIFOs: the fabric's cost hints say how much of the link that leaves (for MPI, Open
// MPI's vader: a copy in and a copy out per byte plus a handshake per fragment; a third of the
// copy rate, twice the latency).
topo::LinkModel linkFor(const topo::LinkModel& link, const FabricTraits& fabric) {
  topo::LinkModel out = usable(link);
  if (link.kind == topo::LinkKind::kSharedMemory) {
    out.bandwidthGBps /= std::max(1.0, fabric.sharedMemoryBandwidthDivisor);
    out.latencyUs *= std::max(1.0, fabric.sharedMemoryLatencyFactor);
  }
  return out;
}

// The link a stage over `levels` runs on: the slowest bandwidth among them (the bottleneck of
// the merged ring) and the largest latency (every round waits for its slowest hop).
topo::LinkModel stageLink(const topo::Hierarchy& h, const std::vector<int>& levels) {
  topo::LinkModel link;
  bool first = true;
  for (int l : levels) {
    if (l < 0 || l >= h.numLevels()) continue;
    const topo::LinkModel candidate = usable(h.level(l).link);
    if (first || candidate.bandwidthGBps < link.bandwidthGBps) {
      const double latency = first ? candidate.latencyUs : link.latencyUs;
      link = candidate;
      link.latencyUs = std::max(latency, candidate.latencyUs);
    } else {
      link.latencyUs = std::max(link.latencyUs, candidate.latencyUs);
    }
    first = false;
  }
  return first ? usable(topo::LinkModel{}) : link;
}

// How many groups of a stage over the top (network) level push through one NIC at once. The
// top level's linkSharing says how many ranks of a host share one NIC, i.e. the host has
// nics = (ranks per host) / linkSharing of them. The stage runs one group per combination of
// the host-level coordinates outside the stage, all at once; they spread over the NICs.
// Merging host levels into the stage (the flat ring) leaves fewer concurrent groups.
int stageSharing(const topo::Hierarchy& h, const Stage& s) {
  const int top = h.numLevels() - 1;
  if (!contains(s.levels, top)) return 1;
  long long concurrent = 1, perHost = 1;
  for (int l = 0; l < top; ++l) {
    perHost *= h.width(l);
    if (!contains(s.levels, l)) concurrent *= h.width(l);
  }
  const int linkSharing = std::max(1, h.level(top).linkSharing);
  const long long nics = std::max(1LL, std::llround(static_cast<double>(perHost) / linkSharing));
  return static_cast<int>((concurrent + nics - 1) / nics);
}

}  // namespace detail

namespace {

// The allreduce formulas below and predict() use the shared helpers unqualified.
using detail::AllReduceCost;
using detail::alphaUs;
using detail::betaEffUsPerByte;
using detail::linkFor;
using detail::reduceUs;
using detail::ringFraction;
using detail::shmAllGatherUs;
using detail::shmAllReduce;
using detail::shmReduceScatterUs;
using detail::stageLink;
using detail::stageSharing;

AllReduceCost ringAllReduce(int g, double n, const topo::LinkModel& link, int sharing,
                            const CostParams& params) {
  return {ringReduceScatterUs(g, n, link, sharing, params) + ringAllGatherUs(g, n, link, sharing),
          2 * ringFraction(g) * n};
}

// Recursive halving (reduce-scatter) then doubling (all-gather) over p = 2^floor(log2 g) ranks.
// When g is not a power of two, the g - p extra ranks first fold their whole vector into a
// partner and get the result back at the end (Rabenseifner/MPICH): one more round each way,
// each moving and the first one reducing the full n.
AllReduceCost rhdAllReduce(int g, double n, const topo::LinkModel& link, int sharing,
                           const CostParams& params) {
  int rounds = 0;
  while ((2LL << rounds) <= g) ++rounds;  // log2(p)
  const int p = 1 << rounds;
  const double a = alphaUs(link), b = betaEffUsPerByte(link, sharing);
  const double f = ringFraction(p);
  AllReduceCost c;
  c.us = 2 * rounds * a + 2 * f * n * b + reduceUs(f * n, params);
  c.bytesSent = 2 * f * n;
  if (p != g) {
    c.us += 2 * (a + n * b) + reduceUs(n, params);
    c.bytesSent += n;  // the partner sends its result back; the fold it only receives
  }
  return c;
}

// Recursive doubling: log2(p) rounds, each exchanging and combining the whole vector with one
// partner; the g - p extra ranks fold in first and get the result back last (mpi_small.h).
AllReduceCost rdAllReduce(int g, double n, const topo::LinkModel& link, int sharing,
                          const CostParams& params) {
  int rounds = 0;
  while ((2LL << rounds) <= g) ++rounds;  // log2(p)
  const double round = alphaUs(link) + n * betaEffUsPerByte(link, sharing);
  AllReduceCost c{rounds * (round + reduceUs(n, params)), rounds * n};
  if ((1 << rounds) != g) {
    c.us += 2 * round + reduceUs(n, params);
    c.bytesSent += n;
  }
  return c;
}

// Every rank sends its whole vector to every other in one round, then combines the g-1 vectors
// it received (the combine is all of them, not a 1/g share as in the ring). The round is not
// one alpha: a member's g-1 messages leave through its one link one after another, each paying
// the per-message cost, so (g-1) alphas (2 x 2 ranks on the lab: direct over all 4 took 33 us,
// one message between the hosts inside a staged plan 17-20 us). Wins only when latency
// dominates and the group is small.
AllReduceCost directAllReduce(int g, double n, const topo::LinkModel& link, int sharing,
                              const CostParams& params) {
  const double sent = (g - 1) * n;
  return {(g - 1) * alphaUs(link) + sent * betaEffUsPerByte(link, sharing) + reduceUs(sent, params),
          sent};
}

// The allreduce algorithms the model costs (a stage's plan::Algorithm names only auto and ring;
// the others are what a fabric may run on its own), by name in reports.
enum class Costed { kAuto, kRing, kRhd, kRd, kDirect };

const char* costedName(Costed a) {
  switch (a) {
    case Costed::kRing:
      return "ring";
    case Costed::kRhd:
      return "rhd";
    case Costed::kRd:
      return "rd";
    case Costed::kDirect:
      return "direct";
    case Costed::kAuto:
      break;
  }
  return "auto";
}

AllReduceCost costOf(Costed a, int g, double n, const topo::LinkModel& link, int sharing,
                     const CostParams& params) {
  switch (a) {
    case Costed::kRhd:
      return rhdAllReduce(g, n, link, sharing, params);
    case Costed::kRd:
      return rdAllReduce(g, n, link, sharing, params);
    case Costed::kDirect:
      return directAllReduce(g, n, link, sharing, params);
    case Costed::kRing:
    case Costed::kAuto:
      break;
  }
  return ringAllReduce(g, n, link, sharing, params);
}

// The allreduce `algorithm` over one group (kAuto: the cheapest); `chosen` gets the name of the
// algorithm costed.
AllReduceCost allReduce(Costed algorithm, int g, double n, const topo::LinkModel& link,
                        int sharing, const CostParams& params, std::string* chosen) {
  if (g <= 1) {
    *chosen = "none";
    return {};
  }
  if (algorithm != Costed::kAuto) {
    *chosen = costedName(algorithm);
    return costOf(algorithm, g, n, link, sharing, params);
  }
  // Ties keep the earlier entry: the ring is what every fabric implements.
  Costed best = Costed::kRing;
  AllReduceCost bestCost = costOf(best, g, n, link, sharing, params);
  for (Costed a : {Costed::kRhd, Costed::kRd, Costed::kDirect}) {
    const AllReduceCost c = costOf(a, g, n, link, sharing, params);
    if (c.us < bestCost.us) {
      best = a;
      bestCost = c;
    }
  }
  *chosen = costedName(best);
  return bestCost;
}

// The allreduce a message fabric runs for a stage's `algorithm` (FabricTraits::smallAllReduce):
// auto means the fabric's own choice by size where it declares one, else the cheapest.
AllReduceCost fabricAllReduce(const FabricTraits& fabric, Algorithm algorithm, int g, double n,
                              const topo::LinkModel& link, int sharing, const CostParams& params,
                              std::string* chosen) {
  const Costed named = algorithm == Algorithm::kRing ? Costed::kRing : Costed::kAuto;
  if (named != Costed::kAuto || g <= 1 || fabric.smallAllReduce == SmallAllReduce::kAny) {
    return allReduce(named, g, n, link, sharing, params, chosen);
  }
  if (n >= fabric.smallAllReduceBytes) {
    return allReduce(Costed::kRing, g, n, link, sharing, params, chosen);
  }
  if (fabric.smallAllReduce == SmallAllReduce::kDirect) {
    return allReduce(Costed::kDirect, g, n, link, sharing, params, chosen);
  }
  return allReduce(Costed::kRd, g, n, link, sharing, params, chosen);
}

// The link a stage is costed on with the step overhead in its alpha (cost_model.h): every
// formula counts alpha once per step, so o is counted once per step too.
topo::LinkModel withStepOverhead(topo::LinkModel link, const CostParams& params) {
  if (params.stepOverheadUs > 0) link.latencyUs += params.stepOverheadUs;
  return link;
}

int stageGroupSize(const topo::Hierarchy& h, const Stage& s) {
  int g = 1;
  for (int l : s.levels) {
    if (l >= 0 && l < h.numLevels()) g *= h.width(l);
  }
  return g;
}

}  // namespace

double ringReduceScatterUs(int g, double bytes, const topo::LinkModel& link, int sharing,
                           const CostParams& params) {
  if (g <= 1) return 0;
  const double moved = ringFraction(g) * bytes;
  return (g - 1) * alphaUs(link) + moved * betaEffUsPerByte(link, sharing) +
         reduceUs(moved, params);
}

double ringAllGatherUs(int g, double bytes, const topo::LinkModel& link, int sharing) {
  if (g <= 1) return 0;
  return (g - 1) * alphaUs(link) + ringFraction(g) * bytes * betaEffUsPerByte(link, sharing);
}

double bestAllReduceUs(int g, double bytes, const topo::LinkModel& link, int sharing,
                       const CostParams& params, std::string* algorithm) {
  std::string chosen;
  const double us = allReduce(Costed::kAuto, g, bytes, link, sharing, params, &chosen).us;
  if (algorithm) *algorithm = chosen;
  return us;
}

namespace {

// One MPI_Allreduce: every round is assumed to cross the slowest level, unshared.
Prediction predictPassthrough(const topo::Hierarchy& h, double bytes, const CostParams& params) {
  std::vector<int> all;
  for (int l = 0; l < h.numLevels(); ++l) all.push_back(l);
  StageCost c;
  c.label = "allreduce@all";
  c.groupSize = h.numRanks();
  c.bytes = bytes;
  const FabricTraits& flat = traitsOf(params.fabrics, params.flatFabric);
  const AllReduceCost ar = fabricAllReduce(
      flat, Algorithm::kAuto, c.groupSize, bytes, withStepOverhead(linkFor(stageLink(h, all), flat), params),
      1, params, &c.algorithm);
  c.us = ar.us;
  c.bytesMoved = ar.bytesSent;
  Prediction out;
  out.stages.push_back(c);
  out.totalUs = out.serialUs = c.us;
  return out;
}

// Whether a stage's groups span hosts, as far as the pure model can tell: one of its levels
// has a network link (infiniband, roce, ethernet, efa), or, in a hierarchy of several levels
// whose links are not known, it holds the top level.
bool stageCrossesHosts(const topo::Hierarchy& h, const Stage& s) {
  bool kindsKnown = false;
  for (int l = 0; l < h.numLevels(); ++l) {
    kindsKnown = kindsKnown || h.level(l).link.kind != topo::LinkKind::kUnknown;
  }
  for (int l : s.levels) {
    if (topo::isNetworkLink(h.level(l).link.kind)) return true;
    if (!kindsKnown && h.numLevels() > 1 && l == h.numLevels() - 1) return true;
  }
  return false;
}

// The type a float32 sum travels in over `s`: its own `wire`, else params.compress where its
// groups span hosts (core/plan_book.cc decides the same from the real host names).
WireType stageWire(const topo::Hierarchy& h, const Stage& s, const CostParams& params) {
  if (s.wire) return *s.wire;
  return params.compress != WireType::kNone && stageCrossesHosts(h, s) ? params.compress
                                                                       : WireType::kNone;
}

// What compressing one collective of a stage adds: converting its range of `n` float32 bytes
// to the 2-byte type and back (read 4 + write 2 bytes, then read 2 + write 4, at the local
// reduction rate), and for fp16 the group's agreement on a scale, one 4-byte allreduce.
double wireCostUs(WireType w, int g, double n, const FabricTraits& fabric,
                  const topo::LinkModel& link, int sharing, const CostParams& params) {
  if (w == WireType::kNone) return 0;
  double us = reduceUs(1.5 * n, params);
  if (w == WireType::kFp16) {
    std::string ignored;
    us += fabricAllReduce(fabric, Algorithm::kAuto, g, 4, link, sharing, params, &ignored).us;
  }
  return us;
}

// One piece of a staged plan: its stages, innermost reduce-scatter first, and their sum.
Prediction predictStages(const topo::Hierarchy& h, const Plan& plan, double bytes,
                         const CostParams& params) {
  Prediction out;
  const int m = static_cast<int>(plan.stages.size());
  std::vector<StageCost> up, down;  // reduce-scatters (and the allreduce), all-gathers
  double range = bytes;             // each rank's range entering stage j
  for (int j = 0; j < m; ++j) {
    const Stage& s = plan.stages[j];
    const int g = stageGroupSize(h, s);
    const FabricTraits& fabric = traitsOf(params.fabrics, stageFabric(h, s));
    const bool shm = fabric.cost == CostStyle::kSharedSlots;
    const topo::LinkModel link = withStepOverhead(
        shm ? stageLink(h, s.levels) : linkFor(stageLink(h, s.levels), fabric), params);
    const int sharing = stageSharing(h, s);
    const std::string name = stageName(h, s);
    // A compressed stage moves and combines 2-byte values: the same formulas on half the bytes,
    // plus its conversions (wireCostUs).
    const WireType wire = stageWire(h, s, params);
    const double n = wire == WireType::kNone || g <= 1 ? range : range / 2;
    const double convert = g > 1 ? wireCostUs(wire, g, range, fabric, link, sharing, params) : 0;
    StageCost c;
    c.groupSize = g;
    c.bytes = range;
    if (wire != WireType::kNone && g > 1) c.wire = wireTypeName(wire);
    if (j + 1 < m) {
      c.label = "reduce_scatter@" + name;
      c.algorithm = shm ? "shm" : "ring";
      c.us = (shm ? shmReduceScatterUs(g, n, link, params)
                  : ringReduceScatterUs(g, n, link, sharing, params)) +
             convert;
      c.bytesMoved = g > 1 ? ringFraction(g) * n : 0;
      up.push_back(c);
      c.label = "all_gather@" + name;
      c.us = (shm ? shmAllGatherUs(g, n, link) : ringAllGatherUs(g, n, link, sharing)) + convert;
      down.push_back(c);
      range /= g;
    } else {
      c.label = "allreduce@" + name;
      AllReduceCost ar;
      if (shm && g > 1 && s.algorithm != Algorithm::kRing) {
        ar = shmAllReduce(g, n, link, params);
        c.algorithm = "shm";
      } else if (shm && g > 1) {  // the fabric's reduce-scatter, then its all-gather
        ar = {shmReduceScatterUs(g, n, link, params) + shmAllGatherUs(g, n, link), n};
        c.algorithm = "ring";
      } else {
        ar = fabricAllReduce(fabric, s.algorithm, g, n, link, sharing, params, &c.algorithm);
      }
      c.us = ar.us + convert;
      c.bytesMoved = ar.bytesSent;
      up.push_back(c);
    }
  }
  out.stages = up;
  out.stages.insert(out.stages.end(), down.rbegin(), down.rend());
  for (const StageCost& c : out.stages) out.totalUs += c.us;
  out.serialUs = out.totalUs;
  return out;
}

}  // namespace

Prediction predict(const topo::Hierarchy& h, const Plan& plan, double bytes,
                   const CostParams& params) {
  if (plan.passthrough) return predictPassthrough(h, bytes, params);
  size_t piece = planPieceBytes(plan);
  if (piece == 0) piece = params.pipelineBytes.value_or(0);
  const double pieces = piece > 0 && bytes > piece ? std::ceil(bytes / piece) : 1;
  if (pieces <= 1) return predictStages(h, plan, bytes, params);
  // Every piece alike (the last one is smaller in fact): one piece's stages, times the pieces.
  Prediction out = predictStages(h, plan, bytes / pieces, params);
  const double top = out.stages[plan.stages.size() - 1].us, below = out.serialUs - top;
  for (StageCost& c : out.stages) {
    c.us *= pieces;
    c.bytes *= pieces;
    c.bytesMoved *= pieces;
  }
  out.pieces = static_cast<int>(pieces);
  out.pieceBytes = bytes / pieces;
  out.serialUs *= pieces;
  out.totalUs =
      piecesOverlap(plan) ? below + top + (pieces - 1) * std::max(top, below) : out.serialUs;
  return out;
}

}  // namespace strata::plan
