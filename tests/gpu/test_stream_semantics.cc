// What the device path and its tests assume of CUDA's streams, checked where they run: on a GPU
// (CUDA's own behaviour) and against the CPU stand-in (its model of it, tests/cuda_standin), so
// that the stand-in cannot drift from CUDA unnoticed. Each case holds the legacy default stream
// with a waitCounter kernel (the stream gate's), which only the host can release, so what may
// and may not run meanwhile is seen without any race:
//   - a non-blocking stream does not wait for the legacy stream (strata's streams are all
//     non-blocking, so the gate on a user's legacy stream does not hold them);
//   - a blocking stream does wait for it;
//   - cudaMemcpy between device buffers and cudaMemset of device memory return before they run
//     (CUDA's "API synchronization behavior": what the GPU run's four tests got wrong);
//   - an event recorded behind the held work completes only after it.
#include <cuda_runtime.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <limits>
#include <thread>

#include "gpu/kernels.h"
#include "gpu/mapped_counter.h"

namespace {

#define REQUIRE_CUDA(call) REQUIRE((call) == cudaSuccess)

using Clock = std::chrono::steady_clock;

// Polls until `stream` has run everything queued on it, for at most `limit`.
bool drainsWithin(cudaStream_t stream, std::chrono::milliseconds limit) {
  const auto deadline = Clock::now() + limit;
  cudaError_t q = cudaStreamQuery(stream);
  while (q == cudaErrorNotReady && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    q = cudaStreamQuery(stream);
  }
  return q == cudaSuccess;
}

// The legacy default stream held by a waitCounter kernel until release() (or the end of the
// case, so that a failed check never leaves the GPU spinning).
struct HeldLegacyStream {
  MappedCounter counter;
  HeldLegacyStream() { REQUIRE(strata::gpu::waitCounter(counter.device, 1, nullptr).isOk()); }
  ~HeldLegacyStream() { release(); }
  void release() { counter.set(std::numeric_limits<unsigned long long>::max()); }
};

struct Buffer {
  void* p = nullptr;
  explicit Buffer(size_t bytes) { REQUIRE_CUDA(cudaMalloc(&p, bytes)); }
  ~Buffer() { (void)cudaFree(p); }
};

}  // namespace

TEST_CASE("CUDA streams: a held legacy stream holds blocking streams, not non-blocking ones",
          "[gpu][streams]") {
  Buffer a(4096), b(4096);
  cudaStream_t nonBlocking = nullptr, blocking = nullptr;
  REQUIRE_CUDA(cudaStreamCreateWithFlags(&nonBlocking, cudaStreamNonBlocking));
  REQUIRE_CUDA(cudaStreamCreate(&blocking));
  {
    HeldLegacyStream held;
    REQUIRE_CUDA(cudaMemsetAsync(a.p, 1, 4096, nonBlocking));
    REQUIRE_CUDA(cudaMemsetAsync(b.p, 2, 4096, blocking));
    CHECK(drainsWithin(nonBlocking, std::chrono::seconds(10)));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    CHECK(cudaStreamQuery(blocking) == cudaErrorNotReady);
    CHECK(cudaStreamQuery(nullptr) == cudaErrorNotReady);
    held.release();
    CHECK(drainsWithin(blocking, std::chrono::seconds(10)));
  }
  REQUIRE_CUDA(cudaDeviceSynchronize());
  unsigned char got[2] = {0, 0};
  REQUIRE_CUDA(cudaMemcpy(&got[0], a.p, 1, cudaMemcpyDeviceToHost));
  REQUIRE_CUDA(cudaMemcpy(&got[1], b.p, 1, cudaMemcpyDeviceToHost));
  CHECK(got[0] == 1);
  CHECK(got[1] == 2);
  (void)cudaStreamDestroy(nonBlocking);
  (void)cudaStreamDestroy(blocking);
}

TEST_CASE("CUDA streams: device-to-device cudaMemcpy and cudaMemset return before they run",
          "[gpu][streams]") {
  Buffer src(4096), dst(4096);
  REQUIRE_CUDA(cudaMemset(src.p, 5, 4096));
  REQUIRE_CUDA(cudaDeviceSynchronize());
  cudaEvent_t after = nullptr;
  REQUIRE_CUDA(cudaEventCreateWithFlags(&after, cudaEventDisableTiming));
  {
    HeldLegacyStream held;
    // Both go on the legacy stream, behind the held kernel; neither may wait for it.
    const auto start = Clock::now();
    REQUIRE_CUDA(cudaMemcpy(dst.p, src.p, 4096, cudaMemcpyDeviceToDevice));
    REQUIRE_CUDA(cudaMemset(src.p, 6, 4096));
    REQUIRE_CUDA(cudaEventRecord(after, nullptr));
    CHECK(Clock::now() - start < std::chrono::seconds(5));
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    CHECK(cudaEventQuery(after) == cudaErrorNotReady);  // behind the held kernel
    held.release();
    REQUIRE_CUDA(cudaEventSynchronize(after));
  }
  unsigned char got[2] = {0, 0};
  REQUIRE_CUDA(cudaMemcpy(&got[0], dst.p, 1, cudaMemcpyDeviceToHost));
  REQUIRE_CUDA(cudaMemcpy(&got[1], src.p, 1, cudaMemcpyDeviceToHost));
  CHECK(got[0] == 5);  // the copy ran before the set, in the legacy stream's order
  CHECK(got[1] == 6);
  (void)cudaEventDestroy(after);
}
