// gpu/launch.h on the CPU stand-in for CUDA (the STRATA_CUDA_STANDIN build only): each launch
// queues the host kernels' work (common/reduce.h) on the stream's thread, reaching device memory
// through the stand-in's second mapping. The GPU kernels give the host kernels' bits
// (gpu/kernels.h), so a result here is a GPU's result; a time here says nothing of a GPU's.
//
// Each kernel instantiation of the GPU build (one per type for scaleDown, one per type and op
// for reduce) is a kernel of its own here too, so that lazy loading (standin.h) and
// preloadKernels see the same set of kernels as on a GPU.
#include <array>
#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>

#include "common/cuda_check.h"
#include "common/datatype.h"
#include "common/reduce.h"
#include "gpu/kernels.h"
#include "gpu/launch.h"
#include "standin.h"

namespace strata::gpu::launch {
namespace {

using cuda_standin::Kernel;

constexpr int kTypes = static_cast<int>(strataNumTypes);
constexpr int kOps = static_cast<int>(strataNumOps);

const Kernel kWait("waitCounterKernel");

const std::array<Kernel, kTypes>& scaleKernels() {
  static const std::array<Kernel, kTypes> k = {
      Kernel("scaleDownKernel<int8>"),    Kernel("scaleDownKernel<uint8>"),
      Kernel("scaleDownKernel<int32>"),   Kernel("scaleDownKernel<uint32>"),
      Kernel("scaleDownKernel<int64>"),   Kernel("scaleDownKernel<uint64>"),
      Kernel("scaleDownKernel<float16>"), Kernel("scaleDownKernel<float32>"),
      Kernel("scaleDownKernel<float64>"), Kernel("scaleDownKernel<bfloat16>")};
  return k;
}

// reduceKernel<type, op>; strataAvg shares strataSum's kernel, as on the GPU.
const Kernel& reduceKernel(strataDataType_t type, strataRedOp_t op) {
  static const auto* k = [] {
    auto* all = new std::array<Kernel*, kTypes * kOps>();
    for (int t = 0; t < kTypes; ++t) {
      for (int o = 0; o < kOps; ++o) {
        const std::string name = std::string("reduceKernel<") +
                                 dataTypeName(static_cast<strataDataType_t>(t)) + ", " +
                                 redOpName(static_cast<strataRedOp_t>(o)) + ">";
        (*all)[t * kOps + o] = new Kernel(strdup(name.c_str()));  // lives as long as the program
      }
    }
    return all;
  }();
  const int o = static_cast<int>(op == strataAvg ? strataSum : op);
  return *(*k)[static_cast<int>(type) * kOps + o];
}

// Where the kernel reaches `bytes` at `p`; a failed launch (as an illegal address would be on
// a GPU, found here before it runs) when `p` is no device-accessible memory.
StatusOr<void*> access(const void* p, size_t bytes, const char* what) {
  cudaError_t err = cudaSuccess;
  void* at = cuda_standin::deviceAccess(p, bytes, &err);
  if (at == nullptr) return cudaFailure(what, err, __FILE__, __LINE__);
  return at;
}

}  // namespace

Status reduce(void* dst, const void* const* srcs, int nsrc, size_t count, strataDataType_t type,
              strataRedOp_t op, cudaStream_t stream) {
  const size_t bytes = count * dataTypeSize(type);
  STRATA_ASSIGN_OR_RETURN(void* d, access(dst, bytes, "reduceKernel's dst"));
  std::array<const void*, kMaxReduceSources> s{};
  for (int i = 0; i < nsrc; ++i) {
    STRATA_ASSIGN_OR_RETURN(s[i], access(srcs[i], bytes, "reduceKernel's source"));
  }
  STRATA_CUDA_CHECK(cuda_standin::launch(
      reduceKernel(type, op), stream,
      "reduceKernel over " + std::to_string(nsrc) + " x " + std::to_string(count),
      [d, s, nsrc, count, type, op] { strata::reduceMany(d, s.data(), nsrc, count, type, op); }));
  return Status::ok();
}

Status scale(void* buf, size_t count, strataDataType_t type, int divisor, cudaStream_t stream) {
  STRATA_ASSIGN_OR_RETURN(void* b, access(buf, count * dataTypeSize(type), "scaleDownKernel's buf"));
  STRATA_CUDA_CHECK(cuda_standin::launch(
      scaleKernels()[static_cast<int>(type)], stream,
      "scaleDownKernel of " + std::to_string(count) + " by " + std::to_string(divisor),
      [b, count, type, divisor] { strata::scaleDown(b, count, type, divisor); }));
  return Status::ok();
}

// Spins on its stream's thread as the kernel spins on a GPU: the stream's later work waits.
Status waitCounter(const volatile unsigned long long* flag, unsigned long long target,
                   cudaStream_t stream) {
  STRATA_ASSIGN_OR_RETURN(void* f, access(const_cast<unsigned long long*>(flag), sizeof *flag,
                                          "waitCounterKernel's flag"));
  const auto* counter = static_cast<const volatile unsigned long long*>(f);
  STRATA_CUDA_CHECK(cuda_standin::launch(
      kWait, stream, "waitCounterKernel until " + std::to_string(target), [counter, target] {
        while (*counter < target) std::this_thread::sleep_for(std::chrono::microseconds(20));
        std::atomic_thread_fence(std::memory_order_seq_cst);  // __threadfence_system()
      }));
  return Status::ok();
}

Status preload() {
  cudaFuncAttributes attributes;
  STRATA_CUDA_CHECK(cudaFuncGetAttributes(&attributes, &kWait));
  for (const Kernel& k : scaleKernels()) {
    STRATA_CUDA_CHECK(cudaFuncGetAttributes(&attributes, &k));
  }
  return Status::ok();
}

}  // namespace strata::gpu::launch
