// The GPU side of a communicator (core/comm.h: Comm::device), made at its first device call by
// core/device_side.cc, and the executor that runs device programs on it. Only built with CUDA;
// shared by device_side.cc (setup) and device_submit.cc (the routes).
//
// Threads: the issuing thread sets up (scratch, fabrics, the gate) and enqueues stream-ordered
// work; the progress thread runs host stages on `stream`. The fields the runner reads (stream,
// scratch, options, gate) are set by setup while nothing runs (setup quiesces first).
#pragma once

#include <cuda_runtime.h>

#include <memory>
#include <set>
#include <tuple>
#include <vector>

#include "common/cuda_check.h"
#include "core/executor.h"
#include "fabrics/device_choice.h"
#include "gpu/kernels.h"
#include "gpu/stream_gate.h"

namespace strata::core {

struct DeviceState {
  int device = 0;                 // the GPU current at the first device call
  cudaStream_t stream = nullptr;  // non-blocking: host stages' copies and kernels, setup
  void* scratch = nullptr;        // device working memory (grown by setup only)
  size_t scratchBytes = 0;
  // Recorded on a call's stream after each call that used the scratch, so that the next one on
  // another stream waits for it (stream-ordered calls on different streams share the scratch).
  cudaEvent_t scratchDone = nullptr;
  bool scratchRecorded = false;          // scratchDone holds a point
  cudaStream_t scratchStream = nullptr;  // ... on this stream
  bool scratchCaptured = false;          // ... recorded while its stream was capturing
  unsigned long long scratchCapture = 0; // ... in this capture
  bool scratchInGraph = false;           // a captured call used `scratch`: never freed early
  std::vector<void*> kept;               // earlier scratch buffers a graph may still use
  fabric::FabricOptions options;         // the communicator's, with `stream`
  fabric::MemberIdentity identity;       // what this rank tells its groups when they choose
  std::unique_ptr<gpu::StreamGate> gate;  // with a threaded engine
  uint64_t gated = 0;                     // host stages gated so far
  // Calls (collective, count, type) whose groups and device fabrics exist, so that their next
  // calls set nothing up. The same on every rank: every rank issues the same calls (unlike the
  // program cache's keys, which may differ between ranks: a call in place on one rank only).
  std::set<std::tuple<int, size_t, int> > prepared;
  // Events that join a group's streams to the one it runs on (reused).
  cudaEvent_t joins[2] = {nullptr, nullptr};

  ~DeviceState() {
    gate.reset();  // the engine ran every gated call before this
    // A stream-ordered call on a caller's stream may still use the scratch: free it after.
    // (Graphs that captured calls of this communicator must not be launched after its end.)
    if (scratchRecorded && !scratchCaptured) (void)cudaStreamWaitEvent(stream, scratchDone, 0);
    if (scratch != nullptr) (void)cudaFreeAsync(scratch, stream);
    for (void* p : kept) (void)cudaFreeAsync(p, stream);
    if (scratchDone != nullptr) (void)cudaEventDestroy(scratchDone);
    for (cudaEvent_t e : joins) {
      if (e != nullptr) (void)cudaEventDestroy(e);
    }
    if (stream != nullptr) {
      (void)cudaStreamSynchronize(stream);
      (void)cudaStreamDestroy(stream);
    }
  }
};

// Device memory on one stream: `on` (a caller's stream for stream-ordered parts, the
// communicator's for host stages), each group's device fabric. A stream-ordered fabric is told
// to enqueue on `on` as it is handed out (only the issuing thread runs parts that use one:
// core/route.h).
class DeviceExecutor final : public Executor {
 public:
  DeviceExecutor(DeviceState& d, cudaStream_t on) : d_(d), on_(on) {}

  Status copy(void* dst, const void* src, size_t bytes) override {
    if (bytes == 0) return Status::ok();
    STRATA_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, on_));
    return Status::ok();
  }
  Status divide(void* buf, size_t count, strataDataType_t type, int divisor) override {
    return gpu::scaleDown(buf, count, type, divisor, on_);
  }
  StatusOr<void*> scratch(size_t bytes) override {
    // Grown by setup before the call was handed out (core/device_submit.cc: ensureScratch).
    if (bytes > d_.scratchBytes) return internalError("device scratch smaller than its program");
    return d_.scratch;
  }
  StatusOr<fabric::Fabric*> fabricOf(LevelGroup& g) override {
    if (!g.deviceFabric) return internalError("a device step on a group with no device fabric");
    if (g.deviceFabric->streamOrdered()) g.deviceFabric->useStream(on_);
    return g.deviceFabric.get();
  }

 private:
  DeviceState& d_;
  cudaStream_t on_;
};

}  // namespace strata::core
