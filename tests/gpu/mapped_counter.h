// A 64-bit counter in mapped pinned host memory, as gpu::waitCounter polls it: the host stores
// through `host`, the kernel reads through `device`. Starts at 0; freed with the object.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <catch2/catch.hpp>

struct MappedCounter {
  MappedCounter() {
    REQUIRE(cudaHostAlloc(reinterpret_cast<void**>(&mem), sizeof *mem, cudaHostAllocMapped) ==
            cudaSuccess);
    host = mem;
    *host = 0;
    REQUIRE(cudaHostGetDevicePointer(reinterpret_cast<void**>(&device), mem, 0) == cudaSuccess);
  }
  ~MappedCounter() { cudaFreeHost(mem); }
  MappedCounter(const MappedCounter&) = delete;
  MappedCounter& operator=(const MappedCounter&) = delete;

  // Stores v where a spinning kernel sees it.
  void set(unsigned long long v) {
    *host = v;
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }

  unsigned long long* mem = nullptr;
  volatile unsigned long long* host = nullptr;
  unsigned long long* device = nullptr;
};
