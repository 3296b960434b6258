// The staged fabric's chunking (fabrics/staging_plan.h), checked by running whole staged
// collectives in one process: every member's device buffer is a vector, each chunk's copies
// fill and empty a slot of the given size, and the host collective is computed directly. The
// results must equal the collective done at once, for regular and irregular blocks, slot sizes
// from one element up, the last partial chunk, and in-place calls.
#include <catch2/catch.hpp>
#include <cstddef>
#include <algorithm>
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

namespace {

// A rooted collective through slots: every member's copies in, the host operation `host`
// (slots in, slots out, with the chunk's layout), every member's copies out. `in` and `out`
// are per-member device buffers; out starts at -1 so that writes where none belong show.
template <typename Host>
std::vector<Buffer> stagedRooted(Layout base, const std::vector<Buffer>& in, size_t outElements,
                                 size_t slotElements, Host host) {
  const int p = base.members;
  std::vector<Layout> layouts(p, base);
  std::vector<Buffer> out(p, Buffer(outElements, -1));
  for (int m = 0; m < p; ++m) layouts[m].me = m;
  const size_t cols = columnsPerChunk(layouts[0], slotElements);
  for (size_t k = 0; k < numChunks(layouts[0], cols); ++k) {
    const std::vector<Chunk> cs = chunksOf(layouts, cols, k, slotElements);
    std::vector<Buffer> slots(p, Buffer(slotElements, -7));  // -7: a slot nobody filled
    for (int m = 0; m < p; ++m) copyIn(cs[m], in[m], slots[m]);
    host(cs[0], slots);
    for (int m = 0; m < p; ++m) copyOut(cs[m], slots[m], out[m]);
  }
  return out;
}

}  // namespace

TEST_CASE("staging: broadcast and reduce read and write only where they should") {
  for (int p : {1, 2, 3, 5}) {
    for (int root = 0; root < p; ++root) {
      for (size_t count : {size_t{0}, size_t{1}, size_t{7}, size_t{64}}) {
        std::vector<Buffer> in(p, Buffer(count));
        for (int m = 0; m < p; ++m) {
          for (size_t i = 0; i < count; ++i) in[m][i] = static_cast<long>(100 * m + i + 1);
        }
        Layout l;
        l.count = count;
        l.members = p;
        l.root = root;
        for (size_t slot : {1, 3, 16}) {
          CAPTURE(p, root, count, slot);
          l.kind = Kind::kBroadcast;
          // Non-roots' input is never read: it is empty here, so a read would throw.
          std::vector<Buffer> rootOnly(p);
          rootOnly[root] = in[root];
          const auto bcast = stagedRooted(l, rootOnly, count, slot, [&](const Chunk& c, auto& slots) {
            for (int m = 0; m < p; ++m) {
              std::copy(slots[root].begin(), slots[root].begin() + c.hostCount, slots[m].begin());
            }
          });
          for (int m = 0; m < p; ++m) REQUIRE(bcast[m] == in[root]);
          l.kind = Kind::kReduce;
          const auto reduced = stagedRooted(l, in, count, slot, [&](const Chunk& c, auto& slots) {
            for (size_t i = 0; i < c.hostCount; ++i) {
              long sum = 0;
              for (int m = 0; m < p; ++m) sum += slots[m][i];
              for (int m = 0; m < p; ++m) slots[m][i] = m == root ? sum : -5;
            }
          });
          for (int m = 0; m < p; ++m) {
            for (size_t i = 0; i < count; ++i) {
              long want = 0;
              for (int r = 0; r < p; ++r) want += in[r][i];
              REQUIRE(reduced[m][i] == (m == root ? want : -1));  // non-roots: never written
            }
          }
        }
      }
    }
  }
}

TEST_CASE("staging: scatter and gather through slots, regular and irregular blocks") {
  for (const std::vector<size_t>& counts :
       std::vector<std::vector<size_t>>{{3, 3}, {5, 0, 3, 7}, {0, 1}, {11, 10, 10}, {4}}) {
    const int p = static_cast<int>(counts.size());
    const std::vector<size_t> displs = displsOf(counts);
    const size_t total = displs.back() + counts.back();
    for (int root = 0; root < p; ++root) {
      Layout l;
      l.members = p;
      l.counts = counts.data();
      l.displs = displs.data();
      l.root = root;
      // Scatter: only the root's range is read (the others are empty: a read would throw);
      // member m gets block m.
      std::vector<Buffer> ranges(p);
      ranges[root].resize(total);
      for (size_t i = 0; i < total; ++i) ranges[root][i] = static_cast<long>(10 * i + 1);
      // Gather: member m's block.
      std::vector<Buffer> blocks(p);
      for (int m = 0; m < p; ++m) {
        for (size_t i = 0; i < counts[m]; ++i) blocks[m].push_back(static_cast<long>(100 * m + i));
      }
      for (size_t slot : {size_t{5}, size_t{8}, size_t{100}}) {
        if (slot < counts.size()) continue;
        CAPTURE(counts, root, slot);
        l.kind = Kind::kScatter;
        // The out buffers here are blocks: give stagedRooted the longest.
        const size_t longest = *std::max_element(counts.begin(), counts.end());
        const auto scattered = stagedRooted(l, ranges, longest, slot, [&](const Chunk& c, auto& s) {
          for (int m = 0; m < p; ++m) {
            for (size_t i = 0; i < c.hostCounts[m]; ++i) {
              s[m][c.hostDispls[m] + i] = s[root][c.hostDispls[m] + i];
            }
          }
        });
        for (int m = 0; m < p; ++m) {
          for (size_t i = 0; i < counts[m]; ++i) REQUIRE(scattered[m][i] == ranges[root][displs[m] + i]);
        }
        l.kind = Kind::kGather;
        const auto gathered = stagedRooted(l, blocks, total, slot, [&](const Chunk& c, auto& s) {
          for (int j = 0; j < p; ++j) {
            for (size_t i = 0; i < c.hostCounts[j]; ++i) {
              s[root][c.hostDispls[j] + i] = s[j][c.hostDispls[j] + i];
            }
          }
        });
        for (int m = 0; m < p; ++m) {
          for (int j = 0; j < p; ++j) {
            for (size_t i = 0; i < counts[j]; ++i) {
              REQUIRE(gathered[m][displs[j] + i] == (m == root ? blocks[j][i] : -1));
            }
          }
        }
      }
    }
  }
}
