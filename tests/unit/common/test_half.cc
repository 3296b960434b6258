// fp16 and bf16 conversions, checked against a reference that decodes the formats from their
// definition and rounds by searching for the nearest representable value, sharing no code with
// the bit tricks in src/common/half_inline.h.
#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <vector>

#include "common/half.h"

namespace {

uint32_t bitsOf(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

float floatOf(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// A binary format with `mant_bits` stored mantissa bits and an exponent of `exp_bits` bits:
// fp16 is (5, 10), bf16 is (8, 7).
struct Format {
  int exp_bits;
  int mant_bits;

  int bias() const { return (1 << (exp_bits - 1)) - 1; }
  uint16_t infCode() const { return static_cast<uint16_t>(((1u << exp_bits) - 1) << mant_bits); }
  bool isNan(uint16_t c) const {
    return (c & infCode()) == infCode() && (c & ((1u << mant_bits) - 1)) != 0;
  }
  // The value of a non-NaN code, by the IEEE definition; exact in long double.
  long double value(uint16_t c) const {
    const int sign_shift = exp_bits + mant_bits;
    const uint32_t mag = c & ((1u << sign_shift) - 1);
    const int e = static_cast<int>(mag >> mant_bits);
    const uint32_t m = mag & ((1u << mant_bits) - 1);
    long double v;
    if (mag == infCode()) {
      v = std::numeric_limits<long double>::infinity();
    } else if (e == 0) {
      v = std::ldexp(static_cast<long double>(m), 1 - bias() - mant_bits);
    } else {
      v = std::ldexp(static_cast<long double>(m + (1u << mant_bits)), e - bias() - mant_bits);
    }
    return (c >> sign_shift) ? -v : v;
  }
};

constexpr Format kHalf{5, 10};
constexpr Format kBf16{8, 7};

// Round-to-nearest-even by search. The candidates are the non-negative finite codes plus the
// infinity code standing for 2^(emax+1), the value the next code would have with an unbounded
// exponent: IEEE overflows to infinity exactly when the unbounded rounding reaches it.
class NearestRounder {
 public:
  explicit NearestRounder(Format fmt) : fmt_(fmt) {
    const uint16_t inf = fmt.infCode();
    for (uint32_t c = 0; c < inf; ++c) values_.push_back(fmt.value(static_cast<uint16_t>(c)));
    values_.push_back(std::ldexp(1.0L, fmt.bias() + 1));
  }

  uint16_t round(long double v) const {
    const uint16_t sign =
        std::signbit(v) ? static_cast<uint16_t>(1u << (fmt_.exp_bits + fmt_.mant_bits)) : 0;
    const long double a = std::fabs(v);
    if (a >= values_.back()) return sign | fmt_.infCode();
    // values_ is increasing with the code; lo is the last value <= a.
    const size_t lo =
        static_cast<size_t>(std::upper_bound(values_.begin(), values_.end(), a) - values_.begin()) -
        1;
    size_t pick = lo;
    if (values_[lo] != a) {
      const long double below = a - values_[lo];
      const long double above = values_[lo + 1] - a;
      if (above < below || (above == below && (lo + 1) % 2 == 0)) pick = lo + 1;
    }
    return static_cast<uint16_t>(sign | pick);
  }

 private:
  Format fmt_;
  std::vector<long double> values_;
};

const NearestRounder& halfRounder() {
  static const NearestRounder r(kHalf);
  return r;
}

const NearestRounder& bf16Rounder() {
  static const NearestRounder r(kBf16);
  return r;
}

// Every boundary of every format, exhaustively: the midpoint between two neighbouring codes
// must go to the even one, and the floats just either side of it to the nearer one.
template <typename Narrow>
void checkAllMidpoints(Format fmt, Narrow narrow) {
  const uint16_t inf = fmt.infCode();
  const uint16_t sign = static_cast<uint16_t>(1u << (fmt.exp_bits + fmt.mant_bits));
  for (uint32_t c = 0; c < inf; ++c) {
    const long double lo = fmt.value(static_cast<uint16_t>(c));
    const long double hi =
        c + 1 < inf ? fmt.value(static_cast<uint16_t>(c + 1)) : std::ldexp(1.0L, fmt.bias() + 1);
    const float mid = static_cast<float>((lo + hi) / 2);  // exact: one more bit than the format
    REQUIRE(static_cast<long double>(mid) == (lo + hi) / 2);
    const uint16_t even = static_cast<uint16_t>(c % 2 == 0 ? c : c + 1);
    INFO("code 0x" << std::hex << c);
    REQUIRE(narrow(static_cast<float>(lo)) == c);
    REQUIRE(narrow(mid) == even);
    REQUIRE(narrow(-mid) == (sign | even));
    REQUIRE(narrow(std::nextafter(mid, 0.0f)) == c);
    REQUIRE(narrow(std::nextafter(mid, std::numeric_limits<float>::infinity())) == c + 1);
    REQUIRE(narrow(-std::nextafter(mid, 0.0f)) == (sign | c));
  }
}

// Random floats: uniform bit patterns (every exponent, NaN and infinity included) and values
// concentrated where the narrow format has its normal, subnormal and overflow ranges.
std::vector<float> randomFloats(int min_exp, int max_exp) {
  std::mt19937 rng(12345);
  std::vector<float> out;
  std::uniform_int_distribution<uint32_t> bits;
  for (int i = 0; i < 4000; ++i) out.push_back(floatOf(bits(rng)));
  std::uniform_int_distribution<int> exp(min_exp, max_exp);
  std::uniform_real_distribution<float> mant(1.0f, 2.0f);
  for (int i = 0; i < 4000; ++i) {
    const float v = std::ldexp(mant(rng), exp(rng));
    out.push_back(i % 2 ? v : -v);
  }
  return out;
}

}  // namespace

TEST_CASE("halfToFloat is exact for every fp16 bit pattern", "[half]") {
  for (uint32_t c = 0; c < 0x10000; ++c) {
    const uint16_t h = static_cast<uint16_t>(c);
    const float f = strata::halfToFloat(h);
    INFO("fp16 0x" << std::hex << c);
    REQUIRE(std::signbit(f) == ((h & 0x8000) != 0));
    if (kHalf.isNan(h)) {
      REQUIRE(std::isnan(f));
    } else {
      REQUIRE(static_cast<long double>(f) == kHalf.value(h));
    }
  }
}

TEST_CASE("fp16 -> float -> fp16 round-trips all 65536 bit patterns", "[half]") {
  for (uint32_t c = 0; c < 0x10000; ++c) {
    const uint16_t h = static_cast<uint16_t>(c);
    const uint16_t back = strata::floatToHalf(strata::halfToFloat(h));
    INFO("fp16 0x" << std::hex << c << " came back as 0x" << back);
    if (kHalf.isNan(h)) {
      // Quiet NaNs come back unchanged; signalling ones come back quiet, sign and payload kept.
      REQUIRE(back == (h | 0x0200));
    } else {
      REQUIRE(back == h);
    }
  }
}

TEST_CASE("bf16 -> float -> bf16 round-trips all 65536 bit patterns", "[half]") {
  for (uint32_t c = 0; c < 0x10000; ++c) {
    const uint16_t b = static_cast<uint16_t>(c);
    const float f = strata::bf16ToFloat(b);
    INFO("bf16 0x" << std::hex << c);
    REQUIRE(bitsOf(f) == c << 16);
    if (kBf16.isNan(b)) {
      REQUIRE(std::isnan(f));
      REQUIRE(strata::floatToBf16(f) == (b | 0x0040));
    } else {
      REQUIRE(static_cast<long double>(f) == kBf16.value(b));
      REQUIRE(strata::floatToBf16(f) == b);
    }
  }
}

TEST_CASE("floatToHalf rounds known cases to nearest even", "[half]") {
  CHECK(strata::floatToHalf(1.0f) == 0x3c00);
  // 1 + 2^-11 lies halfway between 1 (even) and 1 + 2^-10 (odd).
  CHECK(strata::floatToHalf(1.0f + 0x1p-11f) == 0x3c00);
  // 1 + 3*2^-11 lies halfway between 1 + 2^-10 (odd) and 1 + 2^-9 (even).
  CHECK(strata::floatToHalf(1.0f + 3 * 0x1p-11f) == 0x3c02);
  CHECK(strata::floatToHalf(std::nextafter(1.0f + 0x1p-11f, 2.0f)) == 0x3c01);
  CHECK(strata::floatToHalf(-1.0f - 0x1p-11f) == 0xbc00);

  // The top of the range: 65504 is the largest finite; 65520 is halfway to 2^16 and rounds to
  // the even side, which is infinity.
  CHECK(strata::floatToHalf(65504.0f) == 0x7bff);
  CHECK(strata::floatToHalf(std::nextafter(65520.0f, 0.0f)) == 0x7bff);
  CHECK(strata::floatToHalf(65520.0f) == 0x7c00);
  CHECK(strata::floatToHalf(-65520.0f) == 0xfc00);
  CHECK(strata::floatToHalf(1e9f) == 0x7c00);
  CHECK(strata::floatToHalf(std::numeric_limits<float>::max()) == 0x7c00);
  CHECK(strata::floatToHalf(std::numeric_limits<float>::infinity()) == 0x7c00);
  CHECK(strata::floatToHalf(-std::numeric_limits<float>::infinity()) == 0xfc00);

  // Subnormals: the smallest is 2^-24 and the largest 1023 * 2^-24.
  CHECK(strata::floatToHalf(0x1p-24f) == 0x0001);
  CHECK(strata::floatToHalf(1023 * 0x1p-24f) == 0x03ff);
  CHECK(strata::halfToFloat(0x03ff) == 1023 * 0x1p-24f);
  CHECK(strata::halfToFloat(0x0001) == 0x1p-24f);
  CHECK(strata::halfToFloat(0x0400) == 0x1p-14f);
  // Halfway between the largest subnormal (odd) and the smallest normal (even).
  CHECK(strata::floatToHalf(1023.5f * 0x1p-24f) == 0x0400);
  CHECK(strata::floatToHalf(std::nextafter(1023.5f * 0x1p-24f, 0.0f)) == 0x03ff);
  // 2^-25 is halfway between 0 (even) and 2^-24; 3 * 2^-25 between 2^-24 and 2 * 2^-24 (even).
  CHECK(strata::floatToHalf(0x1p-25f) == 0x0000);
  CHECK(strata::floatToHalf(std::nextafter(0x1p-25f, 1.0f)) == 0x0001);
  CHECK(strata::floatToHalf(3 * 0x1p-25f) == 0x0002);
  CHECK(strata::floatToHalf(-0x1p-25f) == 0x8000);
  CHECK(strata::floatToHalf(std::numeric_limits<float>::denorm_min()) == 0x0000);
  CHECK(strata::floatToHalf(-std::numeric_limits<float>::denorm_min()) == 0x8000);

  // Signed zeros.
  CHECK(strata::floatToHalf(0.0f) == 0x0000);
  CHECK(strata::floatToHalf(-0.0f) == 0x8000);
  CHECK(bitsOf(strata::halfToFloat(0x8000)) == 0x80000000u);

  // NaN stays NaN, and quiet, even when its payload sits only in bits fp16 drops.
  CHECK(strata::floatToHalf(std::numeric_limits<float>::quiet_NaN()) == 0x7e00);
  CHECK(strata::floatToHalf(floatOf(0x7f800001u)) == 0x7e00);
  CHECK(strata::floatToHalf(floatOf(0xffc00000u)) == 0xfe00);
  CHECK(std::isnan(strata::halfToFloat(0x7c01)));
  CHECK(std::isinf(strata::halfToFloat(0x7c00)));
}

TEST_CASE("floatToBf16 rounds known cases to nearest even", "[half]") {
  CHECK(strata::floatToBf16(1.0f) == 0x3f80);
  CHECK(strata::floatToBf16(1.0f + 0x1p-8f) == 0x3f80);      // tie, to even
  CHECK(strata::floatToBf16(1.0f + 3 * 0x1p-8f) == 0x3f82);  // tie, to even
  CHECK(strata::floatToBf16(std::nextafter(1.0f + 0x1p-8f, 2.0f)) == 0x3f81);
  CHECK(strata::floatToBf16(floatOf(0x7f7f7fffu)) == 0x7f7f);
  CHECK(strata::floatToBf16(floatOf(0x7f7f8000u)) == 0x7f80);  // tie above the largest: inf
  CHECK(strata::floatToBf16(std::numeric_limits<float>::max()) == 0x7f80);
  CHECK(strata::floatToBf16(-std::numeric_limits<float>::infinity()) == 0xff80);
  CHECK(strata::floatToBf16(floatOf(0x00000001u)) == 0x0000);
  CHECK(strata::floatToBf16(floatOf(0x00008000u)) == 0x0000);  // subnormal tie, to even
  CHECK(strata::floatToBf16(floatOf(0x00018000u)) == 0x0002);  // subnormal tie, to even
  CHECK(strata::floatToBf16(floatOf(0x807fffffu)) == 0x8080);  // rounds up to the smallest normal
  CHECK(strata::floatToBf16(-0.0f) == 0x8000);
  CHECK(strata::floatToBf16(floatOf(0x7f800001u)) == 0x7fc0);
  CHECK(strata::floatToBf16(floatOf(0xff800001u)) == 0xffc0);
}

TEST_CASE("floatToHalf takes the right side of every fp16 rounding boundary", "[half]") {
  checkAllMidpoints(kHalf, [](float f) { return strata::floatToHalf(f); });
}

TEST_CASE("floatToBf16 takes the right side of every bf16 rounding boundary", "[half]") {
  checkAllMidpoints(kBf16, [](float f) { return strata::floatToBf16(f); });
}

TEST_CASE("floatToHalf matches a nearest-value search on random floats", "[half]") {
  const NearestRounder& ref = halfRounder();
  for (float f : randomFloats(-27, 16)) {
    INFO("float bits 0x" << std::hex << bitsOf(f));
    const uint16_t got = strata::floatToHalf(f);
    if (std::isnan(f)) {
      REQUIRE(kHalf.isNan(got));
      REQUIRE((got & 0x8000) == ((bitsOf(f) >> 16) & 0x8000));
    } else {
      REQUIRE(got == ref.round(f));
    }
  }
}

TEST_CASE("floatToBf16 matches a nearest-value search on random floats", "[half]") {
  const NearestRounder& ref = bf16Rounder();
  for (float f : randomFloats(-149, 127)) {
    INFO("float bits 0x" << std::hex << bitsOf(f));
    const uint16_t got = strata::floatToBf16(f);
    if (std::isnan(f)) {
      REQUIRE(kBf16.isNan(got));
      REQUIRE((got & 0x8000) == ((bitsOf(f) >> 16) & 0x8000));
    } else {
      REQUIRE(got == ref.round(f));
    }
  }
}
