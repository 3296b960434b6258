// Device buffers for test_collectives.cc --device. Each GuardedBuffer a case passes to strata gets
// a mirror in device memory with the same layout (padding, guards, data). The host copy goes up
// before the call, strata runs on the device addresses, and after the test's stream is synchronised
// the whole mirror comes back over the host copy, so every check (guards, unchanged send buffer,
// result) reads the host copy exactly as in host mode.
//
// Without STRATA_HAVE_CUDA only the host path exists: Device::open() reports no GPU and a
// DeviceMirror without a Device is the identity (host pointers, no stream).
#pragma once

#include <cstddef>
#include <initializer_list>
#include <string>
#include <vector>

#include "mpi/collective_reference.h"
#include "strata/strata.h"

namespace strata_test {

// A GuardedBuffer that remembers the arguments it was built with, so that a DeviceMirror can
// place its guards and data at the same offsets: GuardedBuffer(bytes, shift) holds `shift` bytes
// of padding, then kGuard guard bytes, `bytes` of data and kGuard guard bytes.
class MirroredBuffer : public GuardedBuffer {
 public:
  MirroredBuffer(size_t bytes, size_t shift)
      : GuardedBuffer(bytes, shift), bytes_(bytes), shift_(shift) {}

  size_t bytes() const { return bytes_; }
  size_t shift() const { return shift_; }

 private:
  size_t bytes_, shift_;
};

// The GPU and the one stream every --device case runs on. Every rank uses device 0: several ranks
// sharing one GPU is the case under test.
class Device {
 public:
  enum class Status { kReady = 0, kNoGpu = 1, kError = 2 };

  Device() = default;
  Device(const Device&) = delete;
  Device& operator=(const Device&) = delete;
  ~Device();  // destroys the stream

  // Selects device 0 and creates a non-blocking stream (so that nothing the library puts on the
  // legacy default stream orders itself with the test's work by accident). kNoGpu when no GPU is
  // visible (cudaGetDeviceCount fails or finds none, or the build has no CUDA); kError when a
  // visible GPU cannot be set up. *why says which, with CUDA's error string.
  // legacyStream: use the legacy default stream (NULL, what simple NCCL code passes) instead.
  Status open(std::string* why, bool legacyStream = false);

  strataStream_t stream() const { return stream_; }

 private:
  strataStream_t stream_ = nullptr;
};

// The device side of one strata call: a mirror of each of `buffers`, allocated and uploaded (on
// the device's stream) when it is built, freed when it goes out of scope. CUDA errors become
// failures of `verdict` with the CUDA error string. Without a Device (host mode) it does nothing:
// map() returns the host pointer and stream() null.
class DeviceMirror {
 public:
  DeviceMirror(Device* device, Verdict& verdict, std::initializer_list<MirroredBuffer*> buffers);
  DeviceMirror(const DeviceMirror&) = delete;
  DeviceMirror& operator=(const DeviceMirror&) = delete;
  ~DeviceMirror();

  // False when an allocation or upload failed (already recorded in the verdict).
  bool ok() const { return ok_; }

  // The device address of a host pointer into one of the buffers (guards and one past the end
  // included); in host mode, the pointer itself.
  template <typename T>
  T* map(T* host) {
    return static_cast<T*>(mapBytes(host));
  }

  // The stream to pass to strata: the device's, or null in host mode.
  strataStream_t stream() const { return device_ ? device_->stream() : nullptr; }

  // Synchronises the stream (the result is only there once the stream has run the call), then
  // copies every mirror back over its host buffer. False on a CUDA error (recorded).
  bool download();

 private:
  struct Mirror {
    MirroredBuffer* host;
    unsigned char* device;
  };

  void* mapBytes(const void* host);

  Device* device_;
  Verdict& verdict_;
  std::vector<Mirror> mirrors_;
  bool ok_ = true;
};

#ifndef STRATA_HAVE_CUDA
// Host-only build: there is never a Device, so a mirror is the identity.
inline Device::~Device() = default;

inline Device::Status Device::open(std::string* why, bool) {
  *why = "this build has no CUDA";
  return Status::kNoGpu;
}

inline DeviceMirror::DeviceMirror(Device* device, Verdict& verdict,
                                  std::initializer_list<MirroredBuffer*> buffers)
    : device_(nullptr), verdict_(verdict) {
  if (device) {  // unreachable: Device::open() never succeeds here
    verdict_.fail("device buffers in a build without CUDA");
    ok_ = false;
  }
}

inline DeviceMirror::~DeviceMirror() = default;

inline bool DeviceMirror::download() { return true; }

inline void* DeviceMirror::mapBytes(const void* host) { return const_cast<void*>(host); }
#endif

}  // namespace strata_test
