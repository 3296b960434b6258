// Inline, branch-free fp16/bf16 conversions: the bodies behind half.h, kept in a header so the
// reduction kernels (reduce_kernels.h) can inline them into loops the compiler vectorises.
// They are force-inlined, since an out-of-line call would stop the vectoriser. (The AVX2
// variant of the kernels converts with its own intrinsics: reduce_avx2_narrow.h.)
//
// Every case (normal, subnormal, overflow, NaN) is computed and the right one selected, so the
// code has no data-dependent branches. Apart from the one float addition noted in
// floatToHalf, everything is integer bit manipulation and does not depend on compiler support
// for _Float16 or on F16C.
#pragma once

#include <cstdint>
#include <cstring>

#if defined(__GNUC__)
#define STRATA_HALF_INLINE __attribute__((always_inline)) inline
#else
#define STRATA_HALF_INLINE inline
#endif

namespace strata::detail {

STRATA_HALF_INLINE uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

STRATA_HALF_INLINE float floatFromBits(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

// c ? a : b as mask arithmetic. A ?: becomes a branch in GCC's IR, GCC then sinks the float
// operation of the unused side into that branch, and cannot if-convert it back (it might raise
// a floating-point exception), so the loop would not vectorise.
STRATA_HALF_INLINE uint32_t select(bool c, uint32_t a, uint32_t b) {
  const uint32_t mask = 0u - static_cast<uint32_t>(c);
  return (a & mask) | (b & ~mask);
}

// Exact: every fp16 value is a float.
STRATA_HALF_INLINE float halfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const int32_t em = h & 0x7fff;  // exponent and mantissa; int so SSE2's signed compares apply
  const uint32_t shifted = static_cast<uint32_t>(em) << 13;
  // Normal: rebias the exponent from 15 to 127, i.e. add (127 - 15) << 23.
  const uint32_t normal = shifted + 0x38000000u;
  // Inf and NaN: all-ones exponent; the payload moves along unchanged, so NaN stays NaN.
  const uint32_t inf_nan = shifted | 0x7f800000u;
  // Subnormal (and zero): value = mantissa * 2^-24; both the int-to-float conversion of a
  // 10-bit integer and the power-of-two scaling are exact, and the result is a normal float.
  const uint32_t subnormal = floatBits(static_cast<float>(em) * 0x1p-24f);
  uint32_t r = select(em >= 0x7c00, inf_nan, normal);
  r = select(em < 0x0400, subnormal, r);
  return floatFromBits(sign | r);
}

// Round to nearest, ties to even; NaN -> quiet NaN (sign and top payload bits kept);
// |f| >= 65520 (halfway between 65504 and 2^16) -> infinity.
STRATA_HALF_INLINE uint16_t floatToHalf(float f) {
  const uint32_t x = floatBits(f);
  const uint32_t sign = (x >> 16) & 0x8000u;
  const int32_t ax = static_cast<int32_t>(x & 0x7fffffffu);
  const uint32_t uax = static_cast<uint32_t>(ax);
  // Normal: rebias 127 -> 15 (subtract (127 - 15) << 23) and drop 13 mantissa bits, rounding
  // to nearest even by adding 0xfff plus the kept lsb. A carry out of the mantissa bumps the
  // exponent, which is exactly right, up to and including rounding to infinity at 65520.
  // Out-of-range inputs wrap here (unsigned, so defined) and are selected away below.
  const uint32_t normal = (uax - 0x38000000u + 0x0fffu + ((uax >> 13) & 1u)) >> 13;
  // Subnormal (|f| < 2^-14): in [0.5, 1) a float's ulp is 2^-24, the fp16 subnormal step, so
  // adding 0.5f makes the FPU round |f| to a multiple of 2^-24 (nearest even, the default mode)
  // and the mantissa bits are the fp16 subnormal mantissa. A result of 0x400 is correctly the
  // smallest normal. The sum is a normal float, so flush-to-zero modes cannot disturb it.
  const uint32_t subnormal = floatBits(floatFromBits(uax) + 0.5f) - 0x3f000000u;
  // Quiet NaN: set the fp16 quiet bit so a payload that lived only in the dropped low bits
  // cannot turn into infinity.
  const uint32_t nan = 0x7e00u | ((uax >> 13) & 0x03ffu);
  uint32_t r = select(ax < 0x38800000, subnormal, normal);  // 2^-14, the smallest normal
  r = select(ax >= 0x477ff000, 0x7c00u, r);                 // 65520.0f
  r = select(ax > 0x7f800000, nan, r);
  return static_cast<uint16_t>(sign | r);
}

// Exact: bf16 is the top half of a float.
STRATA_HALF_INLINE float bf16ToFloat(uint16_t b) {
  return floatFromBits(static_cast<uint32_t>(b) << 16);
}

// Round to nearest, ties to even; NaN -> quiet NaN; overflow rounds to infinity on its own,
// and subnormals need no special case, because bf16 shares float's exponent range.
STRATA_HALF_INLINE uint16_t floatToBf16(float f) {
  const uint32_t x = floatBits(f);
  const int32_t ax = static_cast<int32_t>(x & 0x7fffffffu);
  // Cannot overflow 32 bits for non-NaN x: the largest is -inf, 0xff800000 + 0x8000.
  const uint32_t rounded = (x + 0x7fffu + ((x >> 16) & 1u)) >> 16;
  const uint32_t nan = (x >> 16) | 0x0040u;
  return static_cast<uint16_t>(select(ax > 0x7f800000, nan, rounded));
}

}  // namespace strata::detail
