// strata-perf --device: the GPU side of the benchmark. strata's calls run on cudaMalloc'd
// buffers and a stream of this rank's GPU; inputs are filled on the host and copied over, and
// results copied back for the check, so perf_bench.cc keeps one fill and check code for both
// and needs no CUDA header. The CUDA code is in perf_device.cc, built only with CUDA.
#pragma once

#include <cstddef>
#include <memory>
#include <string>

#include "common/status.h"
#include "strata/strata.h"
#include "tool_main.h"

namespace strata::tools {

// One rank's GPU, its stream and the device buffers it allocated (freed with it). Every call
// that can fail returns its CUDA error as a message naming the call.
class PerfDevice {
 public:
  virtual ~PerfDevice() = default;

  // "GPU 0 of 2 (NVIDIA H100 80GB HBM3)".
  virtual std::string describe() const = 0;
  // nccl-tests' device field of a "# Rank" header line: "%2d [%04x:%02x:%02x] %s", the
  // ordinal, PCI domain:bus:device and name ("0 [0000:06:00] NVIDIA H100 80GB HBM3").
  virtual std::string rankLineDevice() const = 0;
  // The non-blocking stream strata's calls are ordered on (a cudaStream_t).
  virtual strataStream_t stream() const = 0;

  // `bytes` of device memory, owned by this object.
  virtual StatusOr<unsigned char*> alloc(size_t bytes) = 0;
  // Host to device and back on the stream, returning once the copy is complete.
  virtual Status toDevice(void* dst, const void* src, size_t bytes) = 0;
  virtual Status toHost(void* dst, const void* src, size_t bytes) = 0;
  // cudaStreamSynchronize: every call enqueued on the stream has finished.
  virtual Status sync() = 0;
};

#ifdef STRATA_HAVE_CUDA
// Selects GPU (local rank % GPU count), the local rank read from OMPI_COMM_WORLD_LOCAL_RANK (0
// when unset), and makes its stream. When no GPU is visible, sets *noGpu and returns an error
// whose message is the CUDA reason ("no CUDA GPU visible (...)").
StatusOr<std::unique_ptr<PerfDevice>> openPerfDevice(bool* noGpu);
#endif

}  // namespace strata::tools
