// gpu/kernels.h: the arguments checked, the calls that need no kernel answered, the rest handed
// to gpu/launch.h (the CUDA kernels, or the CPU stand-in's in its own build).
#include "gpu/kernels.h"

#include <string>

#include "common/cuda_check.h"
#include "common/datatype.h"
#include "common/log.h"
#include "gpu/launch.h"

namespace strata::gpu {
namespace {

Status rejected(const char* fn, const std::string& message) {
  STRATA_WARN(kSubsysFabric, "gpu::%s: %s", fn, message.c_str());
  return invalidArgument(std::string("gpu::") + fn + ": " + message);
}

}  // namespace

Status reduceMany(void* dst, const void* const* srcs, int nsrc, size_t count, strataDataType_t type,
                  strataRedOp_t op, cudaStream_t stream) {
  if (nsrc < 1 || nsrc > kMaxReduceSources) {
    return rejected("reduceMany", "nsrc " + std::to_string(nsrc) + " is outside 1.." +
                                      std::to_string(kMaxReduceSources));
  }
  if (!validDataType(type))
    return rejected("reduceMany", "invalid datatype " + std::to_string(static_cast<int>(type)));
  if (!validRedOp(op))
    return rejected("reduceMany", "invalid reduction op " + std::to_string(static_cast<int>(op)));
  if (count == 0) return Status::ok();
  if (dst == nullptr || srcs == nullptr) return rejected("reduceMany", "dst or srcs is NULL");
  for (int s = 0; s < nsrc; ++s) {
    if (srcs[s] == nullptr)
      return rejected("reduceMany", "srcs[" + std::to_string(s) + "] is NULL");
  }
  if (nsrc == 1) {
    // A copy, bit for bit, as on the host (no widening that would quieten a signalling NaN).
    if (dst != srcs[0]) {
      STRATA_CUDA_CHECK(cudaMemcpyAsync(dst, srcs[0], count * dataTypeSize(type),
                                        cudaMemcpyDeviceToDevice, stream));
    }
    return Status::ok();
  }
  return launch::reduce(dst, srcs, nsrc, count, type, op, stream);
}

Status scaleDown(void* buf, size_t count, strataDataType_t type, int divisor, cudaStream_t stream) {
  if (divisor < 1)
    return rejected("scaleDown", "divisor " + std::to_string(divisor) + " is below 1");
  if (!validDataType(type)) {
    return rejected("scaleDown", "invalid datatype " + std::to_string(static_cast<int>(type)));
  }
  if (divisor == 1 || count == 0) return Status::ok();  // x / 1 is x, bit for bit
  if (buf == nullptr) return rejected("scaleDown", "buf is NULL");
  return launch::scale(buf, count, type, divisor, stream);
}

Status waitCounter(const volatile unsigned long long* flag, unsigned long long target,
                   cudaStream_t stream) {
  if (flag == nullptr) return rejected("waitCounter", "flag is NULL");
  return launch::waitCounter(flag, target, stream);
}

Status preloadKernels() { return launch::preload(); }

}  // namespace strata::gpu
