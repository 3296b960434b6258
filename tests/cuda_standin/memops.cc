// Stream memory operations: the driver API's cuStreamWaitValue32 and cuStreamWriteValue32,
// reached as a program reaches the driver without linking it, through
// cudaGetDriverEntryPointByVersion (or the deprecated cudaGetDriverEntryPoint). cuda.h is
// included for the driver's types only; nothing of the driver is linked.
//
// A wait is an operation of its stream, run on the stream's thread, polling the 32-bit word
// until its condition holds; later work on the stream waits for it. It is not a kernel: it does
// not count in runningKernels(), so lazy kernel loading does not wait for it (the difference to
// the spinning waitCounter kernel, and the reason to use it). CUDA_STANDIN_MEMOPS (runtime.h,
// Config) makes the entry points report the functions absent, or the functions refuse.
#include <cuda.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <thread>

#include "runtime.h"

using namespace cuda_standin;  // NOLINT: the API below is CUDA's, at global scope

namespace {

using Clock = std::chrono::steady_clock;

// Driver calls report errors by their return value and leave the runtime's last error alone.
CUresult refuse(CUresult err, const char* call, const std::string& why) {
  const char* name = err == CUDA_ERROR_INVALID_VALUE     ? "CUDA_ERROR_INVALID_VALUE"
                     : err == CUDA_ERROR_INVALID_HANDLE  ? "CUDA_ERROR_INVALID_HANDLE"
                     : err == CUDA_ERROR_NOT_SUPPORTED   ? "CUDA_ERROR_NOT_SUPPORTED"
                     : err == CUDA_ERROR_NOT_INITIALIZED ? "CUDA_ERROR_NOT_INITIALIZED"
                                                         : "a CUresult";
  std::fprintf(stderr, "cuda stand-in: %s: %s (%s)\n", call, why.c_str(), name);
  return err;
}

// The stream and the word a memory operation names: device memory, or pinned host memory
// (mapped: the device pointer cudaHostGetDevicePointer gives, the same address here), 4-byte
// aligned, as CUDA requires.
CUresult resolve(CUstream stream, CUdeviceptr addr, const char* call, StreamRef* s,
                 uint32_t** word) {
  if (!config().initError.empty()) {
    return refuse(CUDA_ERROR_NOT_INITIALIZED, call, config().initError);
  }
  if (config().memOps == MemOps::kUnsupported) {
    return refuse(CUDA_ERROR_NOT_SUPPORTED, call,
                  "stream memory operations are off (CUDA_STANDIN_MEMOPS=unsupported)");
  }
  *s = findStream(reinterpret_cast<cudaStream_t>(stream));
  if (!*s) return refuse(CUDA_ERROR_INVALID_HANDLE, call, "not a live stream");
  const void* p = reinterpret_cast<const void*>(static_cast<uintptr_t>(addr));
  char text[128];
  Region r;
  if (!find(p, &r)) {
    std::snprintf(text, sizeof text, "%p is neither device nor pinned host memory", p);
    return refuse(CUDA_ERROR_INVALID_VALUE, call, text);
  }
  const size_t offset = static_cast<size_t>(static_cast<const char*>(p) - r.base);
  if (addr % 4 != 0 || offset + 4 > r.bytes) {
    std::snprintf(text, sizeof text, "%p is not a 4-byte aligned word inside its allocation", p);
    return refuse(CUDA_ERROR_INVALID_VALUE, call, text);
  }
  *word = reinterpret_cast<uint32_t*>(r.access + offset);
  return CUDA_SUCCESS;
}

// Queues (or, on a capturing stream, records) `op`; submitAll's refusals as the driver's codes
// (CUDA_ERROR_STREAM_CAPTURE_*).
CUresult queue(const StreamRef& s, Op op, const char* call) {
  const cudaError_t before = lastError();
  const cudaError_t e = submit(s, std::move(op), call);
  lastError() = before;
  switch (e) {
    case cudaSuccess:
      return CUDA_SUCCESS;
    case cudaErrorStreamCaptureInvalidated:
      return CUDA_ERROR_STREAM_CAPTURE_INVALIDATED;
    case cudaErrorStreamCaptureImplicit:
      return CUDA_ERROR_STREAM_CAPTURE_IMPLICIT;
    default:
      return CUDA_ERROR_UNKNOWN;  // submitAll refuses with none other
  }
}

bool holds(uint32_t now, uint32_t value, unsigned condition) {
  switch (condition) {
    case CU_STREAM_WAIT_VALUE_GEQ:
      return static_cast<int32_t>(now - value) >= 0;  // cyclic, as CUDA defines it
    case CU_STREAM_WAIT_VALUE_EQ:
      return now == value;
    case CU_STREAM_WAIT_VALUE_AND:
      return (now & value) != 0;
    default:  // CU_STREAM_WAIT_VALUE_NOR
      return ~(now | value) != 0;
  }
}

const char* conditionName(unsigned condition) {
  static const char* const names[] = {"GEQ", "EQ", "AND", "NOR"};
  return names[condition];
}

CUresult CUDAAPI waitValue32(CUstream stream, CUdeviceptr addr, cuuint32_t value,
                             unsigned int flags) {
  const char* call = "cuStreamWaitValue32";
  // FLUSH also flushes remote (RDMA) writes, which the stand-in has none of.
  const unsigned condition = flags & ~static_cast<unsigned>(CU_STREAM_WAIT_VALUE_FLUSH);
  if (condition > CU_STREAM_WAIT_VALUE_NOR) {
    return refuse(CUDA_ERROR_INVALID_VALUE, call, "flags " + std::to_string(flags));
  }
  StreamRef s;
  uint32_t* word = nullptr;
  if (CUresult r = resolve(stream, addr, call, &s, &word); r != CUDA_SUCCESS) return r;
  char what[128];
  std::snprintf(what, sizeof what, "cuStreamWaitValue32 until %s %u at %p",
                conditionName(condition), value,
                reinterpret_cast<void*>(static_cast<uintptr_t>(addr)));
  Op op;
  op.what = what;
  op.kernel = false;  // no kernel: lazy loading does not wait for it
  op.body = [word, value, condition, text = std::string(what)] {
    const Clock::time_point start = Clock::now();
    Clock::time_point warned = start;
    for (;;) {
      const uint32_t now = __atomic_load_n(word, __ATOMIC_ACQUIRE);
      if (holds(now, value, condition)) break;
      std::this_thread::sleep_for(std::chrono::microseconds(20));
      if (Clock::now() - warned >= std::chrono::seconds(10)) {
        warned = Clock::now();
        std::fprintf(stderr, "cuda stand-in: %s has waited %lld s; the value there is %u\n",
                     text.c_str(),
                     static_cast<long long>(
                         std::chrono::duration_cast<std::chrono::seconds>(warned - start).count()),
                     __atomic_load_n(word, __ATOMIC_ACQUIRE));
      }
    }
    std::atomic_thread_fence(std::memory_order_seq_cst);  // later work sees what came before
  };
  return queue(s, std::move(op), call);
}

CUresult CUDAAPI writeValue32(CUstream stream, CUdeviceptr addr, cuuint32_t value,
                              unsigned int flags) {
  const char* call = "cuStreamWriteValue32";
  if ((flags & ~static_cast<unsigned>(CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER)) != 0) {
    return refuse(CUDA_ERROR_INVALID_VALUE, call, "flags " + std::to_string(flags));
  }
  StreamRef s;
  uint32_t* word = nullptr;
  if (CUresult r = resolve(stream, addr, call, &s, &word); r != CUDA_SUCCESS) return r;
  Op op;
  op.what = "cuStreamWriteValue32 of " + std::to_string(value);
  const bool barrier = (flags & CU_STREAM_WRITE_VALUE_NO_MEMORY_BARRIER) == 0;
  op.body = [word, value, barrier] {
    // The default orders the stream's earlier writes before it (a fence); without the barrier
    // the store may pass them (here it does not, which is one allowed order).
    if (barrier) std::atomic_thread_fence(std::memory_order_seq_cst);
    __atomic_store_n(word, value, barrier ? __ATOMIC_SEQ_CST : __ATOMIC_RELAXED);
  };
  return queue(s, std::move(op), call);
}

cudaError_t entryPoint(const char* symbol, void** funcPtr, unsigned int cudaVersion,
                       unsigned long long flags, cudaDriverEntryPointQueryResult* driverStatus,
                       const char* call) {
  if (cudaError_t e = initCheck(call); e != cudaSuccess) return e;
  if (symbol == nullptr || funcPtr == nullptr) {
    return fail(cudaErrorInvalidValue, call, "symbol or funcPtr is NULL");
  }
  *funcPtr = nullptr;
  if ((flags & ~static_cast<unsigned long long>(cudaEnableLegacyStream |
                                                cudaEnablePerThreadDefaultStream)) != 0) {
    return fail(cudaErrorInvalidValue, call, "flags " + std::to_string(flags));
  }
  if ((flags & cudaEnablePerThreadDefaultStream) != 0) {
    return fail(cudaErrorNotSupported, call, "the stand-in has no per-thread default stream");
  }
  if (cudaVersion > CUDART_VERSION) {
    return fail(cudaErrorInvalidValue, call,
                "version " + std::to_string(cudaVersion) + " is newer than the driver's (" +
                    std::to_string(CUDART_VERSION) + ")");
  }
  cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
  void* fn = nullptr;
  if (std::strcmp(symbol, "cuStreamWaitValue32") == 0) {
    fn = reinterpret_cast<void*>(&waitValue32);
  } else if (std::strcmp(symbol, "cuStreamWriteValue32") == 0) {
    fn = reinterpret_cast<void*>(&writeValue32);
  }
  if (fn != nullptr && config().memOps == MemOps::kAbsent) fn = nullptr;  // CUDA_STANDIN_MEMOPS=0
  if (fn != nullptr && cudaVersion < 8000) {                              // both came with CUDA 8.0
    status = cudaDriverEntryPointVersionNotSufficent;
    fn = nullptr;
  } else if (fn != nullptr) {
    status = cudaDriverEntryPointSuccess;
  }
  *funcPtr = fn;
  if (driverStatus != nullptr) *driverStatus = status;
  return cudaSuccess;  // a symbol not found is no error (CUDA: funcPtr NULL, and the status)
}

}  // namespace

cudaError_t cudaGetDriverEntryPointByVersion(const char* symbol, void** funcPtr,
                                             unsigned int cudaVersion, unsigned long long flags,
                                             enum cudaDriverEntryPointQueryResult* driverStatus) {
  return entryPoint(symbol, funcPtr, cudaVersion, flags, driverStatus,
                    "cudaGetDriverEntryPointByVersion");
}

// Deprecated in CUDA 13: the runtime's own version stands for cudaVersion.
cudaError_t cudaGetDriverEntryPoint(const char* symbol, void** funcPtr, unsigned long long flags,
                                    enum cudaDriverEntryPointQueryResult* driverStatus) {
  return entryPoint(symbol, funcPtr, CUDART_VERSION, flags, driverStatus,
                    "cudaGetDriverEntryPoint");
}
