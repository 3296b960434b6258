#include "gpu/device.h"

#include <cstring>

#include "common/cuda_check.h"

namespace strata::gpu {

int visibleDevices() {
  // A function-local static, not std::call_once: every call of the API asks (core::placeOf),
  // and libstdc++'s call_once sets two thread_locals and calls pthread_once each time.
  static const int count = [] {
    int n = 0;
    if (cudaGetDeviceCount(&n) != cudaSuccess) n = 0;
    (void)cudaGetLastError();  // a missing driver is not an error of a later call
    return n;
  }();
  return count;
}

StatusOr<PointerPlace> locate(const void* ptr) {
  PointerPlace place;
  if (ptr == nullptr || visibleDevices() == 0) return place;
  cudaPointerAttributes attr{};
  const cudaError_t rc = cudaPointerGetAttributes(&attr, ptr);
  if (rc == cudaErrorInvalidValue) {
    (void)cudaGetLastError();  // older runtimes: memory CUDA has never seen
    return place;
  }
  if (rc != cudaSuccess) return cudaFailure("cudaPointerGetAttributes", rc, __FILE__, __LINE__);
  if (attr.type == cudaMemoryTypeDevice || attr.type == cudaMemoryTypeManaged) {
    place.device = true;
    place.ordinal = attr.device;
  }
  return place;
}

StatusOr<DeviceUuid> deviceUuid(int ordinal) {
  cudaDeviceProp prop{};
  STRATA_CUDA_CHECK(cudaGetDeviceProperties(&prop, ordinal));
  DeviceUuid id{};
  static_assert(sizeof(prop.uuid.bytes) == 16, "cudaUUID_t is 16 bytes");
  std::memcpy(id.data(), prop.uuid.bytes, id.size());
  return id;
}

}  // namespace strata::gpu
