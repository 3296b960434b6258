// Wire types and the conversions of compressed steps (common/wire.h): names, where they apply,
// the fp16 scale (no overflow for sums of `terms` values, largest values kept in fp16's normal
// range), and the round trip: exact for values the wire type holds, within one rounding
// (2^-11 relative for fp16, 2^-8 for bf16) otherwise.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "common/half.h"
#include "common/reduce.h"
#include "common/wire.h"

namespace strata {
namespace {

std::vector<float> roundTrip(const std::vector<float>& in, WireType w, int exp) {
  std::vector<uint16_t> wire(in.size());
  std::vector<float> out(in.size());
  narrowScaled(in.data(), wire.data(), in.size(), w, exp);
  widenScaled(wire.data(), out.data(), in.size(), w, exp);
  return out;
}

}  // namespace

TEST_CASE("wire: names, parsing and the data type", "[wire]") {
  for (WireType w : {WireType::kNone, WireType::kFp16, WireType::kBf16}) {
    WireType back = WireType::kNone;
    REQUIRE(parseWireType(wireTypeName(w), &back));
    CHECK(back == w);
  }
  WireType untouched = WireType::kBf16;
  CHECK_FALSE(parseWireType("FP16", &untouched));
  CHECK_FALSE(parseWireType("", &untouched));
  CHECK(untouched == WireType::kBf16);
  CHECK(wireDataType(WireType::kFp16) == strataFloat16);
  CHECK(wireDataType(WireType::kBf16) == strataBfloat16);
  CHECK(wireDataType(WireType::kNone) == strataFloat32);
}

TEST_CASE("wire: only float32 sums and averages are compressed", "[wire]") {
  CHECK(wireApplies(WireType::kFp16, strataFloat32, strataSum));
  CHECK(wireApplies(WireType::kBf16, strataFloat32, strataAvg));
  CHECK_FALSE(wireApplies(WireType::kNone, strataFloat32, strataSum));
  for (strataRedOp_t op : {strataProd, strataMax, strataMin}) {
    CHECK_FALSE(wireApplies(WireType::kFp16, strataFloat32, op));
  }
  for (strataDataType_t t :
       {strataInt32, strataInt8, strataFloat64, strataFloat16, strataBfloat16, strataUint64}) {
    CHECK_FALSE(wireApplies(WireType::kFp16, t, strataSum));
  }
}

TEST_CASE("wire: maxAbsFinite ignores NaN and infinities", "[wire]") {
  const float inf = std::numeric_limits<float>::infinity();
  const float nan = std::numeric_limits<float>::quiet_NaN();
  const std::vector<float> x = {1.5f, -7.25f, nan, inf, -inf, 3.0f};
  CHECK(maxAbsFinite(x.data(), x.size()) == 7.25f);
  const std::vector<float> none = {nan, inf};
  CHECK(maxAbsFinite(none.data(), none.size()) == 0.0f);
  CHECK(maxAbsFinite(nullptr, 0) == 0.0f);
}

TEST_CASE("wire: the fp16 exponent brings terms * maxAbs into 2^14 .. 2^15 (half open)", "[wire]") {
  CHECK(fp16ScaleExponent(0.0f, 4) == 0);
  CHECK(fp16ScaleExponent(1.0f, 1) == 14);  // 1 * 2^14
  CHECK(fp16ScaleExponent(1.0f, 2) == 13);  // 2 * 2^13 = 2^14
  CHECK(fp16ScaleExponent(1.0f, 3) == 13);  // 3 * 2^13 = 24576
  CHECK(fp16ScaleExponent(65504.0f, 1) == -1);
  CHECK(fp16ScaleExponent(1e38f, 1024) == -122);
  CHECK(fp16ScaleExponent(3e38f, 16384) == -126);  // clamped: 2^-126 is still a normal float
  CHECK(fp16ScaleExponent(1e-38f, 1) == 126);      // clamped at the other end
  std::mt19937 gen(7);
  std::uniform_real_distribution<double> logMag(-30, 30);
  for (int i = 0; i < 2000; ++i) {
    const float m = static_cast<float>(std::pow(2.0, logMag(gen)));
    const int terms = 1 + static_cast<int>(gen() % 4096);
    const int k = fp16ScaleExponent(m, terms);
    const double scaled = std::ldexp(static_cast<double>(m) * terms, k);
    INFO("maxAbs " << m << " terms " << terms << " k " << k);
    CHECK(scaled < 32768.0);
    CHECK(scaled >= 16384.0);
  }
}

TEST_CASE("wire: a sum of `terms` scaled fp16 values cannot overflow", "[wire]") {
  // The worst case: every member holds fp16's largest magnitude; summed in fp16 one by one,
  // rounding after each step as the mpi fabric may.
  for (int terms : {2, 3, 8, 100, 1000}) {
    const float m = 1e30f;
    const int k = fp16ScaleExponent(m, terms);
    std::vector<float> one = {m};
    std::vector<uint16_t> h(1);
    narrowScaled(one.data(), h.data(), 1, WireType::kFp16, k);
    float sum = 0;
    for (int t = 0; t < terms; ++t) sum = halfToFloat(floatToHalf(sum + halfToFloat(h[0])));
    INFO("terms " << terms);
    CHECK(std::isfinite(sum));
    CHECK(sum <= 65504.0f);
  }
}

TEST_CASE("wire: values the wire type holds survive the round trip exactly", "[wire]") {
  std::vector<float> ints;
  for (int v = -2048; v <= 2048; ++v) ints.push_back(static_cast<float>(v));
  // Small integers: exact in fp16 up to 2048, under any scale that keeps them in range.
  for (int exp : {0, 3, -4}) CHECK(roundTrip(ints, WireType::kFp16, exp) == ints);
  std::vector<float> small;  // bf16 holds integers up to 256 exactly
  for (int v = -256; v <= 256; ++v) small.push_back(static_cast<float>(v));
  CHECK(roundTrip(small, WireType::kBf16, 0) == small);
}

TEST_CASE("wire: other values err by at most one rounding of the wire type", "[wire]") {
  std::mt19937 gen(11);
  std::uniform_real_distribution<float> mantissa(-1, 1);
  std::vector<float> x(4096);
  for (size_t i = 0; i < x.size(); ++i) x[i] = mantissa(gen) * 1e-3f;  // gradient-like
  const float m = maxAbsFinite(x.data(), x.size());
  const int k = fp16ScaleExponent(m, 8);
  const std::vector<float> h = roundTrip(x, WireType::kFp16, k);
  const std::vector<float> b = roundTrip(x, WireType::kBf16, 0);
  for (size_t i = 0; i < x.size(); ++i) {
    // Scaled into fp16's normal range (>= 2^-14), the error is relative; below it, absolute:
    // half the subnormal step 2^-24, scaled back.
    const double fp16Bound =
        std::max(std::ldexp(std::fabs(static_cast<double>(x[i])), -11), std::ldexp(1.0, -25 - k));
    CHECK(std::fabs(h[i] - x[i]) <= fp16Bound);
    CHECK(std::fabs(b[i] - x[i]) <= std::ldexp(std::fabs(x[i]), -8));
  }
  // Without the scale, 1e-3/8-sized values would sit near fp16's subnormals; with it, the
  // largest lands in [2^11, 2^12): full precision.
  CHECK(std::ldexp(m, k) >= 2048.0f);
}

TEST_CASE("wire: NaN and infinities pass through the round trip", "[wire]") {
  const float inf = std::numeric_limits<float>::infinity();
  const std::vector<float> x = {inf, -inf, std::numeric_limits<float>::quiet_NaN()};
  for (WireType w : {WireType::kFp16, WireType::kBf16}) {
    const std::vector<float> y = roundTrip(x, w, w == WireType::kFp16 ? -5 : 0);
    CHECK(y[0] == inf);
    CHECK(y[1] == -inf);
    CHECK(std::isnan(y[2]));
  }
}

}  // namespace strata

TEST_CASE("wire: the F16C conversions match the portable ones bit for bit", "[wire]") {
  using strata::detail::KernelIsa;
  // Forces a variant while alive (as test_reduce.cc's IsaScope does).
  struct IsaScope {
    explicit IsaScope(KernelIsa isa) : saved(strata::detail::kernelIsa()) {
      REQUIRE(strata::detail::setKernelIsa(isa));
    }
    ~IsaScope() { strata::detail::setKernelIsa(saved); }
    KernelIsa saved;
  };
  if (!strata::detail::kernelIsaSupported(KernelIsa::kAvx2)) {
    SUCCEED("no AVX2/F16C on this CPU: only the portable conversions exist");
    return;
  }
  // Every class of float: normal, fp16-subnormal, overflowing, zero, infinities, NaN, and
  // halfway cases; 1003 values so the vector loop's tail runs too.
  std::mt19937 rng(7);
  std::vector<float> in;
  const float specials[] = {0.0f, -0.0f, 65504.0f, 65520.0f, 65519.99f, 1e-8f, -6.0e-8f,
                            2.9802322e-8f, 5.9604645e-8f, 6.1035156e-5f, 1.0f + 1.0f / 2048,
                            std::numeric_limits<float>::infinity(),
                            -std::numeric_limits<float>::infinity(),
                            std::numeric_limits<float>::quiet_NaN()};
  for (float s : specials) in.push_back(s);
  std::uniform_real_distribution<float> exponent(-30.0f, 17.0f), mantissa(-1.0f, 1.0f);
  while (in.size() < 1003) in.push_back(mantissa(rng) * std::exp2(exponent(rng)));
  for (int exp : {0, 5, -3}) {
    std::vector<uint16_t> portable(in.size()), avx2(in.size());
    std::vector<float> backPortable(in.size()), backAvx2(in.size());
    {
      IsaScope scope(KernelIsa::kPortable);
      strata::narrowScaled(in.data(), portable.data(), in.size(), strata::WireType::kFp16, exp);
      strata::widenScaled(portable.data(), backPortable.data(), in.size(),
                          strata::WireType::kFp16, exp);
    }
    {
      IsaScope scope(KernelIsa::kAvx2);
      strata::narrowScaled(in.data(), avx2.data(), in.size(), strata::WireType::kFp16, exp);
      strata::widenScaled(portable.data(), backAvx2.data(), in.size(), strata::WireType::kFp16,
                          exp);
    }
    for (size_t i = 0; i < in.size(); ++i) {
      INFO("value " << in[i] << " scale 2^" << exp);
      if (std::isnan(in[i])) {
        CHECK((avx2[i] & 0x7c00u) == 0x7c00u);
        CHECK((avx2[i] & 0x03ffu) != 0);
        CHECK(std::isnan(backAvx2[i]));
        continue;
      }
      CHECK(avx2[i] == portable[i]);
      CHECK(std::memcmp(&backAvx2[i], &backPortable[i], sizeof(float)) == 0);
    }
  }
}
