#include "common/reduce.h"

#include <cstdint>
#include <type_traits>

#include "common/half_inline.h"

namespace strata {
namespace {

// Loops run in blocks of a compile-time trip count and then a scalar tail. GCC's -O2 (the
// "very-cheap" vectoriser cost model, our RelWithDebInfo default) vectorises only loops whose
// trip count it knows to be a multiple of the vector width; a plain `i < n` loop stays scalar.
constexpr size_t kBlock = 64;

// Element kinds: how a stored element becomes the value arithmetic is done in, and back.
template <typename T>
struct Plain {
  using Storage = T;
  using Compute = T;
  static T load(T x) { return x; }
  static T store(T x) { return x; }
};

// fp16 and bf16 are combined in float and rounded once. That is correctly rounded: float has
// 24 bits >= 2p + 2 for fp16 (p = 11) and bf16 (p = 8), so rounding the float result of +, *
// or / again to the narrow type gives the same as rounding the exact result once.
struct Half {
  using Storage = uint16_t;
  using Compute = float;
  static float load(uint16_t x) { return detail::halfToFloat(x); }
  static uint16_t store(float x) { return detail::floatToHalf(x); }
};

struct Bf16 {
  using Storage = uint16_t;
  using Compute = float;
  static float load(uint16_t x) { return detail::bf16ToFloat(x); }
  static uint16_t store(float x) { return detail::floatToBf16(x); }
};

// Integer sum and product wrap modulo 2^bits (as NCCL and MPI implementations do): done in the
// unsigned type, where overflow is defined, then converted back (modular since C++20, and in
// GCC and Clang before).
template <typename T>
struct Sum {
  static T apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      return static_cast<T>(static_cast<U>(static_cast<U>(a) + static_cast<U>(b)));
    } else {
      return a + b;
    }
  }
};

template <typename T>
struct Prod {
  static T apply(T a, T b) {
    if constexpr (std::is_integral_v<T>) {
      using U = std::make_unsigned_t<T>;
      // For 8-bit types the operands promote to int; 255 * 255 still fits.
      return static_cast<T>(static_cast<U>(static_cast<U>(a) * static_cast<U>(b)));
    } else {
      return a * b;
    }
  }
};

// Floating max and min propagate NaN from either side (a NaN gradient must not vanish in a
// reduction), which also makes them commutative up to the NaN's payload. `a != a` is the
// branch-free NaN test; the bitwise | keeps the selection free of short-circuit branches.
template <typename T>
struct Max {
  static T apply(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
      const bool take_a = (a > b) | (a != a);
      return take_a ? a : b;
    } else {
      return a > b ? a : b;
    }
  }
};

template <typename T>
struct Min {
  static T apply(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
      const bool take_a = (a < b) | (a != a);
      return take_a ? a : b;
    } else {
      return a < b ? a : b;
    }
  }
};

// One element of a combination: widen, apply the op, narrow (once).
template <typename E, template <typename> class Op>
inline typename E::Storage combine(typename E::Storage x, typename E::Storage y) {
  using C = typename E::Compute;
  return E::store(Op<C>::apply(E::load(x), E::load(y)));
}

// The kernels below spell out the blocked loop (full blocks of kBlock, then the tail) instead
// of sharing a helper that takes a capturing lambda: through the captured pointers GCC lost
// the restrict qualification and asked for runtime alias checks, which -O2 refuses. The inner
// index runs from 0 so that its trip count is the constant kBlock.

// inout[i] = inout[i] op other[i], or other[i] op inout[i] when kOtherFirst (reduce2 with
// dst == b keeps the operand order a op b).
template <typename E, template <typename> class Op, bool kOtherFirst>
void combineInPlace(typename E::Storage* __restrict inout,
                    const typename E::Storage* __restrict other, size_t n) {
  auto step = [](typename E::Storage& x, typename E::Storage y) {
    x = kOtherFirst ? combine<E, Op>(y, x) : combine<E, Op>(x, y);
  };
  size_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    for (size_t j = 0; j < kBlock; ++j) step(inout[i + j], other[i + j]);
  }
  for (; i < n; ++i) step(inout[i], other[i]);
}

// out[i] = a[i] op b[i]; a and b may be the same buffer since neither is written.
template <typename E, template <typename> class Op>
void combineTwo(typename E::Storage* __restrict out, const typename E::Storage* __restrict a,
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
void combineSelf(typename E::Storage* __restrict buf, size_t n) {
  size_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    for (size_t j = 0; j < kBlock; ++j) buf[i + j] = combine<E, Op>(buf[i + j], buf[i + j]);
  }
  for (; i < n; ++i) buf[i] = combine<E, Op>(buf[i], buf[i]);
}

template <typename E>
void scaleDownT(typename E::Storage* __restrict buf, size_t n, int divisor) {
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

// Calls f(E{}) with the element kind of `type`; nothing for an invalid type.
template <typename F>
void visitType(strataDataType_t type, F&& f) {
  switch (type) {
    case strataInt8:
      return f(Plain<int8_t>{});
    case strataUint8:
      return f(Plain<uint8_t>{});
    case strataInt32:
      return f(Plain<int32_t>{});
    case strataUint32:
      return f(Plain<uint32_t>{});
    case strataInt64:
      return f(Plain<int64_t>{});
    case strataUint64:
      return f(Plain<uint64_t>{});
    case strataFloat16:
      return f(Half{});
    case strataFloat32:
      return f(Plain<float>{});
    case strataFloat64:
      return f(Plain<double>{});
    case strataBfloat16:
      return f(Bf16{});
    case strataNumTypes:
      break;
  }
}

// Template-template arguments cannot be passed to a generic lambda, so ops travel as tags.
template <template <typename> class Op>
struct OpTag {};

// Calls f(OpTag<Op>{}) for `op`; avg combines as sum. Nothing for an invalid op.
template <typename F>
void visitOp(strataRedOp_t op, F&& f) {
  switch (op) {
    case strataSum:
    case strataAvg:
      return f(OpTag<Sum>{});
    case strataProd:
      return f(OpTag<Prod>{});
    case strataMax:
      return f(OpTag<Max>{});
    case strataMin:
      return f(OpTag<Min>{});
    case strataNumOps:
      break;
  }
}

template <typename E, template <typename> class Op>
void reduce2T(OpTag<Op>, void* dst, const void* a, const void* b, size_t n) {
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

}  // namespace

void reduceInto(void* dst, const void* src, size_t count, strataDataType_t type, strataRedOp_t op) {
  // dst[i] op src[i] is reduce2 with dst == a; that also handles a (contract-breaking)
  // dst == src without violating restrict.
  reduce2(dst, dst, src, count, type, op);
}

void reduce2(void* dst, const void* a, const void* b, size_t count, strataDataType_t type,
             strataRedOp_t op) {
  visitType(type, [&](auto e) {
    using E = decltype(e);
    visitOp(op, [&](auto tag) { reduce2T<E>(tag, dst, a, b, count); });
  });
}

void scaleDown(void* buf, size_t count, strataDataType_t type, int divisor) {
  if (divisor <= 1) return;  // 1 changes nothing; below 1 is a caller bug (callers validate)
  visitType(type, [&](auto e) {
    using E = decltype(e);
    scaleDownT<E>(static_cast<typename E::Storage*>(buf), count, divisor);
  });
}

}  // namespace strata
