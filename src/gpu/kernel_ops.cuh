// The device side of the reduction arithmetic, private to src/gpu/kernels*.cu: element kinds
// (how a stored element is widened and narrowed back), the ops, and the switch from a runtime
// type to a kind. The element kinds mirror their host twins in common/reduce_ops.h (the
// conversions differ: hardware intrinsics here), because the device kernels must give the host
// kernels' bits; change both together. The ops are shared with the host.
#pragma once

#include <cuda_bf16.h>
#include <cuda_fp16.h>
#include <cuda_runtime.h>

#include <cstdint>
#include <string>
#include <type_traits>

#include "common/reduce_op_math.h"
#include "common/status.h"
#include "strata/strata.h"

namespace strata::gpu::detail {

template <typename T>
struct Plain {
  using Storage = T;
  using Compute = T;
  __device__ __forceinline__ static T load(T x) { return x; }
  __device__ __forceinline__ static T store(T x) { return x; }
};

// fp16 and bf16 widen exactly to float and narrow with one round to nearest even, as
// half_inline.h does. Only a NaN's payload may come out differently (the host keeps it, the
// hardware conversion may make it canonical); it stays a NaN.
struct Half {
  using Storage = uint16_t;
  using Compute = float;
  __device__ __forceinline__ static float load(uint16_t x) {
    return __half2float(__ushort_as_half(x));
  }
  __device__ __forceinline__ static uint16_t store(float x) {
    return __half_as_ushort(__float2half_rn(x));
  }
};

struct Bf16 {
  using Storage = uint16_t;
  using Compute = float;
  __device__ __forceinline__ static float load(uint16_t x) {
    return __bfloat162float(__ushort_as_bfloat16(x));
  }
  __device__ __forceinline__ static uint16_t store(float x) {
    return __bfloat16_as_ushort(__float2bfloat16_rn(x));
  }
};

// The ops are the host kernels' own (common/reduce_op_math.h). None of them mixes a multiply
// with an add, so nvcc's FMA contraction has nothing to fuse and the rounding is the host's.
using strata::detail::Max;
using strata::detail::Min;
using strata::detail::Prod;
using strata::detail::Sum;

// Calls V::template run<Kind>(args...) for `type` (a host-side switch, one instantiation per
// kind); an invalid type returns kInvalidArgument. A functor with a member template rather than
// a generic lambda, so every kernel instantiation is plainly visible to nvcc.
template <typename V, typename... Args>
Status visitType(strataDataType_t type, Args&&... args) {
  switch (type) {
    case strataInt8:
      return V::template run<Plain<int8_t>>(args...);
    case strataUint8:
      return V::template run<Plain<uint8_t>>(args...);
    case strataInt32:
      return V::template run<Plain<int32_t>>(args...);
    case strataUint32:
      return V::template run<Plain<uint32_t>>(args...);
    case strataInt64:
      return V::template run<Plain<int64_t>>(args...);
    case strataUint64:
      return V::template run<Plain<uint64_t>>(args...);
    case strataFloat16:
      return V::template run<Half>(args...);
    case strataFloat32:
      return V::template run<Plain<float>>(args...);
    case strataFloat64:
      return V::template run<Plain<double>>(args...);
    case strataBfloat16:
      return V::template run<Bf16>(args...);
    case strataNumTypes:
      break;
  }
  return invalidArgument("invalid datatype " + std::to_string(static_cast<int>(type)));
}

// Blocks of a launch: enough to cover `units` at kThreads per block, capped so that a huge
// buffer is walked by a grid-stride loop rather than by millions of short-lived blocks.
constexpr int kThreads = 256;
constexpr size_t kMaxBlocks = 8192;

inline unsigned blocksFor(size_t units) {
  const size_t b = (units + kThreads - 1) / kThreads;
  return static_cast<unsigned>(b < 1 ? 1 : (b > kMaxBlocks ? kMaxBlocks : b));
}

}  // namespace strata::gpu::detail
