// The pure steps of CSC (core/csc_select.h): chunking with a short last chunk, k for edge
// densities, norms of g = buff + r in each type, top-k with ties and NaN, pack/unpack and the
// residual update, checked against values worked out by hand.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <limits>
#include <vector>

#include "common/half.h"
#include "core/csc_select.h"

namespace strata::core::csc {
namespace {

std::vector<uint32_t> topK(const std::vector<float>& norms, size_t k) {
  std::vector<uint32_t> order(norms.size()), selected(k);
  selectTopK(norms.data(), norms.size(), k, order.data(), selected.data());
  return selected;
}

}  // namespace

TEST_CASE("csc: chunking cuts a short last chunk", "[csc]") {
  const Chunking ch = Chunking::of(10, 4);
  CHECK(ch.nchunks == 3);
  CHECK(ch.begin(2) == 8);
  CHECK(ch.size(0) == 4);
  CHECK(ch.size(2) == 2);
  CHECK(Chunking::of(8, 4).nchunks == 2);
  CHECK(Chunking::of(8, 4).size(1) == 4);
  CHECK(Chunking::of(3, 100).nchunks == 1);
  CHECK(Chunking::of(3, 100).size(0) == 3);
}

TEST_CASE("csc: k = ceil(density * nchunks) for the densities people write", "[csc]") {
  CHECK(keptChunks(0.1f, 10) == 1);  // 0.1f is slightly above 0.1: still 1 chunk
  CHECK(keptChunks(0.3f, 10) == 3);
  CHECK(keptChunks(0.7f, 10) == 7);
  CHECK(keptChunks(0.15f, 20) == 3);
  CHECK(keptChunks(0.11f, 10) == 2);  // a true fraction rounds up
  CHECK(keptChunks(0.1f, 11) == 2);   // 1.1 chunks
  CHECK(keptChunks(1.0f, 7) == 7);
  CHECK(keptChunks(1e-9f, 7) == 1);  // never fewer than one
  CHECK(keptChunks(0.5f, 1) == 1);
  CHECK(keptChunks(0.1f, 1000000) == 100000);
  CHECK(keptChunks(std::nextafter(1.0f, 0.0f), 5) == 5);
}

TEST_CASE("csc: top-k takes the largest norms, ties to the lower index, in index order", "[csc]") {
  CHECK(topK({1, 5, 3, 5, 2}, 2) == std::vector<uint32_t>{1, 3});
  CHECK(topK({1, 5, 3, 5, 2}, 1) == std::vector<uint32_t>{1});
  // Ties at the boundary: of the three 2s only the first two fit.
  CHECK(topK({2, 9, 2, 0, 2}, 3) == std::vector<uint32_t>{0, 1, 2});
  CHECK(topK({4, 4, 4, 4}, 2) == std::vector<uint32_t>{0, 1});
  CHECK(topK({0, 0, 0}, 3) == std::vector<uint32_t>{0, 1, 2});
  CHECK(topK({3, 1, 2}, 3) == std::vector<uint32_t>{0, 1, 2});
  // NaN ranks as +infinity, before a finite norm, tied with infinity by index.
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const float inf = std::numeric_limits<float>::infinity();
  CHECK(topK({1e30f, nan, 7}, 1) == std::vector<uint32_t>{1});
  CHECK(topK({inf, 1, nan}, 2) == std::vector<uint32_t>{0, 2});
  CHECK(topK({1, nan, inf}, 1) == std::vector<uint32_t>{1});
}

TEST_CASE("csc: top-k agrees with a sort on many random inputs with ties", "[csc]") {
  uint32_t state = 12345;
  for (int trial = 0; trial < 200; ++trial) {
    const size_t n = 1 + trial % 37;
    std::vector<float> norms(n);
    for (float& v : norms) {
      state = state * 1664525u + 1013904223u;
      v = static_cast<float>((state >> 16) % 5);  // few values: many ties
    }
    const size_t k = 1 + (state >> 8) % n;
    // Reference: indices ordered by (norm descending, index ascending), first k, sorted.
    std::vector<uint32_t> all(n);
    for (size_t i = 0; i < n; ++i) all[i] = static_cast<uint32_t>(i);
    std::stable_sort(all.begin(), all.end(),
                     [&](uint32_t a, uint32_t b) { return norms[a] > norms[b]; });
    std::vector<uint32_t> want(all.begin(), all.begin() + static_cast<long>(k));
    std::sort(want.begin(), want.end());
    INFO("trial " << trial << " n " << n << " k " << k);
    CHECK(topK(norms, k) == want);
  }
}

TEST_CASE("csc: accumulate adds the residual and takes L1 norms per chunk", "[csc]") {
  const Chunking ch = Chunking::of(5, 2);
  const std::vector<float> buff = {1, -2, 3, 0.5f, -4};
  std::vector<float> r = {0, 1, -1, 0, 2};
  std::vector<float> norms(ch.nchunks);
  accumulate(strataFloat32, ch, buff.data(), r.data(), norms.data());
  CHECK(r == std::vector<float>{1, -1, 2, 0.5f, -2});
  CHECK(norms == std::vector<float>{2, 2.5f, 2});
}

TEST_CASE("csc: accumulate rounds g once to fp16 and bf16", "[csc]") {
  const Chunking ch = Chunking::of(3, 3);
  float norm = 0;
  // fp16: 2048 + 1 is not representable (ties to even: 2048); 0.25 + 0.5 is exact.
  std::vector<uint16_t> b16 = {floatToHalf(2048), floatToHalf(0.25f), floatToHalf(-3)};
  std::vector<uint16_t> r16 = {floatToHalf(1), floatToHalf(0.5f), floatToHalf(1)};
  accumulate(strataFloat16, ch, b16.data(), r16.data(), &norm);
  CHECK(halfToFloat(r16[0]) == 2048);
  CHECK(halfToFloat(r16[1]) == 0.75f);
  CHECK(halfToFloat(r16[2]) == -2);
  CHECK(norm == 2048 + 0.75f + 2);
  // bf16: 256 + 1 rounds to 256; -1.5 + 0.25 is exact.
  std::vector<uint16_t> bb = {floatToBf16(256), floatToBf16(-1.5f), 0};
  std::vector<uint16_t> rb = {floatToBf16(1), floatToBf16(0.25f), 0};
  accumulate(strataBfloat16, ch, bb.data(), rb.data(), &norm);
  CHECK(bf16ToFloat(rb[0]) == 256);
  CHECK(bf16ToFloat(rb[1]) == -1.25f);
  CHECK(norm == 257.25f);
}

TEST_CASE("csc: pack sends the selected chunks and zeroes them in the residual", "[csc]") {
  const Chunking ch = Chunking::of(7, 3);  // chunks [0,3) [3,6) [6,7)
  std::vector<float> r = {1, 2, 3, 4, 5, 6, 7};
  const std::vector<uint32_t> selected = {0, 2};  // the short last chunk among them
  std::vector<float> packed(4, -1);
  CHECK(pack(sizeof(float), ch, selected.data(), selected.size(), r.data(), packed.data()) == 4);
  CHECK(packed == std::vector<float>{1, 2, 3, 7});
  CHECK(r == std::vector<float>{0, 0, 0, 4, 5, 6, 0});

  // The reduced pack goes back to the selected chunks; every other element becomes zero.
  std::vector<float> buff(7, 99);
  const std::vector<float> reduced = {10, 20, 30, 70};
  unpack(sizeof(float), ch, selected.data(), selected.size(), reduced.data(), buff.data());
  CHECK(buff == std::vector<float>{10, 20, 30, 0, 0, 0, 70});

  const std::vector<uint32_t> middle = {1};
  std::vector<float> one = {40, 50, 60};
  unpack(sizeof(float), ch, middle.data(), middle.size(), one.data(), buff.data());
  CHECK(buff == std::vector<float>{0, 0, 0, 40, 50, 60, 0});
}

TEST_CASE("csc: one rank's step conserves g (sent + kept == buff + r)", "[csc]") {
  const Chunking ch = Chunking::of(10, 3);
  const size_t k = keptChunks(0.5f, ch.nchunks);  // 2 of 4
  std::vector<float> buff = {1, -1, 0, 5, 5, 5, 2, 0, 0, 9};
  std::vector<float> r = {0, 0, 0, 0, 0, 1, 0, 0, 0, -1};
  std::vector<float> g(10);
  for (size_t i = 0; i < 10; ++i) g[i] = buff[i] + r[i];
  std::vector<float> norms(ch.nchunks);
  accumulate(strataFloat32, ch, buff.data(), r.data(), norms.data());
  CHECK(norms == std::vector<float>{2, 16, 2, 8});
  std::vector<uint32_t> order(ch.nchunks), selected(k);
  selectTopK(norms.data(), ch.nchunks, k, order.data(), selected.data());
  CHECK(selected == std::vector<uint32_t>{1, 3});
  std::vector<float> packed(k * 3);
  const size_t n = pack(sizeof(float), ch, selected.data(), k, r.data(), packed.data());
  CHECK(n == 4);
  unpack(sizeof(float), ch, selected.data(), k, packed.data(), buff.data());  // one rank: sum = g
  for (size_t i = 0; i < 10; ++i) {
    INFO("element " << i);
    CHECK(buff[i] + r[i] == g[i]);
    CHECK((buff[i] == 0 || r[i] == 0));
  }
}

}  // namespace strata::core::csc
