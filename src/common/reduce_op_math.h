// The ops of the reduction kernels (sum, product, max, min on one element kind's compute
// type), written once for the host kernels (common/reduce_ops.h) and the device ones
// (gpu/kernel_ops.cuh), which must give the same bits. Pure arithmetic, no includes beyond the
// standard library, so nvcc compiles it for the GPU as it is.
#pragma once

#include <type_traits>

// Force-inlined everywhere: into each instruction-set variant of the host kernels (see
// reduce_kernels.h) and, under nvcc, into the device kernels as well.
#ifdef __CUDACC__
#define STRATA_OP __host__ __device__ __forceinline__
#else
#define STRATA_OP __attribute__((always_inline)) inline
#endif

namespace strata::detail {

// Integer sum and product wrap modulo 2^bits (as NCCL and MPI implementations do): done in the
// unsigned type, where overflow is defined, then converted back (modular since C++20, and in
// GCC and Clang before).
template <typename T>
struct Sum {
  STRATA_OP static T apply(T a, T b) {
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
  STRATA_OP static T apply(T a, T b) {
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
// reduction), which also makes them commutative up to the NaN's payload: a NaN `a` is kept by
// the second selection, a NaN `b` fails the comparison. `a != a` is the branch-free NaN test.
// Two plain selections are the form GCC if-converts and vectorises even when reduceMany chains
// four of them; a single select on `(a > b) | (a != a)` became branches there.
template <typename T>
struct Max {
  STRATA_OP static T apply(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
      const T r = a > b ? a : b;
      return a != a ? a : r;
    } else {
      return a > b ? a : b;
    }
  }
};

template <typename T>
struct Min {
  STRATA_OP static T apply(T a, T b) {
    if constexpr (std::is_floating_point_v<T>) {
      const T r = a < b ? a : b;
      return a != a ? a : r;
    } else {
      return a < b ? a : b;
    }
  }
};

}  // namespace strata::detail
