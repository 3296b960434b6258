// strata-kernels --device: gpu::reduceMany's bandwidth on GPU 0, next to a device-to-device
// copy of the same bytes. The measurement is in kernels_device.cc, built only with CUDA.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "strata/strata.h"
#include "tool_main.h"

namespace strata::tools {

struct DeviceSweep {
  std::vector<size_t> sizes;  // buffer sizes in bytes, ascending
  std::vector<strataDataType_t> types;
  std::vector<strataRedOp_t> ops;
  int iters = 9;     // timed rounds per row; the median is printed
  std::string json;  // when not empty, every number is also written to this file
};

// Prints a header and one table per type and op on stdout. Returns the exit status: 0, or
// kNoGpuExit (with a message on stderr) when no GPU is visible. Throws std::exception when a
// CUDA call or a kernel fails.
int runDevice(const DeviceSweep& sweep);

// "4 KiB", "64 MiB": the size column of every table (defined in strata_kernels.cc).
std::string human(size_t bytes);

}  // namespace strata::tools
