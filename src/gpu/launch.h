// The launches behind gpu/kernels.h: kernels.cc checks a call's arguments and handles what needs
// no kernel (count 0, one source, divisor 1); these enqueue the kernel itself. They have two
// definitions: the CUDA kernels (kernels.cu, kernels_misc.cu) in a GPU build, and host
// functions run by the CPU stand-in for CUDA (tests/cuda_standin/launch_standin.cc) in the
// stand-in build, which tests the device path on machines without a GPU. Only built with CUDA.
//
// Preconditions (kernels.cc establishes them): valid type and op (strataAvg combines as
// strataSum), count > 0, non-null pointers; reduce: 2 <= nsrc <= kMaxReduceSources, dst equal
// to srcs[0] or overlapping no source; scale: divisor >= 2.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "common/status.h"
#include "strata/strata.h"

namespace strata::gpu::launch {

Status reduce(void* dst, const void* const* srcs, int nsrc, size_t count, strataDataType_t type,
              strataRedOp_t op, cudaStream_t stream);

Status scale(void* buf, size_t count, strataDataType_t type, int divisor, cudaStream_t stream);

Status waitCounter(const volatile unsigned long long* flag, unsigned long long target,
                   cudaStream_t stream);

// Loads every kernel (gpu::preloadKernels says why).
Status preload();

}  // namespace strata::gpu::launch
