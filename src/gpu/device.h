// What the process can see of its GPUs, and where a pointer lives. Only built with CUDA.
#pragma once

#include <array>
#include <cstdint>

#include "common/status.h"

namespace strata::gpu {

// GPUs visible to this process (0 without a driver or device); asked once per process, so a
// host-only run pays nothing per call.
int visibleDevices();

// Where `ptr` points: a GPU's memory (device or managed) with its ordinal, or host memory
// (pageable, pinned or unknown to CUDA: device < 0).
struct PointerPlace {
  bool device = false;
  int ordinal = -1;
};
StatusOr<PointerPlace> locate(const void* ptr);

// A GPU's identity, equal on every process that sees the same physical device.
using DeviceUuid = std::array<unsigned char, 16>;
StatusOr<DeviceUuid> deviceUuid(int ordinal);

}  // namespace strata::gpu
