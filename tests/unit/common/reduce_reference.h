// The scalar reference and the checks behind test_reduce.cc: every type and op of reduceInto,
// reduce2, reduceMany and scaleDown against plain loops, on every kernel variant the CPU runs.
// Included by test_reduce.cc only (its helpers live in an anonymous namespace).
#pragma once

#include <algorithm>
#include <catch2/catch.hpp>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <sstream>
#include <string>
#include <type_traits>
#include <vector>

#include "common/datatype.h"
#include "common/half.h"
#include "common/reduce.h"

namespace {

__extension__ typedef __int128 Int128;
__extension__ typedef unsigned __int128 Uint128;

constexpr strataRedOp_t kOps[] = {strataSum, strataProd, strataMax, strataMin, strataAvg};
constexpr size_t kSizes[] = {0, 1, 7, 31, 1000, 4097};

// The low bits of v as a T, two's complement for signed T, spelled out so that the reference
// relies on no conversion the standard leaves to the implementation.
template <typename T>
T fromLowBits(Uint128 v) {
  using U = std::make_unsigned_t<T>;
  const U low = static_cast<U>(v);
  if constexpr (std::is_signed_v<T>) {
    const U half = static_cast<U>(U(1) << (sizeof(T) * 8 - 1));
    if (low >= half) return static_cast<T>(-static_cast<T>(static_cast<U>(~low)) - 1);
  }
  return static_cast<T>(low);
}

template <typename T>
struct IntSpec {
  using S = T;
  static std::vector<T> random(size_t n, std::mt19937_64& rng) {
    std::vector<T> v(n);
    std::uniform_int_distribution<uint64_t> bits;
    std::uniform_int_distribution<int> small(std::is_signed_v<T> ? -100 : 0, 100);
    // Half full-range (sums and products overflow), half small (they do not).
    for (size_t i = 0; i < n; ++i) {
      v[i] = i % 2 ? fromLowBits<T>(bits(rng)) : static_cast<T>(small(rng));
    }
    return v;
  }
  static T ref(strataRedOp_t op, T a, T b) {
    const Int128 x = a, y = b;
    switch (op) {
      case strataSum:
      case strataAvg:
        return fromLowBits<T>(static_cast<Uint128>(x + y));
      case strataProd:
        // A product of two 64-bit values can exceed Int128's range only when both are
        // unsigned; Uint128 arithmetic is modular and gives the same low bits either way.
        return fromLowBits<T>(static_cast<Uint128>(x) * static_cast<Uint128>(y));
      case strataMax:
        return x > y ? a : b;
      case strataMin:
        return x < y ? a : b;
      default:
        return 0;
    }
  }
  // src[0][i] op src[1][i] op ... op src[nsrc-1][i], left to right; wrapping at every step
  // wraps the whole.
  static T refMany(strataRedOp_t op, const std::vector<std::vector<T>>& src, int nsrc, size_t i) {
    T x = src[0][i];
    for (int s = 1; s < nsrc; ++s) x = ref(op, x, src[static_cast<size_t>(s)][i]);
    return x;
  }
  static T refScale(T x, int d) { return static_cast<T>(static_cast<Int128>(x) / d); }
  static bool same(strataRedOp_t, T got, T want) { return got == want; }
  static std::string show(T x) {
    return std::to_string(static_cast<long long>(x)) + " / " +
           std::to_string(static_cast<unsigned long long>(x));
  }
};

// Random floating values: mostly ordinary numbers, with zeros of both signs, infinities, NaN
// and subnormals mixed in.
template <typename F>
F randomFloating(std::mt19937_64& rng) {
  std::uniform_int_distribution<int> kind(0, 49);
  std::uniform_real_distribution<F> val(-1000, 1000);
  switch (kind(rng)) {
    case 0:
      return std::numeric_limits<F>::quiet_NaN();
    case 1:
      return std::numeric_limits<F>::infinity();
    case 2:
      return -std::numeric_limits<F>::infinity();
    case 3:
      return -0.0;
    case 4:
      return 0.0;
    case 5:
      return std::numeric_limits<F>::denorm_min() * 3;
    case 6:
      return std::numeric_limits<F>::max() / 2;
    default:
      return val(rng);
  }
}

template <typename F>
bool sameFloating(strataRedOp_t op, F got, F want) {
  if (std::isnan(want)) return std::isnan(got);
  if (std::memcmp(&got, &want, sizeof got) == 0) return true;
  // max/min of +0 and -0 may return either zero.
  return (op == strataMax || op == strataMin) && got == 0 && want == 0;
}

template <typename F>
struct FloatSpec {
  using S = F;
  static std::vector<F> random(size_t n, std::mt19937_64& rng) {
    std::vector<F> v(n);
    for (F& x : v) x = randomFloating<F>(rng);
    return v;
  }
  // IEEE defines the sum and product of two F as the exact result rounded once to F, which is
  // what F arithmetic does; max and min are the documented NaN-propagating ones.
  static F ref(strataRedOp_t op, F a, F b) {
    switch (op) {
      case strataSum:
      case strataAvg:
        return a + b;
      case strataProd:
        return a * b;
      case strataMax:
        return std::isnan(a) || std::isnan(b) ? std::numeric_limits<F>::quiet_NaN()
                                              : std::max(a, b);
      case strataMin:
        return std::isnan(a) || std::isnan(b) ? std::numeric_limits<F>::quiet_NaN()
                                              : std::min(a, b);
      default:
        return 0;
    }
  }
  // Left to right in F: reduceMany's order, each step rounded as F arithmetic rounds it.
  static F refMany(strataRedOp_t op, const std::vector<std::vector<F>>& src, int nsrc, size_t i) {
    F x = src[0][i];
    for (int s = 1; s < nsrc; ++s) x = ref(op, x, src[static_cast<size_t>(s)][i]);
    return x;
  }
  static F refScale(F x, int d) { return x / static_cast<F>(d); }
  static bool same(strataRedOp_t op, F got, F want) { return sameFloating(op, got, want); }
  static std::string show(F x) {
    std::ostringstream os;
    os.precision(std::numeric_limits<F>::max_digits10);
    os << x;
    return os.str();
  }
};

// fp16 (exp_bits 5, mant_bits 10) and bf16 (8, 7), decoded from the IEEE definition and rounded
// by searching the sorted table of representable values; no code shared with half_inline.h.
template <int kExpBits, int kMantBits>
struct NarrowSpec {
  using S = uint16_t;
  static constexpr int kBias = (1 << (kExpBits - 1)) - 1;
  static constexpr uint32_t kInf = ((1u << kExpBits) - 1) << kMantBits;
  static constexpr uint32_t kSign = 1u << (kExpBits + kMantBits);
  static constexpr uint32_t kMantMask = (1u << kMantBits) - 1;

  static bool isNan(uint16_t c) { return (c & kInf) == kInf && (c & kMantMask) != 0; }
  static long double value(uint16_t c) {
    const uint32_t mag = c & (kSign - 1);
    const int e = static_cast<int>(mag >> kMantBits);
    const uint32_t m = mag & kMantMask;
    long double v;
    if (isNan(c)) {
      v = std::numeric_limits<long double>::quiet_NaN();
    } else if (mag == kInf) {
      v = std::numeric_limits<long double>::infinity();
    } else if (e == 0) {
      v = std::ldexp(static_cast<long double>(m), 1 - kBias - kMantBits);
    } else {
      v = std::ldexp(static_cast<long double>(m + (1u << kMantBits)), e - kBias - kMantBits);
    }
    return (c & kSign) ? -v : v;
  }
  static const std::vector<long double>& table() {
    // Non-negative finite values by code, then 2^(emax+1) standing for infinity (IEEE
    // overflows exactly when rounding with an unbounded exponent reaches it).
    static const std::vector<long double> t = [] {
      std::vector<long double> v;
      for (uint32_t c = 0; c < kInf; ++c) v.push_back(value(static_cast<uint16_t>(c)));
      v.push_back(std::ldexp(1.0L, kBias + 1));
      return v;
    }();
    return t;
  }
  static uint16_t round(long double v) {
    if (std::isnan(v)) return static_cast<uint16_t>(kInf | (1u << (kMantBits - 1)));
    const uint32_t sign = std::signbit(v) ? kSign : 0;
    const long double a = std::fabs(v);
    const std::vector<long double>& t = table();
    if (a >= t.back()) return static_cast<uint16_t>(sign | kInf);
    const size_t lo = static_cast<size_t>(std::upper_bound(t.begin(), t.end(), a) - t.begin()) - 1;
    size_t pick = lo;
    if (t[lo] != a) {
      const long double below = a - t[lo], above = t[lo + 1] - a;
      if (above < below || (above == below && (lo + 1) % 2 == 0)) pick = lo + 1;
    }
    return static_cast<uint16_t>(sign | pick);
  }

  static std::vector<uint16_t> random(size_t n, std::mt19937_64& rng) {
    // Uniform bit patterns: every exponent, subnormals, infinities and NaNs (about 3%) appear.
    std::vector<uint16_t> v(n);
    std::uniform_int_distribution<uint32_t> bits(0, 0xffff);
    for (uint16_t& x : v) x = static_cast<uint16_t>(bits(rng));
    return v;
  }
  // Products of two narrow values, and sums of two fp16 values, are exact in long double, so
  // rounding them once is the IEEE result. A bf16 sum of far-apart magnitudes may round in long
  // double first; with at least 53 bits >= 2 * 8 + 2 that second rounding cannot change it.
  static uint16_t ref(strataRedOp_t op, uint16_t a, uint16_t b) {
    const long double x = value(a), y = value(b);
    switch (op) {
      case strataSum:
      case strataAvg:
        return round(x + y);
      case strataProd:
        return round(x * y);
      case strataMax:
        return std::isnan(x) || std::isnan(y) ? round(x + y) : (x > y ? a : b);
      case strataMin:
        return std::isnan(x) || std::isnan(y) ? round(x + y) : (x < y ? a : b);
      default:
        return 0;
    }
  }
  // reduceMany's documented arithmetic: every source widened to float (exactly), combined left
  // to right in float, and the float result rounded to the narrow type once. The widening and
  // the final rounding use this file's own decoder and nearest-value search.
  static uint16_t refMany(strataRedOp_t op, const std::vector<std::vector<uint16_t>>& src, int nsrc,
                          size_t i) {
    static const std::vector<float> widened = [] {
      std::vector<float> v(0x10000);
      for (uint32_t c = 0; c < v.size(); ++c)
        v[c] = static_cast<float>(value(static_cast<uint16_t>(c)));
      return v;
    }();
    float x = widened[src[0][i]];
    for (int s = 1; s < nsrc; ++s) {
      x = FloatSpec<float>::ref(op, x, widened[src[static_cast<size_t>(s)][i]]);
    }
    return round(static_cast<long double>(x));
  }
  // x / d in long double is not exact, but x / d is either exact or at least (half an ulp) / d
  // away from every rounding tie of the narrow format, far more than long double's error, so
  // rounding the long double quotient gives the IEEE result.
  static uint16_t refScale(uint16_t x, int d) { return round(value(x) / d); }
  static bool same(strataRedOp_t op, uint16_t got, uint16_t want) {
    if (isNan(want)) return isNan(got);
    if (got == want) return true;
    return (op == strataMax || op == strataMin) && value(got) == 0 && value(want) == 0;
  }
  static std::string show(uint16_t x) {
    std::ostringstream os;
    os << "0x" << std::hex << x << " (" << static_cast<double>(value(x)) << ")";
    return os.str();
  }
};

using HalfSpec = NarrowSpec<5, 10>;
using Bf16Spec = NarrowSpec<8, 7>;

using strata::detail::KernelIsa;

// The kernel variants this CPU runs; the reference checks run under each of them.
std::vector<KernelIsa> supportedIsas() {
  std::vector<KernelIsa> out;
  for (KernelIsa isa : {KernelIsa::kPortable, KernelIsa::kAvx2}) {
    if (strata::detail::kernelIsaSupported(isa)) out.push_back(isa);
  }
  return out;
}

// Forces a variant for its lifetime, then restores the one in use before.
class IsaScope {
 public:
  explicit IsaScope(KernelIsa isa) : saved_(strata::detail::kernelIsa()) {
    REQUIRE(strata::detail::setKernelIsa(isa));
  }
  ~IsaScope() { strata::detail::setKernelIsa(saved_); }
  IsaScope(const IsaScope&) = delete;
  IsaScope& operator=(const IsaScope&) = delete;

 private:
  KernelIsa saved_;
};

// The index of the first element where `got` differs from `want`, or -1.
template <typename Spec>
long firstMismatch(strataRedOp_t op, const std::vector<typename Spec::S>& got,
                   const std::vector<typename Spec::S>& want) {
  for (size_t i = 0; i < want.size(); ++i) {
    if (!Spec::same(op, got[i], want[i])) return static_cast<long>(i);
  }
  return -1;
}

// Checks reduceInto and reduce2, with dst separate, equal to a, equal to b and equal to both,
// for every op and size.
template <typename Spec>
void checkCombine(strataDataType_t type) {
  using S = typename Spec::S;
  std::mt19937_64 rng(static_cast<uint64_t>(type) * 7919 + 1);
  for (strataRedOp_t op : kOps) {
    for (size_t n : kSizes) {
      const std::vector<S> a = Spec::random(n, rng);
      const std::vector<S> b = Spec::random(n, rng);
      std::vector<S> want(n), want_self(n);
      for (size_t i = 0; i < n; ++i) {
        want[i] = Spec::ref(op, a[i], b[i]);
        want_self[i] = Spec::ref(op, a[i], a[i]);
      }
      INFO("type " << strata::dataTypeName(type) << ", op " << strata::redOpName(op) << ", count "
                   << n);
      auto check = [&](const char* what, const std::vector<S>& got, const std::vector<S>& exp) {
        const long i = firstMismatch<Spec>(op, got, exp);
        INFO(what << ": element " << i << " is " << (i < 0 ? "" : Spec::show(got[i])) << ", want "
                  << (i < 0 ? "" : Spec::show(exp[i])) << " from "
                  << (i < 0 ? "" : Spec::show(a[i])) << " and " << (i < 0 ? "" : Spec::show(b[i])));
        REQUIRE(i == -1);
      };

      std::vector<S> dst = a;
      strata::reduceInto(dst.data(), b.data(), n, type, op);
      check("reduceInto", dst, want);

      // A guard element past the end must survive.
      std::vector<S> out(n + 1, Spec::random(1, rng)[0]);
      const S guard = out[n];
      strata::reduce2(out.data(), a.data(), b.data(), n, type, op);
      std::vector<S> got(out.begin(), out.begin() + static_cast<long>(n));
      check("reduce2", got, want);
      REQUIRE(std::memcmp(&out[n], &guard, sizeof guard) == 0);

      dst = a;
      strata::reduce2(dst.data(), dst.data(), b.data(), n, type, op);
      check("reduce2 with dst == a", dst, want);

      dst = b;
      strata::reduce2(dst.data(), a.data(), dst.data(), n, type, op);
      check("reduce2 with dst == b", dst, want);

      dst = a;
      strata::reduce2(dst.data(), dst.data(), dst.data(), n, type, op);
      check("reduce2 with dst == a == b", dst, want_self);

      dst.assign(n, S{});
      strata::reduce2(dst.data(), a.data(), a.data(), n, type, op);
      check("reduce2 with a == b", dst, want_self);
    }
  }
}

template <typename Spec>
void checkScaleDown(strataDataType_t type) {
  using S = typename Spec::S;
  std::mt19937_64 rng(static_cast<uint64_t>(type) * 104729 + 3);
  for (int d : {1, 2, 3, 7, 8, 1000}) {
    for (size_t n : kSizes) {
      const std::vector<S> x = Spec::random(n, rng);
      std::vector<S> want(n);
      for (size_t i = 0; i < n; ++i) want[i] = Spec::refScale(x[i], d);
      std::vector<S> got = x;
      strata::scaleDown(got.data(), n, type, d);
      INFO("type " << strata::dataTypeName(type) << ", divisor " << d << ", count " << n);
      if (d == 1) {
        // Bit for bit, NaN payloads included. (memcmp must not see an empty vector's null.)
        if (n > 0) REQUIRE(std::memcmp(got.data(), x.data(), n * sizeof(S)) == 0);
        continue;
      }
      const long i = firstMismatch<Spec>(strataSum, got, want);
      INFO("element " << i << " is " << (i < 0 ? "" : Spec::show(got[i])) << ", want "
                      << (i < 0 ? "" : Spec::show(want[i])) << " from "
                      << (i < 0 ? "" : Spec::show(x[i])));
      REQUIRE(i == -1);
    }
  }
}

// reduceMany against refMany for every op, source count and size (sizes straddling the
// 64-element vector blocks and the 4 KiB source blocks, and a large prime), out of place with
// a guard element and in place (dst = srcs[0]).
template <typename Spec>
void checkMany(strataDataType_t type) {
  using S = typename Spec::S;
  std::mt19937_64 rng(static_cast<uint64_t>(type) * 15485863 + 5);
  constexpr int kMaxSources = 9;
  for (size_t n : {size_t{0}, size_t{1}, size_t{7}, size_t{63}, size_t{64}, size_t{65},
                   size_t{4500}, size_t{1000003}}) {
    std::vector<std::vector<S>> src(kMaxSources);
    for (std::vector<S>& v : src) v = Spec::random(n, rng);
    std::vector<const void*> ptrs;
    for (const std::vector<S>& v : src) ptrs.push_back(v.data());
    std::vector<S> want(n), out, dst;
    out.reserve(n + 1);
    for (int nsrc = 1; nsrc <= kMaxSources; ++nsrc) {
      // Every pass shape on small sizes; on the large one, 1, 2 and 3 sources (the copy and the
      // one-pass kernels) and 8 and 9 (accumulator passes, a middle one for 9).
      if (n > 100000 && nsrc > 3 && nsrc < 8) continue;
      for (strataRedOp_t op : kOps) {
        // avg runs sum's kernels; the small sizes check that, the large one need not again.
        if (n > 100000 && op == strataAvg) continue;
        for (size_t i = 0; i < n; ++i) {
          want[i] = nsrc == 1 ? src[0][i] : Spec::refMany(op, src, nsrc, i);
        }
        for (KernelIsa isa : supportedIsas()) {
          IsaScope scope(isa);
          INFO("type " << strata::dataTypeName(type) << ", op " << strata::redOpName(op)
                       << ", count " << n << ", sources " << nsrc << ", kernels "
                       << strata::detail::kernelIsaName(isa));
          auto check = [&](const char* what, const std::vector<S>& got) {
            const long i = firstMismatch<Spec>(op, got, want);
            std::ostringstream from;
            for (int s = 0; i >= 0 && s < nsrc; ++s) {
              from << (s ? ", " : "")
                   << Spec::show(src[static_cast<size_t>(s)][static_cast<size_t>(i)]);
            }
            INFO(what << ": element " << i << " is "
                      << (i < 0 ? "" : Spec::show(got[static_cast<size_t>(i)])) << ", want "
                      << (i < 0 ? "" : Spec::show(want[static_cast<size_t>(i)])) << " from "
                      << from.str());
            REQUIRE(i == -1);
            // One source is a copy, bit for bit (NaN payloads included).
            if (nsrc == 1 && n > 0)
              REQUIRE(std::memcmp(got.data(), src[0].data(), n * sizeof(S)) == 0);
          };

          // The buffers are reused: allocating (and faulting in) megabytes per call was most of
          // this test's time.
          out.assign(n + 1, Spec::random(1, rng)[0]);
          const S guard = out[n];
          strata::reduceMany(out.data(), ptrs.data(), nsrc, n, type, op);
          const S after = out[n];
          out.pop_back();
          check("reduceMany", out);
          REQUIRE(std::memcmp(&after, &guard, sizeof guard) == 0);

          dst = src[0];
          std::vector<const void*> inPlace = ptrs;
          inPlace[0] = dst.data();
          strata::reduceMany(dst.data(), inPlace.data(), nsrc, n, type, op);
          check("reduceMany in place", dst);
        }
      }
    }
  }
}

template <typename Spec>
void checkType(strataDataType_t type) {
  for (KernelIsa isa : supportedIsas()) {
    IsaScope scope(isa);
    INFO("kernels " << strata::detail::kernelIsaName(isa));
    checkCombine<Spec>(type);
    checkScaleDown<Spec>(type);
  }
  checkMany<Spec>(type);
}

template <typename T>
std::vector<T> reduced(std::vector<T> a, const std::vector<T>& b, strataDataType_t type,
                       strataRedOp_t op) {
  strata::reduceInto(a.data(), b.data(), a.size(), type, op);
  return a;
}

template <typename T>
std::vector<T> scaled(std::vector<T> a, strataDataType_t type, int d) {
  strata::scaleDown(a.data(), a.size(), type, d);
  return a;
}

}  // namespace
