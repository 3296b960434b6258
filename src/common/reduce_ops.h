// The arithmetic of the reduction kernels, private to src/common/reduce*: element kinds (how
// a stored element is widened for arithmetic and narrowed back), the ops, and the switches
// from a runtime type and op to them.
#pragma once

#include <cstddef>
#include <cstdint>
#include <type_traits>

#include "common/half_inline.h"
#include "common/reduce_op_math.h"
#include "strata/strata.h"

// Kernels are force-inlined into the entry function of each instruction-set variant (see
// reduce_kernels.h), so each variant gets its own copy compiled for its target.
#define STRATA_KERNEL __attribute__((always_inline)) inline

// The AVX2 variant (AVX2 and F16C) exists on x86 builds with GCC or Clang.
#if (defined(__x86_64__) || defined(__i386__)) && defined(__GNUC__)
#define STRATA_HAVE_AVX2_KERNELS 1
#define STRATA_TARGET_AVX2 __attribute__((target("avx2,f16c")))
#else
#define STRATA_HAVE_AVX2_KERNELS 0
#endif

namespace strata::detail {

// Loops run in blocks of a compile-time trip count and then a scalar tail. GCC's -O2 (the
// "very-cheap" vectoriser cost model, our RelWithDebInfo default) vectorises only loops whose
// trip count it knows to be a multiple of the vector width; a plain `i < n` loop stays scalar.
// 64 is a multiple of every vector width up to 512 bits for every element type.
constexpr size_t kBlock = 64;

// Bytes of each source per block of reduceMany (4 KiB: 1024 floats, 2048 fp16, whose float
// accumulator is then 8 KiB). The accumulator stays in L1 while every source's piece streams
// through it once. Measured with strata-kernels on a Zen 5 EPYC over 64 MiB buffers: with 3 or
// 8 sources, 1 to 8 KiB pieces ran alike (within noise); with 16, 4 KiB ran at 34 GB/s against
// 28 for 1 KiB and 31 for 8 KiB.
constexpr size_t kManySourceBytes = 4096;

// Element kinds: how a stored element becomes the value arithmetic is done in, and back.
template <typename T>
struct Plain {
  using Storage = T;
  using Compute = T;
  STRATA_KERNEL static T load(T x) { return x; }
  STRATA_KERNEL static T store(T x) { return x; }
};

// fp16 and bf16 are combined in float and rounded once. For two operands that is correctly
// rounded: float has 24 bits >= 2p + 2 for fp16 (p = 11) and bf16 (p = 8), so rounding the
// float result of +, * or / again to the narrow type gives the same as rounding the exact
// result once.
struct Half {
  using Storage = uint16_t;
  using Compute = float;
  STRATA_KERNEL static float load(uint16_t x) { return halfToFloat(x); }
  STRATA_KERNEL static uint16_t store(float x) { return floatToHalf(x); }
};

struct Bf16 {
  using Storage = uint16_t;
  using Compute = float;
  STRATA_KERNEL static float load(uint16_t x) { return bf16ToFloat(x); }
  STRATA_KERNEL static uint16_t store(float x) { return floatToBf16(x); }
};

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

}  // namespace strata::detail
