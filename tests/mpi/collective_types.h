// Element types for test_collectives.cc: host-side fp16 and bf16 conversions, per-type Traits
// (integer or floating, the arithmetic type, exact-result limits), printing, the matching MPI
// datatypes and ops, the dispatch from a strataDataType_t to its C++ type, and type and op names.
#pragma once

#include <mpi.h>

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>

#include "strata/strata_mpi.h"

namespace strata_test {

// ----- fp16 and bf16 --------------------------------------------------------------------------

inline uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

inline float bitsToFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

inline float halfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0x1f) return bitsToFloat(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {  // subnormal: mant * 2^-24
    const float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  return bitsToFloat(sign | ((exp + 112u) << 23) | (mant << 13));
}

// Round to nearest, ties to even (what the library's one rounding of an avg does).
inline uint16_t floatToHalf(float f) {
  uint32_t x = floatBits(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  x &= 0x7fffffffu;
  if (x > 0x7f800000u) return sign | 0x7e00u;   // NaN
  if (x >= 0x477ff000u) return sign | 0x7c00u;  // 65520 and up round to infinity
  if (x < 0x38800000u) {                        // below 2^-14: a multiple of 2^-24
    return sign | static_cast<uint16_t>(std::nearbyint(bitsToFloat(x) * 16777216.0f));
  }
  x += 0xfffu + ((x >> 13) & 1u);
  return sign | static_cast<uint16_t>((x - (112u << 23)) >> 13);
}

inline float bf16ToFloat(uint16_t b) { return bitsToFloat(static_cast<uint32_t>(b) << 16); }

inline uint16_t floatToBf16(float f) {
  uint32_t x = floatBits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

// ----- Element types --------------------------------------------------------------------------

// Integers are computed in their own type (unsigned wrap-around is the defined behaviour the
// library must match); floating types in double, where every input and result here is exact.
template <typename T>
struct Traits {
  static constexpr bool kFloat = false;
  using Math = T;
  static Math toMath(T v) { return v; }
  static T fromMath(Math v) { return v; }
};

// kDigits: significand bits. Sum inputs are multiples of 2^-kFracBits bounded so that
// nranks * bound <= 2^kDigits: then every partial sum, in any order, is exactly representable.
template <>
struct Traits<float> {
  static constexpr bool kFloat = true;
  using Math = double;
  using Bits = uint32_t;
  static constexpr int kDigits = 24, kFracBits = 3;
  static constexpr Bits kExpMask = 0x7f800000u, kExpLsb = 0x00800000u;
  static constexpr double kAvgTolerance = 1e-6;
  static double toMath(float v) { return v; }
  static float fromMath(double v) { return static_cast<float>(v); }
};

template <>
struct Traits<double> {
  static constexpr bool kFloat = true;
  using Math = double;
  using Bits = uint64_t;
  static constexpr int kDigits = 53, kFracBits = 4;
  static constexpr Bits kExpMask = 0x7ff0000000000000ull, kExpLsb = 0x0010000000000000ull;
  static constexpr double kAvgTolerance = 1e-12;
  static double toMath(double v) { return v; }
  static double fromMath(double v) { return v; }
};

template <>
struct Traits<Half> {
  static constexpr bool kFloat = true;
  using Math = double;
  using Bits = uint16_t;
  static constexpr int kDigits = 11, kFracBits = 2;
  static constexpr Bits kExpMask = 0x7c00u, kExpLsb = 0x0400u;
  static constexpr double kAvgTolerance = 1e-2;
  static double toMath(Half v) { return halfToFloat(v.bits); }
  static Half fromMath(double v) { return Half{floatToHalf(static_cast<float>(v))}; }
};

template <>
struct Traits<BFloat16> {
  static constexpr bool kFloat = true;
  using Math = double;
  using Bits = uint16_t;
  static constexpr int kDigits = 8, kFracBits = 1;
  static constexpr Bits kExpMask = 0x7f80u, kExpLsb = 0x0080u;
  static constexpr double kAvgTolerance = 1e-2;
  static double toMath(BFloat16 v) { return bf16ToFloat(v.bits); }
  static BFloat16 fromMath(double v) { return BFloat16{floatToBf16(static_cast<float>(v))}; }
};

template <typename T>
std::string show(T v) {
  char s[96];
  if constexpr (Traits<T>::kFloat) {
    typename Traits<T>::Bits b;
    std::memcpy(&b, &v, sizeof b);
    std::snprintf(s, sizeof s, "%.17g (0x%llx)", Traits<T>::toMath(v),
                  static_cast<unsigned long long>(b));
  } else if constexpr (std::is_signed_v<T>) {
    std::snprintf(s, sizeof s, "%lld", static_cast<long long>(v));
  } else {
    std::snprintf(s, sizeof s, "%llu", static_cast<unsigned long long>(v));
  }
  return s;
}

template <typename T>
MPI_Datatype mpiType() {
  if constexpr (std::is_same_v<T, int8_t>) return MPI_INT8_T;
  if constexpr (std::is_same_v<T, uint8_t>) return MPI_UINT8_T;
  if constexpr (std::is_same_v<T, int32_t>) return MPI_INT32_T;
  if constexpr (std::is_same_v<T, uint32_t>) return MPI_UINT32_T;
  if constexpr (std::is_same_v<T, int64_t>) return MPI_INT64_T;
  if constexpr (std::is_same_v<T, uint64_t>) return MPI_UINT64_T;
  if constexpr (std::is_same_v<T, float>) return MPI_FLOAT;
  if constexpr (std::is_same_v<T, double>) return MPI_DOUBLE;
  return MPI_DATATYPE_NULL;  // fp16, bf16: MPI has none
}

inline MPI_Op mpiOp(strataRedOp_t op) {
  switch (op) {
    case strataSum:
      return MPI_SUM;
    case strataProd:
      return MPI_PROD;
    case strataMax:
      return MPI_MAX;
    case strataMin:
      return MPI_MIN;
    default:
      return MPI_OP_NULL;  // avg: MPI has none
  }
}

// Calls f(T{}) with the C++ type that stores `type`.
template <typename F>
void withType(strataDataType_t type, F&& f) {
  switch (type) {
    case strataInt8:
      f(int8_t{});
      break;
    case strataUint8:
      f(uint8_t{});
      break;
    case strataInt32:
      f(int32_t{});
      break;
    case strataUint32:
      f(uint32_t{});
      break;
    case strataInt64:
      f(int64_t{});
      break;
    case strataUint64:
      f(uint64_t{});
      break;
    case strataFloat16:
      f(Half{});
      break;
    case strataFloat32:
      f(float{});
      break;
    case strataFloat64:
      f(double{});
      break;
    case strataBfloat16:
      f(BFloat16{});
      break;
    default:
      break;
  }
}

// Bytes per element of `type` (0 for an invalid one).
inline size_t typeSize(strataDataType_t type) {
  size_t bytes = 0;
  withType(type, [&](auto tag) { bytes = sizeof(tag); });
  return bytes;
}

const strataDataType_t kAllTypes[] = {strataInt8,    strataUint8,   strataInt32,   strataUint32,
                                      strataInt64,   strataUint64,  strataFloat16, strataFloat32,
                                      strataFloat64, strataBfloat16};
const strataRedOp_t kAllOps[] = {strataSum, strataProd, strataMax, strataMin, strataAvg};

inline const char* typeName(strataDataType_t t) {
  static const char* const kNames[] = {"int8",   "uint8", "int32", "uint32", "int64",
                                       "uint64", "fp16",  "fp32",  "fp64",   "bf16"};
  return t >= 0 && t < strataNumTypes ? kNames[t] : "?";
}

// A result code for messages: "4 (invalid argument ...)".
inline std::string codeName(strataResult_t rc) {
  return std::to_string(static_cast<int>(rc)) + " (" + strataGetErrorString(rc) + ")";
}

inline const char* opName(strataRedOp_t op) {
  static const char* const kNames[] = {"sum", "prod", "max", "min", "avg"};
  return op >= 0 && op < strataNumOps ? kNames[op] : "?";
}

}  // namespace strata_test
