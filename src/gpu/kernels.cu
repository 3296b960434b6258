// gpu::launch::reduce (launch.h; kernels.cc checks the arguments first): one kernel
// instantiation per type and op (kernel_ops.cuh has the arithmetic). The other launches are in
// kernels_misc.cu.
//
// Each thread combines whole 16-byte packs of every source (one vector load per source), so a
// warp reads 512 contiguous bytes per source per step; elements that do not fill a last pack,
// and buffers that are not 16-byte aligned, take a one-element-per-thread path. Both paths
// combine left to right in the accumulation type and round once, as the host kernels do.
// nvcc's front end reads status.h's `status_ = internalError(...)` (an assignment) as a
// discarded [[nodiscard]] result, warning #2810; g++ rightly does not.
#pragma nv_diag_suppress 2810

#include <cstdint>
#include <cstring>
#include <string>

#include "common/cuda_check.h"
#include "gpu/kernel_ops.cuh"
#include "gpu/kernels.h"
#include "gpu/launch.h"

namespace strata::gpu {
namespace {

using detail::kThreads;

constexpr size_t kPackBytes = 16;

// The source pointers travel by value in the kernel's arguments (constant memory), so no
// device allocation or copy is needed per call.
struct Sources {
  const void* p[kMaxReduceSources];
};

template <typename E>
struct PackOf {
  using S = typename E::Storage;
  using C = typename E::Compute;
  static constexpr int kN = static_cast<int>(kPackBytes / sizeof(S));
};

template <typename E>
__device__ __forceinline__ void unpack(const uint4& raw, typename E::Compute* out) {
  typename E::Storage v[PackOf<E>::kN];
  memcpy(v, &raw, kPackBytes);  // register moves once compiled
#pragma unroll
  for (int j = 0; j < PackOf<E>::kN; ++j) out[j] = E::load(v[j]);
}

// Packs [0, packs) a pack per thread, then the elements from packs * kN on, one per thread.
// `if (s < nsrc)` under a fully unrolled loop keeps the source index a constant, so the
// pointers are read straight from the argument space. All loads of a pack are issued before
// any arithmetic so that they are in flight together. dst may be srcs.p[0]: each element is
// read and then written by the same thread, never by another.
template <typename E, template <typename> class Op>
__global__ void __launch_bounds__(kThreads)
    reduceKernel(typename E::Storage* dst, Sources srcs, int nsrc, size_t count, size_t packs) {
  using S = typename E::Storage;
  using C = typename E::Compute;
  constexpr int kN = PackOf<E>::kN;
  const size_t stride = static_cast<size_t>(gridDim.x) * blockDim.x;
  const size_t tid = static_cast<size_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  for (size_t g = tid; g < packs; g += stride) {
    uint4 raw[kMaxReduceSources];
#pragma unroll
    for (int s = 0; s < kMaxReduceSources; ++s) {
      if (s < nsrc) raw[s] = static_cast<const uint4*>(srcs.p[s])[g];
    }
    C acc[kN];
    unpack<E>(raw[0], acc);
#pragma unroll
    for (int s = 1; s < kMaxReduceSources; ++s) {
      if (s < nsrc) {
        C x[kN];
        unpack<E>(raw[s], x);
#pragma unroll
        for (int j = 0; j < kN; ++j) acc[j] = Op<C>::apply(acc[j], x[j]);
      }
    }
    S out[kN];
#pragma unroll
    for (int j = 0; j < kN; ++j) out[j] = E::store(acc[j]);
    uint4 packed;
    memcpy(&packed, out, kPackBytes);
    reinterpret_cast<uint4*>(dst)[g] = packed;
  }
  for (size_t i = packs * kN + tid; i < count; i += stride) {
    C acc = E::load(static_cast<const S*>(srcs.p[0])[i]);
#pragma unroll
    for (int s = 1; s < kMaxReduceSources; ++s) {
      if (s < nsrc) acc = Op<C>::apply(acc, E::load(static_cast<const S*>(srcs.p[s])[i]));
    }
    dst[i] = E::store(acc);
  }
}

struct ReduceArgs {
  void* dst;
  Sources srcs;
  int nsrc;
  size_t count;
  strataRedOp_t op;
  cudaStream_t stream;
};

bool packAligned(const void* p) { return reinterpret_cast<uintptr_t>(p) % kPackBytes == 0; }

template <typename E, template <typename> class Op>
Status launchReduce(const ReduceArgs& a) {
  using S = typename E::Storage;
  bool aligned = packAligned(a.dst);
  for (int s = 0; s < a.nsrc; ++s) aligned = aligned && packAligned(a.srcs.p[s]);
  const size_t packs = aligned ? a.count / PackOf<E>::kN : 0;
  const unsigned blocks = detail::blocksFor(packs > 0 ? packs : a.count);
  reduceKernel<E, Op>
      <<<blocks, kThreads, 0, a.stream>>>(static_cast<S*>(a.dst), a.srcs, a.nsrc, a.count, packs);
  STRATA_CUDA_CHECK(cudaGetLastError());
  return Status::ok();
}

struct ReduceByType {
  template <typename E>
  static Status run(const ReduceArgs& a) {
    switch (a.op) {
      case strataSum:
      case strataAvg:  // the division happens once, in scaleDown
        return launchReduce<E, detail::Sum>(a);
      case strataProd:
        return launchReduce<E, detail::Prod>(a);
      case strataMax:
        return launchReduce<E, detail::Max>(a);
      case strataMin:
        return launchReduce<E, detail::Min>(a);
      case strataNumOps:
        break;
    }
    return invalidArgument("invalid reduction op " + std::to_string(static_cast<int>(a.op)));
  }
};

}  // namespace

namespace launch {

Status reduce(void* dst, const void* const* srcs, int nsrc, size_t count, strataDataType_t type,
              strataRedOp_t op, cudaStream_t stream) {
  ReduceArgs a{dst, {}, nsrc, count, op, stream};
  for (int s = 0; s < nsrc; ++s) a.srcs.p[s] = srcs[s];
  return detail::visitType<ReduceByType>(type, a);
}

}  // namespace launch

}  // namespace strata::gpu
