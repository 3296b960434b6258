// The stand-in's memory calls: allocation, copies and sets, pointer attributes. Where CUDA
// documents a call's host-side synchronisation (the runtime API's "API synchronization
// behavior"), the stand-in does exactly that much, so code that relies on more fails here:
//   cudaMemcpy   pageable host -> device: waits for the legacy stream, takes the source, and
//                returns before the copy lands; device -> device: returns at once; otherwise
//                returns once the copy is done. Always on the legacy default stream.
//   cudaMemset   device memory: returns at once (legacy stream); pinned host memory: when done.
//   *Async       queued on the stream, host memory read or written when the stream gets there.
//   cudaFree, cudaFreeHost   wait for every stream first (they synchronise the device).
// During a stream capture (capture.cc), the synchronous calls (allocation, freeing, cudaMemcpy,
// cudaMemset) are CUDA's "potentially unsafe" calls: refused unless the thread's capture mode
// allows them. cudaMallocAsync and cudaFreeAsync on a capturing stream are refused too, which is
// stricter than CUDA: CUDA records graph memory nodes, which the stand-in does not model.
#include <cstring>
#include <memory>
#include <vector>

#include "runtime.h"
#include "standin.h"

using namespace cuda_standin;  // NOLINT: the API below is CUDA's, at global scope

namespace {

enum class Side { kDevice, kPinned, kPageable };

struct End {
  Side side = Side::kPageable;
  char* at = nullptr;  // where stream work reads or writes it
};

// Classifies one end of a copy or set and finds where stream work reaches it.
cudaError_t resolve(const void* p, size_t bytes, const char* call, End* out) {
  Region r;
  if (!find(p, &r)) {
    out->side = Side::kPageable;
    out->at = static_cast<char*>(const_cast<void*>(p));
    return cudaSuccess;
  }
  out->side = r.kind == MemKind::kDevice ? Side::kDevice : Side::kPinned;
  const size_t offset = static_cast<size_t>(static_cast<const char*>(p) - r.base);
  if (offset + bytes > r.bytes) {
    return fail(cudaErrorInvalidValue, call,
                std::to_string(bytes) + " bytes at offset " + std::to_string(offset) +
                    " run past the end of their allocation of " + std::to_string(r.bytes));
  }
  out->at = r.access + offset;
  return cudaSuccess;
}

const char* kindName(cudaMemcpyKind k) {
  switch (k) {
    case cudaMemcpyHostToHost:
      return "cudaMemcpyHostToHost";
    case cudaMemcpyHostToDevice:
      return "cudaMemcpyHostToDevice";
    case cudaMemcpyDeviceToHost:
      return "cudaMemcpyDeviceToHost";
    case cudaMemcpyDeviceToDevice:
      return "cudaMemcpyDeviceToDevice";
    case cudaMemcpyDefault:
      return "cudaMemcpyDefault";
  }
  return "an unknown cudaMemcpyKind";
}

// Both ends of a copy, checked against its kind (CUDA: a kind that does not match the pointers
// is undefined behaviour; the stand-in refuses it).
cudaError_t resolveCopy(void* dst, const void* src, size_t bytes, cudaMemcpyKind kind,
                        const char* call, End* d, End* s) {
  if (dst == nullptr || src == nullptr) return fail(cudaErrorInvalidValue, call, "a NULL pointer");
  if (cudaError_t e = resolve(dst, bytes, call, d); e != cudaSuccess) return e;
  if (cudaError_t e = resolve(src, bytes, call, s); e != cudaSuccess) return e;
  const bool srcDev = s->side == Side::kDevice, dstDev = d->side == Side::kDevice;
  bool fits = true;
  switch (kind) {
    case cudaMemcpyHostToHost:
      fits = !srcDev && !dstDev;
      break;
    case cudaMemcpyHostToDevice:
      fits = !srcDev && dstDev;
      break;
    case cudaMemcpyDeviceToHost:
      fits = srcDev && !dstDev;
      break;
    case cudaMemcpyDeviceToDevice:
      fits = srcDev && dstDev;
      break;
    case cudaMemcpyDefault:
      break;
    default:
      return fail(cudaErrorInvalidMemcpyDirection, call, "an unknown cudaMemcpyKind");
  }
  if (!fits) {
    return fail(cudaErrorInvalidValue, call,
                std::string(kindName(kind)) + " but the source is " +
                    (srcDev ? "device" : "host") + " memory and the destination " +
                    (dstDev ? "device" : "host") + " memory");
  }
  return cudaSuccess;
}

Op copyOp(const char* call, char* dst, const char* src, size_t bytes) {
  Op op;
  op.what = std::string(call) + " of " + std::to_string(bytes) + " bytes";
  op.body = [dst, src, bytes] { std::memmove(dst, src, bytes); };
  return op;
}

// Queues a marker on the legacy stream (with its implicit synchronisation) and waits for it.
cudaError_t syncLegacy(const StreamRef& legacy, const char* who) {
  Op marker;
  marker.what = std::string(who) + " (host waits here)";
  marker.body = [] {};
  uint64_t t = 0;
  if (cudaError_t e = submit(legacy, std::move(marker), who, &t); e != cudaSuccess) return e;
  legacy->waitFor(t, who);
  return cudaSuccess;
}

// cudaMallocAsync and cudaFreeAsync on a capturing stream.
cudaError_t refuseMemoryNode(const StreamRef& s, const char* call) {
  CaptureRef c = captureOf(s);
  if (!c) return cudaSuccess;
  return refuseInCapture(c, cudaErrorStreamCaptureUnsupported, call,
                         "the stand-in does not model graph memory nodes (CUDA would record "
                         "one here)");
}

// `unsafe`: a potentially unsafe call during capture (all but the stream-ordered cudaMallocAsync).
cudaError_t allocateOr(void** ptr, size_t size, MemKind kind, unsigned flags, const char* call,
                       bool unsafe = true) {
  if (cudaError_t e = initCheck(call); e != cudaSuccess) return e;
  if (ptr == nullptr) return fail(cudaErrorInvalidValue, call, "the result pointer is NULL");
  if (unsafe) {
    if (cudaError_t e = unsafeCallCheck(call); e != cudaSuccess) return e;
  }
  *ptr = nullptr;
  if (size == 0) return cudaSuccess;
  *ptr = allocate(kind, size, flags);
  if (*ptr == nullptr) {
    return fail(cudaErrorMemoryAllocation, call, std::to_string(size) + " bytes");
  }
  return cudaSuccess;
}

cudaError_t freeSynchronising(void* ptr, MemKind kind, const char* call) {
  if (cudaError_t e = initCheck(call); e != cudaSuccess) return e;
  if (cudaError_t e = unsafeCallCheck(call); e != cudaSuccess) return e;
  if (ptr == nullptr) return cudaSuccess;
  Region r;
  if (!find(ptr, &r) || r.base != ptr || r.kind != kind) {
    return fail(cudaErrorInvalidValue, call,
                kind == MemKind::kDevice ? "not the start of a device allocation"
                                         : "not the start of a pinned host allocation");
  }
  waitAll(allTails(), call);  // synchronises the device, as CUDA's does
  release(ptr, kind);
  return cudaSuccess;
}

}  // namespace

cudaError_t cudaMalloc(void** devPtr, size_t size) {
  return allocateOr(devPtr, size, MemKind::kDevice, 0, "cudaMalloc");
}

cudaError_t cudaFree(void* devPtr) { return freeSynchronising(devPtr, MemKind::kDevice, "cudaFree"); }

// Stream-ordered: the memory exists at once (work queued later may use it); freeing waits for
// the work queued before it on the stream.
cudaError_t cudaMallocAsync(void** devPtr, size_t size, cudaStream_t stream) {
  StreamRef s = streamOf(stream, "cudaMallocAsync");
  if (!s) return lastError();
  if (cudaError_t e = refuseMemoryNode(s, "cudaMallocAsync"); e != cudaSuccess) return e;
  return allocateOr(devPtr, size, MemKind::kDevice, 0, "cudaMallocAsync", /*unsafe=*/false);
}

cudaError_t cudaFreeAsync(void* devPtr, cudaStream_t stream) {
  StreamRef s = streamOf(stream, "cudaFreeAsync");
  if (!s) return lastError();
  if (cudaError_t e = refuseMemoryNode(s, "cudaFreeAsync"); e != cudaSuccess) return e;
  if (devPtr == nullptr) return cudaSuccess;
  Region r;
  if (!find(devPtr, &r) || r.base != devPtr || r.kind != MemKind::kDevice) {
    return fail(cudaErrorInvalidValue, "cudaFreeAsync", "not the start of a device allocation");
  }
  Op op;
  op.what = "cudaFreeAsync";
  op.body = [devPtr] { release(devPtr, MemKind::kDevice); };
  return submit(s, std::move(op), "cudaFreeAsync");
}

cudaError_t cudaHostAlloc(void** pHost, size_t size, unsigned int flags) {
  return allocateOr(pHost, size, MemKind::kPinned, flags, "cudaHostAlloc");
}

cudaError_t cudaMallocHost(void** ptr, size_t size) {
  return allocateOr(ptr, size, MemKind::kPinned, cudaHostAllocDefault, "cudaMallocHost");
}

cudaError_t cudaFreeHost(void* ptr) {
  return freeSynchronising(ptr, MemKind::kPinned, "cudaFreeHost");
}

// Unified addressing: pinned memory's device address is its host address.
cudaError_t cudaHostGetDevicePointer(void** pDevice, void* pHost, unsigned int flags) {
  if (cudaError_t e = initCheck("cudaHostGetDevicePointer"); e != cudaSuccess) return e;
  Region r;
  if (pDevice == nullptr || flags != 0 || !find(pHost, &r) || r.kind != MemKind::kPinned) {
    return fail(cudaErrorInvalidValue, "cudaHostGetDevicePointer",
                "pHost is not pinned host memory (or flags is not 0)");
  }
  *pDevice = pHost;
  return cudaSuccess;
}

cudaError_t cudaPointerGetAttributes(cudaPointerAttributes* attributes, const void* ptr) {
  if (cudaError_t e = initCheck("cudaPointerGetAttributes"); e != cudaSuccess) return e;
  if (attributes == nullptr || ptr == nullptr) {
    return fail(cudaErrorInvalidValue, "cudaPointerGetAttributes", "a NULL pointer");
  }
  *attributes = cudaPointerAttributes{};
  Region r;
  if (!find(ptr, &r)) {
    attributes->type = cudaMemoryTypeUnregistered;  // CUDA 11 and later: not an error
    attributes->device = -2;
    return cudaSuccess;
  }
  attributes->device = 0;
  attributes->devicePointer = const_cast<void*>(ptr);
  if (r.kind == MemKind::kDevice) {
    attributes->type = cudaMemoryTypeDevice;
  } else {
    attributes->type = cudaMemoryTypeHost;
    attributes->hostPointer = const_cast<void*>(ptr);
  }
  return cudaSuccess;
}

cudaError_t cudaMemcpy(void* dst, const void* src, size_t count, cudaMemcpyKind kind) {
  const char* call = "cudaMemcpy";
  StreamRef legacy = streamOf(nullptr, call);
  if (!legacy) return lastError();
  if (cudaError_t e = unsafeCallCheck(call); e != cudaSuccess) return e;
  if (count == 0) return cudaSuccess;
  End d, s;
  if (cudaError_t e = resolveCopy(dst, src, count, kind, call, &d, &s); e != cudaSuccess) return e;
  if (d.side == Side::kDevice && s.side == Side::kPageable) {
    // The source goes to a staging buffer at once; the copy to the device lands later.
    if (cudaError_t e = syncLegacy(legacy, call); e != cudaSuccess) return e;
    auto staged = std::make_shared<std::vector<char>>(s.at, s.at + count);
    Op op;
    op.what = "cudaMemcpy from pageable memory, " + std::to_string(count) + " bytes";
    char* to = d.at;
    op.body = [staged, to] { std::memcpy(to, staged->data(), staged->size()); };
    return submit(legacy, std::move(op), call);
  }
  uint64_t t = 0;
  if (cudaError_t e = submit(legacy, copyOp(call, d.at, s.at, count), call, &t); e != cudaSuccess)
    return e;
  if (d.side != Side::kDevice || s.side != Side::kDevice) legacy->waitFor(t, call);
  return cudaSuccess;
}

cudaError_t cudaMemcpyAsync(void* dst, const void* src, size_t count, cudaMemcpyKind kind,
                            cudaStream_t stream) {
  const char* call = "cudaMemcpyAsync";
  StreamRef st = streamOf(stream, call);
  if (!st) return lastError();
  if (count == 0) return cudaSuccess;
  End d, s;
  if (cudaError_t e = resolveCopy(dst, src, count, kind, call, &d, &s); e != cudaSuccess) return e;
  return submit(st, copyOp(call, d.at, s.at, count), call);
}

namespace {

cudaError_t memsetOn(const StreamRef& st, void* devPtr, int value, size_t count, const char* call,
                     bool sync) {
  if (count == 0) return cudaSuccess;
  End d;
  if (devPtr == nullptr) return fail(cudaErrorInvalidValue, call, "a NULL pointer");
  if (cudaError_t e = resolve(devPtr, count, call, &d); e != cudaSuccess) return e;
  if (d.side == Side::kPageable) {
    return fail(cudaErrorInvalidValue, call, "the destination is not device memory");
  }
  Op op;
  op.what = std::string(call) + " of " + std::to_string(count) + " bytes";
  char* at = d.at;
  op.body = [at, value, count] { std::memset(at, value, count); };
  uint64_t t = 0;
  if (cudaError_t e = submit(st, std::move(op), call, &t); e != cudaSuccess) return e;
  if (sync && d.side == Side::kPinned) st->waitFor(t, call);
  return cudaSuccess;
}

}  // namespace

cudaError_t cudaMemset(void* devPtr, int value, size_t count) {
  StreamRef legacy = streamOf(nullptr, "cudaMemset");
  if (!legacy) return lastError();
  if (cudaError_t e = unsafeCallCheck("cudaMemset"); e != cudaSuccess) return e;
  return memsetOn(legacy, devPtr, value, count, "cudaMemset", /*sync=*/true);
}

cudaError_t cudaMemsetAsync(void* devPtr, int value, size_t count, cudaStream_t stream) {
  StreamRef st = streamOf(stream, "cudaMemsetAsync");
  if (!st) return lastError();
  return memsetOn(st, devPtr, value, count, "cudaMemsetAsync", /*sync=*/false);
}
