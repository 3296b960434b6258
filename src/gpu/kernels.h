// Device kernels: the local reduction and the average's division, on CUDA device memory, for
// every strata datatype and op. They follow the host kernels' semantics (common/reduce.h) bit
// for bit: integers wrap, floating max/min propagate NaN, fp16 and bf16 are widened to float,
// combined in float and rounded once (round to nearest even). Only built with CUDA.
//
// Every function enqueues on `stream` and returns at once; the result is there once the stream
// reaches it. A count of 0 enqueues nothing. An invalid type or op returns kInvalidArgument.
#pragma once

#include <cuda_runtime.h>

#include <cstddef>

#include "common/status.h"
#include "strata/strata.h"

namespace strata::gpu {

// dst[i] = srcs[0][i] op ... op srcs[nsrc-1][i], combined left to right in the accumulation
// type (float for fp16/bf16), rounded once. 1 <= nsrc <= kMaxReduceSources. dst may equal
// srcs[0]; otherwise no overlap with any source. strataAvg combines as strataSum.
constexpr int kMaxReduceSources = 8;
Status reduceMany(void* dst, const void* const* srcs, int nsrc, size_t count, strataDataType_t type,
                  strataRedOp_t op, cudaStream_t stream);

// buf[i] = buf[i] / divisor (integer division for integers, float division then one rounding
// for floating types). A divisor of 1 enqueues nothing.
Status scaleDown(void* buf, size_t count, strataDataType_t type, int divisor, cudaStream_t stream);

// One thread that spins until *flag >= target (a 64-bit counter in mapped pinned host memory
// that the progress thread advances), so that work queued on `stream` after it waits for a
// collective the host is still running. `flag` is the device alias of the host counter.
Status waitCounter(const volatile unsigned long long* flag, unsigned long long target,
                   cudaStream_t stream);

// Loads every kernel the progress thread may launch while a waitCounter kernel holds a stream
// (scaleDown, for every type) and waitCounter itself, on the current device. Why: with lazy
// loading (CUDA_MODULE_LOADING=LAZY, CUDA's default since 12.2) a kernel's first launch loads
// it, and loading may wait for every kernel running in the context; a first scaleDown launched
// while the call's own waitCounter kernel spins would wait for that kernel, which waits for the
// thread that launches: a deadlock (found on the first GPU run: the first average of 2 ranks
// never returned). Call before the first gate on a device; later calls are cheap.
Status preloadKernels();

}  // namespace strata::gpu
