// fp16 and bf16 kernels for the AVX2 variant, written with intrinsics on 8 lanes at a time.
//
// The portable conversions (half_inline.h) are bit manipulation that GCC vectorises into about
// 20 (fp16) or 8 (bf16) instructions per 8 values each way, plus the packing of 32-bit lanes
// into 16-bit ones, which held fp16 reductions to a fifth and bf16 ones to half of the memory
// bandwidth. Here fp16 converts with F16C (vcvtph2ps, vcvtps2ph: one instruction per 8 values)
// and bf16 without any shuffle: 16 values load as 8 32-bit lanes, whose high halves are the odd
// values' floats once masked and whose low halves are the even values' once shifted up; the
// two results merge back with one OR. Both convert exactly as half_inline.h does: widening is
// exact; narrowing rounds to nearest even (F16C's immediate says so, whatever MXCSR holds),
// overflows to infinity, keeps subnormals, and quietens NaNs keeping their top payload bits.
//
// Each kernel is the narrow-type case of one in reduce_kernels.h, with the same operations in
// the same order, on groups of 8 (fp16) or 16 (bf16) values; a last, partial group goes through
// the same code on staged copies. Every
// function here carries the AVX2 target, and the AVX2 entry functions call them directly: GCC
// will not inline a function with a target into one without it, so the generic kernels cannot
// call these, and reduceManyNarrow repeats reduceManyBody's plan of passes.
#pragma once

#include "common/reduce_ops.h"

#if STRATA_HAVE_AVX2_KERNELS

#include <immintrin.h>

#include <cstring>

#define STRATA_AVX2_KERNEL __attribute__((always_inline, target("avx2,f16c"))) inline

namespace strata::detail {

// A group of values in float: 8 per __m256.
template <int kVecs>
struct Group {
  __m256 v[kVecs];
};

// Conversions of one group, as policies for the kernels below.
struct F16c {
  static constexpr size_t kLanes = 8;
  using G = Group<1>;
  STRATA_AVX2_KERNEL static G load(const uint16_t* p) {
    return {{_mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(p)))}};
  }
  STRATA_AVX2_KERNEL static void store(uint16_t* p, G g) {
    _mm_storeu_si128(reinterpret_cast<__m128i*>(p),
                     _mm256_cvtps_ph(g.v[0], _MM_FROUND_TO_NEAREST_INT));
  }
};

// bf16ToFloat and floatToBf16 (half_inline.h), step for step, on the even values (v[0]) and
// the odd ones (v[1]) of 16.
struct Bf16Avx2 {
  static constexpr size_t kLanes = 16;
  using G = Group<2>;
  STRATA_AVX2_KERNEL static G load(const uint16_t* p) {
    const __m256i w = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(p));
    return {{_mm256_castsi256_ps(_mm256_slli_epi32(w, 16)),
             _mm256_castsi256_ps(_mm256_and_si256(w, _mm256_set1_epi32(~0xffff)))}};
  }
  // floatToBf16 per lane: the bf16 in the high half of each lane (odd) or the low one (even),
  // zeros in the other half.
  template <bool kHigh>
  STRATA_AVX2_KERNEL static __m256i narrow(__m256 f) {
    const __m256i x = _mm256_castps_si256(f);
    const __m256i high = _mm256_srli_epi32(x, 16);
    const __m256i lsb = _mm256_and_si256(high, _mm256_set1_epi32(1));
    const __m256i sum = _mm256_add_epi32(_mm256_add_epi32(x, _mm256_set1_epi32(0x7fff)), lsb);
    __m256i rounded, nan;
    if constexpr (kHigh) {
      rounded = _mm256_and_si256(sum, _mm256_set1_epi32(~0xffff));
      nan = _mm256_or_si256(_mm256_and_si256(x, _mm256_set1_epi32(~0xffff)),
                            _mm256_set1_epi32(0x00400000));
    } else {
      rounded = _mm256_srli_epi32(sum, 16);
      nan = _mm256_or_si256(high, _mm256_set1_epi32(0x0040));
    }
    // The unordered compare is floatToBf16's test |x| > infinity in one instruction.
    return _mm256_blendv_epi8(rounded, nan, _mm256_castps_si256(_mm256_cmp_ps(f, f, _CMP_UNORD_Q)));
  }
  STRATA_AVX2_KERNEL static void store(uint16_t* p, G g) {
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(p),
                        _mm256_or_si256(narrow<false>(g.v[0]), narrow<true>(g.v[1])));
  }
};

// The AVX2 variant's conversions for an element kind: kNarrowAvx2<E> says whether E has them
// (fp16 and bf16), NarrowAvx2<E> names them.
template <typename E>
constexpr bool kNarrowAvx2 = std::is_same_v<E, Half> || std::is_same_v<E, Bf16>;
template <typename E>
using NarrowAvx2 = std::conditional_t<std::is_same_v<E, Half>, F16c, Bf16Avx2>;

// Op<float>::apply on 8 lanes. Max and min select exactly as the scalar code does: the larger
// (smaller) by an ordered compare, else b, and a NaN a over either.
template <template <typename> class Op>
STRATA_AVX2_KERNEL __m256 apply8(__m256 a, __m256 b) {
  if constexpr (std::is_same_v<Op<float>, Sum<float>>) {
    return _mm256_add_ps(a, b);
  } else if constexpr (std::is_same_v<Op<float>, Prod<float>>) {
    return _mm256_mul_ps(a, b);
  } else {
    constexpr int kCmp = std::is_same_v<Op<float>, Max<float>> ? _CMP_GT_OQ : _CMP_LT_OQ;
    const __m256 r = _mm256_blendv_ps(b, a, _mm256_cmp_ps(a, b, kCmp));
    return _mm256_blendv_ps(r, a, _mm256_cmp_ps(a, a, _CMP_UNORD_Q));
  }
}

template <template <typename> class Op, int kVecs>
STRATA_AVX2_KERNEL Group<kVecs> apply(Group<kVecs> a, Group<kVecs> b) {
  for (int j = 0; j < kVecs; ++j) a.v[j] = apply8<Op>(a.v[j], b.v[j]);
  return a;
}

// The accumulator holds a group's floats in its lane order (for bf16: even values, then odd).
template <int kVecs>
STRATA_AVX2_KERNEL Group<kVecs> loadAcc(const float* p) {
  Group<kVecs> g;
  for (int j = 0; j < kVecs; ++j) g.v[j] = _mm256_loadu_ps(p + 8 * j);
  return g;
}

template <int kVecs>
STRATA_AVX2_KERNEL void storeAcc(float* p, Group<kVecs> g) {
  for (int j = 0; j < kVecs; ++j) _mm256_storeu_ps(p + 8 * j, g.v[j]);
}

// dst = a op b. Each group is loaded before it is stored, so dst may be a, b or both.
template <typename V, template <typename> class Op>
STRATA_AVX2_KERNEL void reduce2Narrow(uint16_t* dst, const uint16_t* a, const uint16_t* b,
                                      size_t n) {
  constexpr size_t kL = V::kLanes;
  size_t i = 0;
  for (; i + kL <= n; i += kL) V::store(dst + i, apply<Op>(V::load(a + i), V::load(b + i)));
  if (i == n) return;
  const size_t r = n - i;
  uint16_t ta[kL] = {}, tb[kL] = {}, td[kL];
  std::memcpy(ta, a + i, r * sizeof(uint16_t));
  std::memcpy(tb, b + i, r * sizeof(uint16_t));
  V::store(td, apply<Op>(V::load(ta), V::load(tb)));
  std::memcpy(dst + i, td, r * sizeof(uint16_t));
}

// One group of manyPass (reduce_kernels.h documents the template arguments).
template <typename V, template <typename> class Op, int kIn, bool kFirst, bool kLast,
          bool kDstFirst>
STRATA_AVX2_KERNEL void manyGroupNarrow(uint16_t* dst, float* acc, const uint16_t* a,
                                        const uint16_t* b, const uint16_t* c, const uint16_t* d,
                                        size_t k) {
  typename V::G x;
  if constexpr (kDstFirst) {
    x = V::load(dst + k);
  } else if constexpr (kFirst) {
    x = V::load(a + k);
  } else {
    x = apply<Op>(loadAcc<V::kLanes / 8>(acc + k), V::load(a + k));
  }
  if constexpr (kIn >= 2) x = apply<Op>(x, V::load(b + k));
  if constexpr (kIn >= 3) x = apply<Op>(x, V::load(c + k));
  if constexpr (kIn >= 4) x = apply<Op>(x, V::load(d + k));
  if constexpr (kLast) {
    V::store(dst + k, x);
  } else {
    storeAcc(acc + k, x);
  }
}

// The accumulator must have room for whole groups: the last, partial group of a block uses
// it in place, lanes past the end included (their values are never stored to dst).
template <typename V, template <typename> class Op, int kIn, bool kFirst, bool kLast,
          bool kDstFirst>
STRATA_AVX2_KERNEL void manyPassNarrow(uint16_t* dst, float* acc, const uint16_t* a,
                                       const uint16_t* b, const uint16_t* c, const uint16_t* d,
                                       size_t n) {
  constexpr size_t kL = V::kLanes;
  size_t i = 0;
  for (; i + kL <= n; i += kL) {
    manyGroupNarrow<V, Op, kIn, kFirst, kLast, kDstFirst>(dst, acc, a, b, c, d, i);
  }
  if (i == n) return;
  // The partial group, staged: what this pass reads is copied in, dst copied out.
  const size_t r = n - i;
  uint16_t tdst[kL] = {}, ta[kL] = {}, tb[kL] = {}, tc[kL] = {}, td[kL] = {};
  auto in = [r, i](uint16_t* to, const uint16_t* from) {
    if (from != nullptr) std::memcpy(to, from + i, r * sizeof(uint16_t));
  };
  if (kDstFirst) in(tdst, dst);
  in(ta, a);
  in(tb, b);
  in(tc, c);
  in(td, d);
  manyGroupNarrow<V, Op, kIn, kFirst, kLast, kDstFirst>(tdst, acc + i, ta, tb, tc, td, 0);
  if (kLast) std::memcpy(dst + i, tdst, r * sizeof(uint16_t));
}

// reduceManyBody (reduce_kernels.h) for fp16 and bf16, pass for pass.
template <typename V, template <typename> class Op>
STRATA_AVX2_KERNEL void reduceManyNarrow(void* dst, const void* const* srcs, int nsrc, size_t n) {
  constexpr size_t kMany = kManySourceBytes / sizeof(uint16_t);
  static_assert(kMany % V::kLanes == 0, "blocks must hold whole groups");
  alignas(32) float acc[kMany];
  uint16_t* const out = static_cast<uint16_t*>(dst);
  const bool inPlace = dst == srcs[0];
  for (size_t i = 0; i < n; i += kMany) {
    const size_t m = n - i < kMany ? n - i : kMany;
    auto at = [&](int s) { return static_cast<const uint16_t*>(srcs[s]) + i; };
    if (nsrc <= 4) {
      const uint16_t* d = nsrc == 4 ? at(3) : nullptr;
      if (inPlace && nsrc == 3) {
        manyPassNarrow<V, Op, 3, true, true, true>(out + i, acc, nullptr, at(1), at(2), d, m);
      } else if (inPlace) {
        manyPassNarrow<V, Op, 4, true, true, true>(out + i, acc, nullptr, at(1), at(2), d, m);
      } else if (nsrc == 3) {
        manyPassNarrow<V, Op, 3, true, true, false>(out + i, acc, at(0), at(1), at(2), d, m);
      } else {
        manyPassNarrow<V, Op, 4, true, true, false>(out + i, acc, at(0), at(1), at(2), d, m);
      }
      continue;
    }
    manyPassNarrow<V, Op, 4, true, false, false>(nullptr, acc, at(0), at(1), at(2), at(3), m);
    int s = 4;
    for (; nsrc - s > 4; s += 4) {
      manyPassNarrow<V, Op, 4, false, false, false>(nullptr, acc, at(s), at(s + 1), at(s + 2),
                                                    at(s + 3), m);
    }
    switch (nsrc - s) {
      case 1:
        manyPassNarrow<V, Op, 1, false, true, false>(out + i, acc, at(s), nullptr, nullptr, nullptr,
                                                     m);
        break;
      case 2:
        manyPassNarrow<V, Op, 2, false, true, false>(out + i, acc, at(s), at(s + 1), nullptr,
                                                     nullptr, m);
        break;
      case 3:
        manyPassNarrow<V, Op, 3, false, true, false>(out + i, acc, at(s), at(s + 1), at(s + 2),
                                                     nullptr, m);
        break;
      default:
        manyPassNarrow<V, Op, 4, false, true, false>(out + i, acc, at(s), at(s + 1), at(s + 2),
                                                     at(s + 3), m);
        break;
    }
  }
}

// buf = buf / divisor, a true division as scaleDownBody's.
template <typename V>
STRATA_AVX2_KERNEL typename V::G divide(typename V::G g, __m256 d) {
  for (__m256& v : g.v) v = _mm256_div_ps(v, d);
  return g;
}

template <typename V>
STRATA_AVX2_KERNEL void scaleDownNarrow(uint16_t* buf, size_t n, int divisor) {
  constexpr size_t kL = V::kLanes;
  const __m256 d = _mm256_set1_ps(static_cast<float>(divisor));
  size_t i = 0;
  for (; i + kL <= n; i += kL) V::store(buf + i, divide<V>(V::load(buf + i), d));
  if (i == n) return;
  const size_t r = n - i;
  uint16_t t[kL] = {};
  std::memcpy(t, buf + i, r * sizeof(uint16_t));
  V::store(t, divide<V>(V::load(t), d));
  std::memcpy(buf + i, t, r * sizeof(uint16_t));
}

}  // namespace strata::detail

#endif  // STRATA_HAVE_AVX2_KERNELS
