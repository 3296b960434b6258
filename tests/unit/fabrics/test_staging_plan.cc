// The staged fabric's chunking (fabrics/staging_plan.h), checked by running whole staged
// collectives in one process: every member's device buffer is a vector, each chunk's copies
// fill and empty a slot of the given size, and the host collective is computed directly. The
// results must equal the collective done at once, for regular and irregular blocks, slot sizes
// from one element up, the last partial chunk, and in-place calls.
#include <catch2/catch.hpp>
#include <cstddef>
#include <numeric>
#include <vector>

#include "fabrics/staged/staging_plan.h"

using strata::fabric::staging::Chunk;
using strata::fabric::staging::columnsPerChunk;
using strata::fabric::staging::Copy;
using Kind = strata::Collective;
using strata::fabric::staging::Layout;
using strata::fabric::staging::makeChunk;
using strata::fabric::staging::numChunks;

namespace {

using Buffer = std::vector<long>;

std::vector<size_t> displsOf(const std::vector<size_t>& counts) {
  std::vector<size_t> d(counts.size(), 0);
  for (size_t j = 1; j < counts.size(); ++j) d[j] = d[j - 1] + counts[j - 1];
  return d;
}

// Every member's chunk k, checked against the slot: packed pieces, within the slot.
std::vector<Chunk> chunksOf(const std::vector<Layout>& layouts, size_t cols, size_t k,
                            size_t slotElements) {
  std::vector<Chunk> out(layouts.size());
  for (size_t m = 0; m < layouts.size(); ++m) {
    makeChunk(layouts[m], cols, k, &out[m]);
    REQUIRE(out[m].hostCount <= slotElements);
    REQUIRE(out[m].hostCount > 0);  // no chunk is empty for every member
    for (const Copy& c : out[m].in) REQUIRE(c.host + c.count <= out[m].hostCount);
    for (const Copy& c : out[m].out) REQUIRE(c.host + c.count <= out[m].hostCount);
  }
  return out;
}

void copyIn(const Chunk& c, const Buffer& dev, Buffer& slot) {
  for (const Copy& cp : c.in) {
    for (size_t i = 0; i < cp.count; ++i) slot[cp.host + i] = dev.at(cp.device + i);
  }
}
void copyOut(const Chunk& c, const Buffer& slot, Buffer& dev) {
  for (const Copy& cp : c.out) {
    for (size_t i = 0; i < cp.count; ++i) dev.at(cp.device + i) = slot[cp.host + i];
  }
}

// Reduce-scatter of `in` (one range per member) through slots of `slotElements`; in place
// when `inPlace` (the result then lands in the member's own block of its range).
std::vector<Buffer> stagedReduceScatter(const std::vector<Buffer>& in,
                                        const std::vector<size_t>& counts, size_t slotElements,
                                        bool inPlace) {
  const int p = static_cast<int>(counts.size());
  const std::vector<size_t> displs = displsOf(counts);
  std::vector<Layout> layouts(p);
  std::vector<Buffer> dev = in, out(p);
  for (int m = 0; m < p; ++m) {
    layouts[m] = Layout{Kind::kReduceScatter, 0, p, m, counts.data(), displs.data()};
    out[m].assign(counts[m], -1);
  }
  const size_t cols = columnsPerChunk(layouts[0], slotElements);
  const size_t chunks = numChunks(layouts[0], cols);
  for (size_t k = 0; k < chunks; ++k) {
    const std::vector<Chunk> cs = chunksOf(layouts, cols, k, slotElements);
    std::vector<Buffer> slots(p, Buffer(slotElements, 0));
    for (int m = 0; m < p; ++m) copyIn(cs[m], dev[m], slots[m]);
    // The host reduce-scatter, in place: member j's piece is the sum of everyone's piece j.
    std::vector<Buffer> reduced = slots;
    for (int j = 0; j < p; ++j) {
      REQUIRE(cs[j].hostCounts == cs[0].hostCounts);  // every member agrees on the layout
      for (size_t i = 0; i < cs[0].hostCounts[j]; ++i) {
        long sum = 0;
        for (int m = 0; m < p; ++m) sum += slots[m][cs[0].hostDispls[j] + i];
        reduced[j][cs[0].hostDispls[j] + i] = sum;
      }
    }
    for (int m = 0; m < p; ++m) {
      if (inPlace) {
        Buffer block(dev[m].begin() + displs[m], dev[m].begin() + displs[m] + counts[m]);
        copyOut(cs[m], reduced[m], block);
        std::copy(block.begin(), block.end(), dev[m].begin() + displs[m]);
      } else {
        copyOut(cs[m], reduced[m], out[m]);
      }
    }
  }
  if (inPlace) {
    for (int m = 0; m < p; ++m) {
      out[m].assign(dev[m].begin() + displs[m], dev[m].begin() + displs[m] + counts[m]);
    }
  }
  return out;
}

std::vector<Buffer> stagedAllGather(const std::vector<Buffer>& blocks,
                                    const std::vector<size_t>& counts, size_t slotElements) {
  const int p = static_cast<int>(counts.size());
  const std::vector<size_t> displs = displsOf(counts);
  const size_t total = displs.back() + counts.back();
  std::vector<Layout> layouts(p);
  std::vector<Buffer> out(p, Buffer(total, -1));
  for (int m = 0; m < p; ++m) {
    layouts[m] = Layout{Kind::kAllGather, 0, p, m, counts.data(), displs.data()};
  }
  const size_t cols = columnsPerChunk(layouts[0], slotElements);
  for (size_t k = 0; k < numChunks(layouts[0], cols); ++k) {
    const std::vector<Chunk> cs = chunksOf(layouts, cols, k, slotElements);
    std::vector<Buffer> slots(p, Buffer(slotElements, 0));
    for (int m = 0; m < p; ++m) copyIn(cs[m], blocks[m], slots[m]);
    Buffer gathered(slotElements, 0);  // the host all-gather: piece j from member j
    for (int j = 0; j < p; ++j) {
      for (size_t i = 0; i < cs[0].hostCounts[j]; ++i) {
        gathered[cs[0].hostDispls[j] + i] = slots[j][cs[0].hostDispls[j] + i];
      }
    }
    for (int m = 0; m < p; ++m) copyOut(cs[m], gathered, out[m]);
  }
  return out;
}

}  // namespace

TEST_CASE("staging: an allreduce's chunks cover the range once, the last one partial") {
  Layout l;
  l.kind = Kind::kAllReduce;
  l.count = 10;
  const size_t cols = columnsPerChunk(l, 4);
  REQUIRE(cols == 4);
  REQUIRE(numChunks(l, cols) == 3);
  std::vector<int> seen(l.count, 0);
  Chunk c;
  for (size_t k = 0; k < 3; ++k) {
    makeChunk(l, cols, k, &c);
    REQUIRE(c.in.size() == 1);
    REQUIRE(c.out.size() == 1);
    CHECK(c.in[0].device == c.out[0].device);
    CHECK(c.hostCount == (k < 2 ? 4u : 2u));
    for (size_t i = 0; i < c.in[0].count; ++i) ++seen[c.in[0].device + i];
  }
  CHECK(std::all_of(seen.begin(), seen.end(), [](int n) { return n == 1; }));
  l.count = 0;
  CHECK(numChunks(l, cols) == 0);
}

TEST_CASE("staging: reduce-scatter through slots equals the direct reduce-scatter") {
  const std::vector<std::vector<size_t>> layouts = {
      {4, 4, 4}, {5, 0, 3, 7}, {1}, {0, 0, 9}, {13, 12, 12, 12, 12}};
  for (const std::vector<size_t>& counts : layouts) {
    const int p = static_cast<int>(counts.size());
    const size_t total = std::accumulate(counts.begin(), counts.end(), size_t{0});
    std::vector<Buffer> in(p, Buffer(total));
    for (int m = 0; m < p; ++m) {
      for (size_t i = 0; i < total; ++i) in[m][i] = static_cast<long>(1000 * m + 7 * i + 1);
    }
    const std::vector<size_t> displs = displsOf(counts);
    for (size_t slot : {1, 2, 3, 5, 8, 64}) {
      if (slot < counts.size()) continue;  // a slot holds a column of every member at least
      for (bool inPlace : {false, true}) {
        CAPTURE(counts, slot, inPlace);
        const std::vector<Buffer> got = stagedReduceScatter(in, counts, slot, inPlace);
        for (int m = 0; m < p; ++m) {
          for (size_t i = 0; i < counts[m]; ++i) {
            long want = 0;
            for (int r = 0; r < p; ++r) want += in[r][displs[m] + i];
            REQUIRE(got[m][i] == want);
          }
        }
      }
    }
  }
}

TEST_CASE("staging: all-gather through slots equals the direct all-gather") {
  for (const std::vector<size_t>& counts :
       std::vector<std::vector<size_t>>{{3, 3}, {5, 0, 3, 7}, {0, 1}, {11, 10, 10}}) {
    const int p = static_cast<int>(counts.size());
    std::vector<Buffer> blocks(p);
    Buffer want;
    for (int m = 0; m < p; ++m) {
      for (size_t i = 0; i < counts[m]; ++i) blocks[m].push_back(static_cast<long>(100 * m + i));
      want.insert(want.end(), blocks[m].begin(), blocks[m].end());
    }
    for (size_t slot : {1, 2, 4, 7, 100}) {
      if (slot < counts.size()) continue;
      CAPTURE(counts, slot);
      for (const Buffer& got : stagedAllGather(blocks, counts, slot)) REQUIRE(got == want);
    }
  }
}
