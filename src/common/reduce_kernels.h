// The bodies of the local reduction kernels, private to reduce.cc and reduce_many.cc.
//
// Every kernel here is force-inlined (STRATA_KERNEL) into a small entry function per
// instruction set: a plain one, compiled for the build's baseline (x86-64: SSE2), and one
// carrying __attribute__((target("avx2,f16c"))). The same source thus becomes two machine-code
// variants, chosen at run time (reduce_dispatch.cc), and nothing compiled for AVX2 can be
// reached on a CPU without it: the templates below are never emitted out of line with the
// AVX2 target, only inlined into the AVX2 entry functions. fp16 and bf16 differ in more than
// the instruction set: the AVX2 variant has its own kernels for them, which convert 8 values
// at a time (reduce_avx2_narrow.h). Both variants do the same IEEE operations in the same order
// (no FMA: "fma" is not in the target list), so their results are bit-identical, up to which
// payload a sum or product of several NaNs carries; tests/unit/test_reduce.cc checks that.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "common/reduce_ops.h"

namespace strata::detail {

// The kernels spell out the blocked loop (full blocks of kBlock, then the tail) instead of
// sharing a helper that takes a capturing lambda: through the captured pointers GCC lost the
// restrict qualification and asked for runtime alias checks, which -O2 refuses. The inner
// index runs from 0 so that its trip count is the constant kBlock.

// One element of a combination: widen, apply the op, narrow (once).
template <typename E, template <typename> class Op>
STRATA_KERNEL typename E::Storage combine(typename E::Storage x, typename E::Storage y) {
  return E::store(Op<typename E::Compute>::apply(E::load(x), E::load(y)));
}

// inout[i] = inout[i] op other[i], or other[i] op inout[i] when kOtherFirst (reduce2 with
// dst == b keeps the operand order a op b).
template <typename E, template <typename> class Op, bool kOtherFirst>
STRATA_KERNEL void combineInPlace(typename E::Storage* __restrict inout,
                                  const typename E::Storage* __restrict other, size_t n) {
  size_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    for (size_t j = 0; j < kBlock; ++j) {
      const size_t k = i + j;
      inout[k] =
          kOtherFirst ? combine<E, Op>(other[k], inout[k]) : combine<E, Op>(inout[k], other[k]);
    }
  }
  for (; i < n; ++i) {
    inout[i] =
        kOtherFirst ? combine<E, Op>(other[i], inout[i]) : combine<E, Op>(inout[i], other[i]);
  }
}

// out[i] = a[i] op b[i]; a and b may be the same buffer since neither is written.
template <typename E, template <typename> class Op>
STRATA_KERNEL void combineTwo(typename E::Storage* __restrict out,
                              const typename E::Storage* __restrict a,
                              const typename E::Storage* __restrict b, size_t n) {
  size_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    for (size_t j = 0; j < kBlock; ++j) out[i + j] = combine<E, Op>(a[i + j], b[i + j]);
  }
  for (; i < n; ++i) out[i] = combine<E, Op>(a[i], b[i]);
}

// buf[i] = buf[i] op buf[i]: the case of every pointer naming the same buffer, which the
// restrict-qualified kernels above must not see.
template <typename E, template <typename> class Op>
STRATA_KERNEL void combineSelf(typename E::Storage* __restrict buf, size_t n) {
  size_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    for (size_t j = 0; j < kBlock; ++j) buf[i + j] = combine<E, Op>(buf[i + j], buf[i + j]);
  }
  for (; i < n; ++i) buf[i] = combine<E, Op>(buf[i], buf[i]);
}

// reduce2's cases of aliasing, each sent to a kernel whose restrict promises hold.
template <typename E, template <typename> class Op>
STRATA_KERNEL void reduce2Body(void* dst, const void* a, const void* b, size_t n) {
  using S = typename E::Storage;
  S* d = static_cast<S*>(dst);
  const S* x = static_cast<const S*>(a);
  const S* y = static_cast<const S*>(b);
  if (dst == a && dst == b) {
    combineSelf<E, Op>(d, n);
  } else if (dst == a) {
    combineInPlace<E, Op, false>(d, y, n);
  } else if (dst == b) {
    combineInPlace<E, Op, true>(d, x, n);
  } else {
    combineTwo<E, Op>(d, x, y, n);
  }
}

// --- reduceMany: passes over one block, each combining up to 4 sources ---
//
// A pass reads kIn sources (a, b, c, d in that order; the unused ones are null) and either
// starts from the first of them (kFirst) or from the accumulator, and either writes the
// accumulator or, in the last pass, rounds once into dst (kLast). With kDstFirst, dst itself is
// the first source (reduceMany in place, in a pass that is both first and last). Taking 4
// sources per pass keeps the accumulator's traffic through L1 low: over 8 sources it is written
// once and read once.
//
// manyElement is one element of a pass. Its pointers are not restrict-qualified on purpose: a
// restrict parameter of an inlined function promises no aliasing within one call, that is one
// element, so GCC would need run-time alias checks across the loop's iterations. Unqualified,
// they are based on manyPass's restrict pointers, whose promise covers the whole loop.
template <typename E, template <typename> class Op, int kIn, bool kFirst, bool kLast,
          bool kDstFirst>
STRATA_KERNEL void manyElement(typename E::Storage* dst, typename E::Compute* acc,
                               const typename E::Storage* a, const typename E::Storage* b,
                               const typename E::Storage* c, const typename E::Storage* d,
                               size_t k) {
  using C = typename E::Compute;
  C x;
  if constexpr (kDstFirst) {
    x = E::load(dst[k]);
  } else if constexpr (kFirst) {
    x = E::load(a[k]);
  } else {
    x = Op<C>::apply(acc[k], E::load(a[k]));
  }
  if constexpr (kIn >= 2) x = Op<C>::apply(x, E::load(b[k]));
  if constexpr (kIn >= 3) x = Op<C>::apply(x, E::load(c[k]));
  if constexpr (kIn >= 4) x = Op<C>::apply(x, E::load(d[k]));
  if constexpr (kLast) {
    dst[k] = E::store(x);
  } else {
    acc[k] = x;
  }
}

template <typename E, template <typename> class Op, int kIn, bool kFirst, bool kLast,
          bool kDstFirst = false>
STRATA_KERNEL void manyPass(typename E::Storage* __restrict dst,
                            typename E::Compute* __restrict acc,
                            const typename E::Storage* __restrict a,
                            const typename E::Storage* __restrict b,
                            const typename E::Storage* __restrict c,
                            const typename E::Storage* __restrict d, size_t n) {
  static_assert(kIn >= 1 && kIn <= 4 && (kIn >= 2 || !kFirst), "a pass takes 1 to 4 sources");
  size_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    for (size_t j = 0; j < kBlock; ++j) {
      manyElement<E, Op, kIn, kFirst, kLast, kDstFirst>(dst, acc, a, b, c, d, i + j);
    }
  }
  for (; i < n; ++i) manyElement<E, Op, kIn, kFirst, kLast, kDstFirst>(dst, acc, a, b, c, d, i);
}

template <typename S>
STRATA_KERNEL const S* sourceAt(const void* const* srcs, int s, size_t i) {
  return s < 0 ? nullptr : static_cast<const S*>(srcs[s]) + i;
}

// The last pass of a block: acc op srcs[from] op ... op srcs[nsrc-1], 1 to 4 sources, into dst.
template <typename E, template <typename> class Op>
STRATA_KERNEL void manyLast(typename E::Storage* __restrict dst,
                            typename E::Compute* __restrict acc, const void* const* srcs, int from,
                            int nsrc, size_t i, size_t m) {
  using S = typename E::Storage;
  const int r = nsrc - from;
  const S* a = sourceAt<S>(srcs, from, i);
  const S* b = sourceAt<S>(srcs, r >= 2 ? from + 1 : -1, i);
  const S* c = sourceAt<S>(srcs, r >= 3 ? from + 2 : -1, i);
  const S* d = sourceAt<S>(srcs, r >= 4 ? from + 3 : -1, i);
  switch (r) {
    case 1:
      return manyPass<E, Op, 1, false, true>(dst, acc, a, b, c, d, m);
    case 2:
      return manyPass<E, Op, 2, false, true>(dst, acc, a, b, c, d, m);
    case 3:
      return manyPass<E, Op, 3, false, true>(dst, acc, a, b, c, d, m);
    default:
      return manyPass<E, Op, 4, false, true>(dst, acc, a, b, c, d, m);
  }
}

// dst[i] = srcs[0][i] op ... op srcs[nsrc-1][i] for nsrc >= 3, block by block, left to right.
// dst may be srcs[0], no other source: a pass that writes dst never reads srcs[0] through
// another pointer (it reads it as dst, or an earlier pass read it into the accumulator).
template <typename E, template <typename> class Op>
STRATA_KERNEL void reduceManyBody(void* dst, const void* const* srcs, int nsrc, size_t n) {
  using S = typename E::Storage;
  using C = typename E::Compute;
  constexpr size_t kMany = kManySourceBytes / sizeof(S);
  static_assert(kMany % kBlock == 0, "blocks must hold whole vector blocks");
  alignas(64) C acc[kMany];
  S* const out = static_cast<S*>(dst);
  const bool inPlace = dst == srcs[0];
  for (size_t i = 0; i < n; i += kMany) {
    const size_t m = n - i < kMany ? n - i : kMany;
    auto at = [&](int s) { return sourceAt<S>(srcs, s, i); };
    if (nsrc <= 4) {
      // One pass, no accumulator.
      const S* d = nsrc == 4 ? at(3) : nullptr;
      if (inPlace && nsrc == 3) {
        manyPass<E, Op, 3, true, true, true>(out + i, acc, nullptr, at(1), at(2), d, m);
      } else if (inPlace) {
        manyPass<E, Op, 4, true, true, true>(out + i, acc, nullptr, at(1), at(2), d, m);
      } else if (nsrc == 3) {
        manyPass<E, Op, 3, true, true>(out + i, acc, at(0), at(1), at(2), d, m);
      } else {
        manyPass<E, Op, 4, true, true>(out + i, acc, at(0), at(1), at(2), d, m);
      }
      continue;
    }
    // 4 sources into the accumulator, 4 more per pass while more than 4 remain, the rest
    // (1 to 4) with the accumulator into dst.
    manyPass<E, Op, 4, true, false>(nullptr, acc, at(0), at(1), at(2), at(3), m);
    int s = 4;
    for (; nsrc - s > 4; s += 4) {
      manyPass<E, Op, 4, false, false>(nullptr, acc, at(s), at(s + 1), at(s + 2), at(s + 3), m);
    }
    manyLast<E, Op>(out + i, acc, srcs, s, nsrc, i, m);
  }
}

template <typename E>
STRATA_KERNEL void scaleDownBody(typename E::Storage* __restrict buf, size_t n, int divisor) {
  using C = typename E::Compute;
  if constexpr (std::is_integral_v<C>) {
    // Divide in at least int so a divisor above 127 is not narrowed to int8. x86 has no vector
    // integer division, so this stays scalar; integer avg is rare.
    using W = std::common_type_t<C, int>;
    const W d = static_cast<W>(divisor);
    for (size_t i = 0; i < n; ++i) buf[i] = static_cast<C>(static_cast<W>(buf[i]) / d);
  } else {
    // A true division, not a multiplication by 1/d, so the result is correctly rounded.
    const C d = static_cast<C>(divisor);
    size_t i = 0;
    for (; i + kBlock <= n; i += kBlock) {
      for (size_t j = 0; j < kBlock; ++j) buf[i + j] = E::store(E::load(buf[i + j]) / d);
    }
    for (; i < n; ++i) buf[i] = E::store(E::load(buf[i]) / d);
  }
}

// True when the AVX2 variants are to run (reduce_dispatch.cc): the CPU has AVX2 and no test
// or benchmark forced the portable ones.
bool useAvx2Kernels();

// The dispatch every elementwise reduction entry point shares (reduce2, reduceMany): the type
// and op are resolved to a template instance once per call and the instruction set is read
// once, then kernel(e, tag, avx2) runs with e the element tag (visitType), tag the OpTag
// (visitOp) and avx2 whether the AVX2 variants are to run (false in builds without them).
template <typename Kernel>
void dispatchReduction(strataDataType_t type, strataRedOp_t op, Kernel&& kernel) {
#if STRATA_HAVE_AVX2_KERNELS
  const bool avx2 = useAvx2Kernels();
#else
  constexpr bool avx2 = false;
#endif
  visitType(type, [&](auto e) { visitOp(op, [&](auto tag) { kernel(e, tag, avx2); }); });
}

}  // namespace strata::detail
