// The GPU side of a communicator (strataComm::device), made by its first device call. Only
// built with CUDA.
#pragma once

#include <cuda_runtime.h>

#include <memory>
#include <set>
#include <string>
#include <tuple>

#include "fabrics/fabric.h"
#include "gpu/device_fabric.h"
#include "gpu/progress.h"

namespace strata::core {

struct DeviceState {
  int device = 0;                // the GPU current at the first device call
  cudaStream_t stream = nullptr;  // non-blocking: every device call's copies, kernels, NCCL work
  void* scratch = nullptr;       // device working memory (stream-ordered allocations)
  size_t scratchBytes = 0;
  gpu::DeviceFabricOptions fabricOptions;
  std::unique_ptr<fabric::Fabric> flat;        // the whole communicator on device buffers
  std::unique_ptr<gpu::ProgressQueue> queue;  // declared last: stopped first
  // Calls (collective, count, type) whose groups and device fabrics exist, so that their next
  // calls go straight to the queue.
  std::set<std::tuple<int, size_t, int>> prepared;

  ~DeviceState();
};

}  // namespace strata::core
