// STRATA_CUDA_CHECK: turns a failed CUDA runtime call into a Status where it happens (the
// STRATA_MPI_CHECK of the GPU parts). Only included by code built with CUDA: the device
// runtime (src/gpu), the device fabrics and the device executor.
#pragma once

#include <cuda_runtime.h>

#include <string>

#include "common/log.h"
#include "common/status.h"

namespace strata {

inline Status cudaFailure(const char* call, cudaError_t err, const char* file, int line) {
  STRATA_WARN(kSubsysFabric, "%s failed at %s:%d: %s (%s)", call, file, line,
              cudaGetErrorString(err), cudaGetErrorName(err));
  return Status(Code::kCudaError, std::string(call) + " failed: " + cudaGetErrorString(err));
}

}  // namespace strata

#define STRATA_CUDA_CHECK(call)                                                 \
  do {                                                                          \
    cudaError_t strata_cuda_rc_ = (call);                                       \
    if (strata_cuda_rc_ != cudaSuccess)                                         \
      return ::strata::cudaFailure(#call, strata_cuda_rc_, __FILE__, __LINE__); \
  } while (0)
