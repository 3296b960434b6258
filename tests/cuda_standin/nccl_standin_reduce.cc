// The NCCL stand-in's types, descriptions and reductions (nccl_standin_shm.h). strata's ten types
// go through strata's own host reduction (common/reduce.h, compiled into this library), so a
// result here has the bits strata's host reference has; NCCL's two fp8 types, which strata does
// not have, are reduced here the same way: widened to float, combined in float, rounded once.
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "common/reduce.h"
#include "nccl_standin_shm.h"

namespace nccl_standin {

// strata's enums carry NCCL's values for the types and ops they share.
static_assert(int(strataInt8) == int(ncclInt8) && int(strataBfloat16) == int(ncclBfloat16) &&
                  int(strataFloat16) == int(ncclFloat16) && int(strataNumTypes) == 10 &&
                  int(ncclFloat8e4m3) == 10 && int(ncclFloat8e5m2) == 11 && ncclNumTypes == 12,
              "NCCL's types 0-9 are strata's; 10 and 11 its fp8");
static_assert(int(strataSum) == int(ncclSum) && int(strataProd) == int(ncclProd) &&
                  int(strataMax) == int(ncclMax) && int(strataMin) == int(ncclMin) &&
                  int(strataAvg) == int(ncclAvg),
              "strataRedOp_t values must equal ncclRedOp_t's");

size_t typeBytes(ncclDataType_t t) {
  static constexpr size_t kBytes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};
  static_assert(sizeof kBytes / sizeof kBytes[0] == ncclNumTypes, "a size per type");
  const int i = static_cast<int>(t);
  return i >= 0 && i < ncclNumTypes ? kBytes[i] : 0;
}

const char* typeName(ncclDataType_t t) {
  static const char* const kNames[] = {"int8",    "uint8",    "int32",   "uint32",
                                       "int64",   "uint64",   "float16", "float32",
                                       "float64", "bfloat16", "fp8e4m3", "fp8e5m2"};
  const int i = static_cast<int>(t);
  return i >= 0 && i < ncclNumTypes ? kNames[i] : "an invalid type";
}

const char* opName(ncclRedOp_t op) {
  static const char* const kNames[] = {"sum", "prod", "max", "min", "avg"};
  const int i = static_cast<int>(op);
  return i >= 0 && i < ncclNumOps ? kNames[i] : "an invalid op";
}

const char* kindName(Kind k) {
  switch (k) {
    case Kind::kAllReduce:
      return "allreduce";
    case Kind::kReduceScatter:
      return "reduce-scatter";
    case Kind::kAllGather:
      return "all-gather";
    case Kind::kBroadcast:
      return "broadcast";
    case Kind::kReduce:
      return "reduce";
  }
  return "?";
}

void extents(const Collective& c, int nranks, int rank, size_t* sendBytes, size_t* recvBytes) {
  const size_t bytes = c.count * typeBytes(c.type), n = static_cast<size_t>(nranks);
  switch (c.kind) {
    case Kind::kAllReduce:
      *sendBytes = *recvBytes = bytes;
      return;
    case Kind::kReduceScatter:
      *sendBytes = n * bytes;
      *recvBytes = bytes;
      return;
    case Kind::kAllGather:
      *sendBytes = bytes;
      *recvBytes = n * bytes;
      return;
    case Kind::kBroadcast:  // NCCL reads sendbuff on the root only
      *sendBytes = rank == c.root ? bytes : 0;
      *recvBytes = bytes;
      return;
    case Kind::kReduce:  // and writes a reduce's recvbuff on the root only
      *sendBytes = bytes;
      *recvBytes = rank == c.root ? bytes : 0;
      return;
  }
  *sendBytes = *recvBytes = 0;
}

std::string describe(const Collective& c) {
  std::string text =
      std::string(kindName(c.kind)) + " of " + std::to_string(c.count) + " " + typeName(c.type);
  const bool reducing =
      c.kind == Kind::kAllReduce || c.kind == Kind::kReduceScatter || c.kind == Kind::kReduce;
  if (reducing) text += std::string(" (") + opName(c.op) + ")";
  if (c.kind == Kind::kBroadcast || c.kind == Kind::kReduce) {
    text += " from root " + std::to_string(c.root);
  }
  return text;
}

namespace {

// An fp8 format: `exp` exponent bits, `man` mantissa bits. e4m3 (OCP's E4M3FN) has no
// infinity and one NaN pattern (S.1111.111); e5m2 is IEEE-like (S.11111.00 infinite).
struct Fp8 {
  int exp, man;
  bool e4m3;
  int bias() const { return (1 << (exp - 1)) - 1; }
  uint8_t maxFinite() const { return e4m3 ? 0x7E : 0x7B; }  // 448 and 57344
  uint8_t nan() const { return 0x7F; }

  float decode(uint8_t v) const {
    const bool negative = (v & 0x80) != 0;
    const int e = (v >> man) & ((1 << exp) - 1), m = v & ((1 << man) - 1);
    float x;
    if (e4m3 && e == 15 && m == 7) {
      x = NAN;
    } else if (!e4m3 && e == 31) {
      x = m == 0 ? INFINITY : NAN;
    } else if (e == 0) {
      x = std::ldexp(static_cast<float>(m), 1 - bias() - man);
    } else {
      x = std::ldexp(static_cast<float>(m + (1 << man)), e - bias() - man);
    }
    return negative ? -x : x;
  }

  // Rounds to the nearest representable value, ties to the even code; beyond the largest
  // finite value, and for infinities, saturates to it (CUDA's __NV_SATFINITE); NaN stays NaN.
  uint8_t encode(float x) const {
    if (std::isnan(x)) return nan();
    const uint8_t sign = std::signbit(x) ? 0x80 : 0;
    const float a = std::fabs(x);
    // The magnitudes grow with the code from 0 to maxFinite(): bisect for the pair around a.
    int lo = 0, hi = maxFinite();
    if (a >= decode(static_cast<uint8_t>(hi))) return static_cast<uint8_t>(sign | hi);
    while (hi - lo > 1) {
      const int mid = (lo + hi) / 2;
      (decode(static_cast<uint8_t>(mid)) <= a ? lo : hi) = mid;
    }
    const float below = decode(static_cast<uint8_t>(lo)), above = decode(static_cast<uint8_t>(hi));
    int code;
    if (a - below < above - a) {
      code = lo;
    } else if (above - a < a - below) {
      code = hi;
    } else {
      code = (lo & 1) == 0 ? lo : hi;
    }
    return static_cast<uint8_t>(sign | code);
  }
};

float combine(float a, float b, ncclRedOp_t op) {
  switch (op) {
    case ncclProd:
      return a * b;
    case ncclMax:  // NaN when either is NaN, as strata's floating max and min
      return std::isnan(a) || std::isnan(b) ? NAN : (a > b ? a : b);
    case ncclMin:
      return std::isnan(a) || std::isnan(b) ? NAN : (a < b ? a : b);
    default:  // sum, and avg (divided at the end)
      return a + b;
  }
}

void reduceFp8(const Fp8& f, uint8_t* dst, const void* const* srcs, int n, size_t count,
               ncclRedOp_t op) {
  for (size_t i = 0; i < count; ++i) {
    float acc = f.decode(static_cast<const uint8_t*>(srcs[0])[i]);
    for (int s = 1; s < n; ++s) {
      acc = combine(acc, f.decode(static_cast<const uint8_t*>(srcs[s])[i]), op);
    }
    if (op == ncclAvg) acc /= static_cast<float>(n);
    dst[i] = f.encode(acc);
  }
}

}  // namespace

void reduce(void* dst, const void* const* srcs, int n, size_t count, ncclDataType_t type,
            ncclRedOp_t op) {
  if (type == ncclFloat8e4m3 || type == ncclFloat8e5m2) {
    const Fp8 f = type == ncclFloat8e4m3 ? Fp8{4, 3, true} : Fp8{5, 2, false};
    return reduceFp8(f, static_cast<uint8_t*>(dst), srcs, n, count, op);
  }
  const auto t = static_cast<strataDataType_t>(type);
  strata::reduceMany(dst, srcs, n, count, t,
                     op == ncclAvg ? strataSum : static_cast<strataRedOp_t>(op));
  if (op == ncclAvg) strata::scaleDown(dst, count, t, n);
}

}  // namespace nccl_standin
