#include "fabrics/staged/staging_plan.h"

#include <algorithm>

namespace strata::fabric::staging {
namespace {

// Whether the call is one range (cut into element chunks) rather than blocks.
bool ranged(Collective kind) {
  return kind == Collective::kAllReduce || kind == Collective::kBroadcast ||
         kind == Collective::kReduce;
}

// The longest block: the number of columns the call has.
size_t longestBlock(const Layout& l) {
  size_t most = 0;
  for (int j = 0; j < l.members; ++j) most = std::max(most, l.counts[j]);
  return most;
}

}  // namespace

size_t columnsPerChunk(const Layout& l, size_t slotElements) {
  if (ranged(l.kind)) return std::max<size_t>(1, slotElements);
  return std::max<size_t>(1, slotElements / static_cast<size_t>(l.members));
}

size_t numChunks(const Layout& l, size_t cols) {
  const size_t span = ranged(l.kind) ? l.count : longestBlock(l);
  return (span + cols - 1) / cols;
}

void makeChunk(const Layout& l, size_t cols, size_t k, Chunk* out) {
  out->in.clear();
  out->out.clear();
  const size_t first = k * cols;
  const bool root = l.me == l.root;
  if (ranged(l.kind)) {
    const size_t n = std::min(cols, l.count - first);
    out->hostCount = n;
    if (l.kind != Collective::kBroadcast || root) out->in.push_back(Copy{first, 0, n});
    if (l.kind != Collective::kReduce || root) out->out.push_back(Copy{first, 0, n});
    return;
  }
  out->hostCounts.assign(l.members, 0);
  out->hostDispls.assign(l.members, 0);
  size_t packed = 0;
  for (int j = 0; j < l.members; ++j) {
    const size_t n = l.counts[j] > first ? std::min(cols, l.counts[j] - first) : 0;
    out->hostCounts[j] = n;
    out->hostDispls[j] = packed;
    // Reduce-scatter (scatter: on the root only): every block's piece in from the range; this
    // member's out to its block. All-gather (gather): this member's piece in from its block;
    // every piece out to the range (gather: on the root only).
    const Copy whole{l.displs[j] + first, packed, n}, own{first, packed, n};
    if (n > 0) {
      if (l.kind == Collective::kReduceScatter || l.kind == Collective::kScatter) {
        if (l.kind == Collective::kReduceScatter || root) out->in.push_back(whole);
        if (j == l.me) out->out.push_back(own);
      } else {
        if (j == l.me) out->in.push_back(own);
        if (l.kind == Collective::kAllGather || root) out->out.push_back(whole);
      }
    }
    packed += n;
  }
  out->hostCount = packed;
}

}  // namespace strata::fabric::staging
