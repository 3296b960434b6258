// gpu::launch::scale (the average's division), waitCounter (a stream waits for the host) and
// preload (launch.h; kernels.cc checks the arguments first).
// nvcc's front end reads status.h's `status_ = internalError(...)` (an assignment) as a
// discarded [[nodiscard]] result, warning #2810; g++ rightly does not.
#pragma nv_diag_suppress 2810

#include <string>
#include <type_traits>

#include "common/cuda_check.h"
#include "gpu/kernel_ops.cuh"
#include "gpu/kernels.h"
#include "gpu/launch.h"

namespace strata::gpu {
namespace {

using detail::kThreads;

// The arithmetic of common/reduce_kernels.h's scaleDownBody. Integers divide in at least int,
// so a divisor above 127 is not narrowed to int8. Floating types take a true division (nvcc's
// default -prec-div=true: IEEE round to nearest), not a multiplication by 1/d, then one
// rounding to the stored type. One element per thread: this runs once per average, after the
// reduction, and integer division dominates where it is not memory bound.
template <typename E>
__global__ void __launch_bounds__(kThreads)
    scaleDownKernel(typename E::Storage* buf, size_t count, int divisor) {
  using C = typename E::Compute;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  for (size_t i = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    if constexpr (std::is_integral_v<C>) {
      using W = std::common_type_t<C, int>;
      buf[i] = static_cast<C>(static_cast<W>(buf[i]) / static_cast<W>(divisor));
    } else {
      buf[i] = E::store(E::load(buf[i]) / static_cast<C>(divisor));
    }
  }
}

struct ScaleByType {
  template <typename E>
  static Status run(void* buf, size_t count, int divisor, cudaStream_t stream) {
    scaleDownKernel<E><<<detail::blocksFor(count), kThreads, 0, stream>>>(
        static_cast<typename E::Storage*>(buf), count, divisor);
    STRATA_CUDA_CHECK(cudaGetLastError());
    return Status::ok();
  }
};

// One thread polls the host's counter through the mapped alias (each read crosses the bus,
// hence the sleep between reads). The system-scope fence after the loop orders the read that
// saw the target before every later memory access of this grid, so the stream's next work
// starts only after the counter's value was observed, and sees what the host wrote before
// advancing it.
__global__ void waitCounterKernel(const volatile unsigned long long* flag,
                                  unsigned long long target) {
  while (*flag < target) __nanosleep(1000);
  __threadfence_system();
}

// cudaFuncGetAttributes makes the runtime load the function it describes (see preloadKernels).
struct PreloadByType {
  template <typename E>
  static Status run() {
    cudaFuncAttributes attributes;
    STRATA_CUDA_CHECK(cudaFuncGetAttributes(&attributes, scaleDownKernel<E>));
    return Status::ok();
  }
};

}  // namespace

namespace launch {

Status scale(void* buf, size_t count, strataDataType_t type, int divisor, cudaStream_t stream) {
  return detail::visitType<ScaleByType>(type, buf, count, divisor, stream);
}

Status waitCounter(const volatile unsigned long long* flag, unsigned long long target,
                   cudaStream_t stream) {
  waitCounterKernel<<<1, 1, 0, stream>>>(flag, target);
  STRATA_CUDA_CHECK(cudaGetLastError());
  return Status::ok();
}

Status preload() {
  cudaFuncAttributes attributes;
  STRATA_CUDA_CHECK(cudaFuncGetAttributes(&attributes, waitCounterKernel));
  for (int t = 0; t < static_cast<int>(strataNumTypes); ++t) {
    STRATA_RETURN_IF_ERROR(detail::visitType<PreloadByType>(static_cast<strataDataType_t>(t)));
  }
  return Status::ok();
}

}  // namespace launch

}  // namespace strata::gpu
