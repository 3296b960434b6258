// gpu::preloadKernels against CUDA's lazy loading: with CUDA_MODULE_LOADING=LAZY (the default,
// and pinned for these tests in CMakeLists.txt) a kernel's first launch loads it and may wait
// for every kernel running in the context. The progress thread launches scaleDown while a
// call's waitCounter kernel spins on the user's stream, so a kernel not loaded beforehand
// deadlocks there (the first GPU run hung at the first 2-rank average). ctest runs each test
// case in a process of its own, so nothing here was loaded before this test.
#include <cuda_runtime.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <limits>
#include <thread>

#include "common/datatype.h"
#include "gpu/kernels.h"
#include "gpu/mapped_counter.h"

#define REQUIRE_CUDA(call) REQUIRE((call) == cudaSuccess)

TEST_CASE("gpu preloaded scaleDown kernels launch while a waitCounter kernel spins",
          "[gpu][kernels]") {
  REQUIRE(strata::gpu::preloadKernels().isOk());

  MappedCounter counter;
  cudaStream_t gated = nullptr, work = nullptr;
  REQUIRE_CUDA(cudaStreamCreateWithFlags(&gated, cudaStreamNonBlocking));
  REQUIRE_CUDA(cudaStreamCreateWithFlags(&work, cudaStreamNonBlocking));
  void* buf = nullptr;
  REQUIRE_CUDA(cudaMalloc(&buf, 64));
  REQUIRE_CUDA(cudaMemsetAsync(buf, 0, 64, work));  // ordered before the scaleDowns on work

  // The gate: spins until the host counts to 1.
  REQUIRE(strata::gpu::waitCounter(counter.device, 1, gated).isOk());

  // What the progress thread does meanwhile: an average's division of every type, waited for.
  std::atomic<bool> done{false};
  std::atomic<bool> failed{false};
  std::thread worker([&] {
    for (int t = 0; t < static_cast<int>(strataNumTypes); ++t) {
      if (!strata::gpu::scaleDown(buf, 3, static_cast<strataDataType_t>(t), 2, work).isOk())
        failed = true;
    }
    if (cudaStreamSynchronize(work) != cudaSuccess) failed = true;
    done = true;
  });
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(20);
  while (!done && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const bool finishedWhileGated = done;
  // Release the gate for good: it also ends the deadlock of a kernel that was not preloaded.
  counter.set(std::numeric_limits<unsigned long long>::max());
  worker.join();
  CHECK(finishedWhileGated);
  CHECK_FALSE(failed);
  REQUIRE_CUDA(cudaStreamSynchronize(gated));
  cudaFree(buf);
  cudaStreamDestroy(work);
  cudaStreamDestroy(gated);
}
