#include "decompose/planner.h"

#include <algorithm>
#include <cmath>
#include <numeric>

namespace strata::plan {
namespace {

// The name of an innermost-first split, by its shape.
std::string splitName(const topo::Hierarchy& h, const std::vector<Stage>& stages) {
  const int k = h.numLevels();
  if (stages.size() == 1) return "flat";
  if (static_cast<int>(stages.size()) == k) return "blueconnect";
  if (stages.size() == 2 && stages[1].levels.size() == 1 && stages[1].levels[0] == k - 1) {
    return "two-level";
  }
  return "merged";
}

}  // namespace

std::vector<Plan> candidatePlans(const topo::Hierarchy& h, const CostParams& params) {
  std::vector<Plan> out;
  Plan pass;
  pass.name = "passthrough";
  pass.passthrough = true;
  out.push_back(pass);

  const int k = h.numLevels();
  std::vector<int> all(k);
  std::iota(all.begin(), all.end(), 0);
  if (traitsOf(params.fabrics, h.level(k - 1).fabric).cost != CostStyle::kMessages) {
    // One allreduce over everyone on the outer level's own fabric (e.g. shm on one host).
    Plan flat;
    flat.name = "flat";
    flat.stages.push_back(Stage{all, "", Algorithm::kAuto, 0, std::nullopt});
    out.push_back(flat);
  }
  Plan ring;
  ring.name = "flat-ring";
  ring.stages.push_back(Stage{all, "", Algorithm::kRing, 0, std::nullopt});
  out.push_back(ring);
  if (k == 1) return out;

  // Splits of 0..k-1 into consecutive runs: bit b set = a stage boundary after level b. Every
  // one up to kMaxSplitLevels levels; beyond, each single boundary and all of them.
  std::vector<uint64_t> masks;
  if (k <= kMaxSplitLevels) {
    for (uint64_t mask = 1; mask < (uint64_t{1} << (k - 1)); ++mask) masks.push_back(mask);
  } else {
    for (int b = 0; b + 1 < k; ++b) masks.push_back(uint64_t{1} << b);
    masks.push_back((uint64_t{1} << (k - 1)) - 1);
  }
  for (const uint64_t mask : masks) {
    std::vector<Stage> stages(1);
    for (int l = 0; l < k; ++l) {
      stages.back().levels.push_back(l);
      if (l + 1 < k && (mask >> l) & 1u) stages.emplace_back();
    }
    Plan p;
    p.name = splitName(h, stages);
    p.stages = stages;
    if (!h.isRegular()) {
      p.note = "irregular layout " + h.describe() +
               ": stages innermost first; the first width ranks of each group hold shards";
    }
    out.push_back(p);
    if (!h.isRegular() || static_cast<int>(stages.size()) > kMaxReorderedStages) continue;
    // Other orders of the same stages (the innermost-first one was just added).
    std::vector<int> order(stages.size());
    std::iota(order.begin(), order.end(), 0);
    while (std::next_permutation(order.begin(), order.end())) {
      Plan q;
      q.name = "reordered-" + p.name;
      for (int i : order) q.stages.push_back(stages[i]);
      out.push_back(q);
    }
  }
  return out;
}

int sizeBucket(size_t bytes) {
  int b = 0;
  while (bytes > 1) {
    bytes >>= 1;
    ++b;
  }
  return b;
}

double bucketBytes(int bucket) { return bucket == 0 ? 1.0 : std::ldexp(1.41421356, bucket); }

Choice choosePieces(const topo::Hierarchy& h, const Plan& p, double bytes,
                    const CostParams& params) {
  Choice best{p, predict(h, p, bytes, params)};
  if (params.pipelineBytes || planPieceBytes(p) != 0 || !piecesOverlap(p)) return best;
  // Largest first (a tie keeps fewer pieces), from the largest power of two below `bytes`, at
  // most 1 GiB (the largest chunk_bytes a plan file may give), down to kMinPipelineBytes.
  constexpr size_t kMaxPiece = size_t{1} << 30;
  size_t piece = kMinPipelineBytes;
  while (piece < kMaxPiece && static_cast<double>(2 * piece) < bytes) piece *= 2;
  for (; piece >= kMinPipelineBytes && static_cast<double>(piece) < bytes; piece /= 2) {
    Plan q = p;
    q.stages.back().chunkBytes = piece;
    Prediction pred = predict(h, q, bytes, params);
    if (pred.totalUs < best.prediction.totalUs) best = Choice{std::move(q), std::move(pred)};
  }
  return best;
}

Choice choosePlan(const topo::Hierarchy& h, double bytes, const CostParams& params) {
  Choice best;
  bool have = false;
  for (const Plan& p : candidatePlans(h, params)) {
    Choice c = choosePieces(h, p, bytes, params);
    if (!have || c.prediction.totalUs < best.prediction.totalUs) {
      best = std::move(c);
      have = true;
    }
  }
  return best;
}

BlockForm chooseBlocks(const topo::Hierarchy& h, Collective coll, double bytes,
                       const CostParams& params) {
  if (!hierarchicalBlocksPossible(h)) return BlockForm::kFlat;
  const double flat = predictBlocks(h, coll, BlockForm::kFlat, bytes, params).totalUs;
  const double hier = predictBlocks(h, coll, BlockForm::kHierarchical, bytes, params).totalUs;
  return hier < flat ? BlockForm::kHierarchical : BlockForm::kFlat;
}

}  // namespace strata::plan
