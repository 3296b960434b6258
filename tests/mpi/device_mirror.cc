// The CUDA side of device_mirror.h (built only with STRATA_HAVE_CUDA).
#include "mpi/device_mirror.h"

#include <cuda_runtime.h>

#include <cstdint>
#include <string>

namespace strata_test {
namespace {

std::string cudaWhy(const char* call, cudaError_t err) {
  return std::string(call) + ": " + cudaGetErrorName(err) + ": " + cudaGetErrorString(err);
}

cudaStream_t cudaStream(strataStream_t stream) { return stream; }  // the same type

}  // namespace

// ----- Device ---------------------------------------------------------------------------------

Device::~Device() {
  if (stream_) cudaStreamDestroy(cudaStream(stream_));
}

Device::Status Device::open(std::string* why, bool legacyStream) {
  int count = 0;
  cudaError_t err = cudaGetDeviceCount(&count);
  if (err != cudaSuccess) {
    *why = "no CUDA GPU visible (" + cudaWhy("cudaGetDeviceCount", err) + ")";
    return Status::kNoGpu;
  }
  if (count == 0) {
    *why = "no CUDA GPU visible (cudaGetDeviceCount found none)";
    return Status::kNoGpu;
  }
  if ((err = cudaSetDevice(0)) != cudaSuccess) {
    *why = cudaWhy("cudaSetDevice(0)", err);
    return Status::kError;
  }
  cudaStream_t stream = nullptr;  // the legacy default stream
  if (legacyStream) return Status::kReady;
  if ((err = cudaStreamCreateWithFlags(&stream, cudaStreamNonBlocking)) != cudaSuccess) {
    *why = cudaWhy("cudaStreamCreateWithFlags", err);
    return Status::kError;
  }
  stream_ = stream;
  return Status::kReady;
}

// ----- DeviceMirror ---------------------------------------------------------------------------

// Device layout of a buffer: [0, shift) padding (never copied: it keeps the data's alignment as on
// the host), then guard, data, guard at the host's offsets. Only guard + data + guard is copied.
namespace {

size_t allocBytes(const MirroredBuffer& b) {
  return b.shift() + GuardedBuffer::kGuard + b.bytes() + GuardedBuffer::kGuard;
}
size_t copiedBytes(const MirroredBuffer& b) {
  return GuardedBuffer::kGuard + b.bytes() + GuardedBuffer::kGuard;
}
unsigned char* hostCopyStart(MirroredBuffer& b) { return b.data() - GuardedBuffer::kGuard; }

}  // namespace

DeviceMirror::DeviceMirror(Device* device, Verdict& verdict,
                           std::initializer_list<MirroredBuffer*> buffers)
    : device_(device), verdict_(verdict) {
  if (!device_) return;
  for (MirroredBuffer* b : buffers) {
    void* mem = nullptr;
    cudaError_t err = cudaMalloc(&mem, allocBytes(*b));
    if (err != cudaSuccess) {
      verdict_.fail(cudaWhy("cudaMalloc", err));
      ok_ = false;
      return;
    }
    mirrors_.push_back({b, static_cast<unsigned char*>(mem)});
    // Ordered on the test's stream and not waited for: an NCCL-like call on the same stream runs
    // after it, whatever other streams the library uses.
    err = cudaMemcpyAsync(mirrors_.back().device + b->shift(), hostCopyStart(*b), copiedBytes(*b),
                          cudaMemcpyHostToDevice, cudaStream(device_->stream()));
    if (err != cudaSuccess) {
      verdict_.fail(cudaWhy("cudaMemcpyAsync to the device", err));
      ok_ = false;
      return;
    }
  }
}

DeviceMirror::~DeviceMirror() {
  if (mirrors_.empty()) return;
  // After a failed call or download the stream may still hold work on these buffers.
  cudaError_t err = cudaStreamSynchronize(cudaStream(device_->stream()));
  if (err != cudaSuccess && ok_) verdict_.fail(cudaWhy("cudaStreamSynchronize", err));
  for (const Mirror& m : mirrors_) {
    err = cudaFree(m.device);
    if (err != cudaSuccess && ok_) {
      verdict_.fail(cudaWhy("cudaFree", err));
      ok_ = false;
    }
  }
}

bool DeviceMirror::download() {
  if (!device_ || !ok_) return ok_;
  cudaError_t err = cudaStreamSynchronize(cudaStream(device_->stream()));
  if (err != cudaSuccess) {
    verdict_.fail(cudaWhy("cudaStreamSynchronize after the call", err));
    ok_ = false;
    return false;
  }
  for (const Mirror& m : mirrors_) {
    err = cudaMemcpy(hostCopyStart(*m.host), m.device + m.host->shift(), copiedBytes(*m.host),
                     cudaMemcpyDeviceToHost);
    if (err != cudaSuccess) {
      verdict_.fail(cudaWhy("cudaMemcpy to the host", err));
      ok_ = false;
      return false;
    }
  }
  return true;
}

void* DeviceMirror::mapBytes(const void* host) {
  if (!device_) return const_cast<void*>(host);
  const auto p = reinterpret_cast<uintptr_t>(host);
  for (const Mirror& m : mirrors_) {
    const auto begin = reinterpret_cast<uintptr_t>(hostCopyStart(*m.host));
    if (p >= begin && p - begin <= copiedBytes(*m.host)) {
      return m.device + m.host->shift() + (p - begin);
    }
  }
  verdict_.fail("test bug: a pointer passed to strata lies in no mirrored buffer");
  ok_ = false;
  return nullptr;
}

}  // namespace strata_test
