// The rule that puts a level group's device buffers on nccl, CUDA-aware MPI or staging
// (fabrics/device_choice.h).
#include <catch2/catch.hpp>
#include <vector>

#include "fabrics/device_choice.h"

using strata::fabric::chooseDeviceFabric;
using strata::fabric::DeviceChoice;
using strata::fabric::hostHash;
using strata::fabric::MemberIdentity;

namespace {

MemberIdentity member(const char* host, unsigned char gpu, int cudaAware = 0) {
  MemberIdentity m;
  m.hostHash = hostHash(host);
  m.uuid[0] = gpu;
  m.uuid[15] = static_cast<unsigned char>(gpu * 3 + 1);
  m.cudaAware = cudaAware;
  return m;
}

}  // namespace

TEST_CASE("device choice: one host, a GPU each: nccl") {
  CHECK(chooseDeviceFabric({member("a", 0), member("a", 1), member("a", 2)}, false) ==
        DeviceChoice::kNccl);
}

TEST_CASE("device choice: one member copies on its GPU") {
  CHECK(chooseDeviceFabric({member("a", 0)}, false) == DeviceChoice::kLocal);
  CHECK(chooseDeviceFabric({member("a", 0, 1)}, true) == DeviceChoice::kLocal);
}

TEST_CASE("device choice: members sharing a GPU are never put on nccl") {
  CHECK(chooseDeviceFabric({member("a", 0), member("a", 0)}, false) == DeviceChoice::kStaged);
  CHECK(chooseDeviceFabric({member("a", 0), member("a", 1), member("a", 1)}, false) ==
        DeviceChoice::kStaged);
  CHECK(chooseDeviceFabric({member("a", 0, 1), member("a", 0, 1)}, false) ==
        DeviceChoice::kCudaAwareMpi);
}

TEST_CASE("device choice: several hosts, or a level pinned to mpi, go to MPI") {
  CHECK(chooseDeviceFabric({member("a", 0), member("b", 1)}, false) == DeviceChoice::kStaged);
  CHECK(chooseDeviceFabric({member("a", 0, 1), member("b", 1, 1)}, false) ==
        DeviceChoice::kCudaAwareMpi);
  CHECK(chooseDeviceFabric({member("a", 0), member("a", 1)}, true) == DeviceChoice::kStaged);
  // CUDA-aware only when every member's MPI is.
  CHECK(chooseDeviceFabric({member("a", 0, 1), member("b", 1, 0)}, false) == DeviceChoice::kStaged);
}

TEST_CASE("device choice: host names hash apart, and alike on every rank") {
  CHECK(hostHash("node01") == hostHash("node01"));
  CHECK(hostHash("node01") != hostHash("node02"));
  CHECK(hostHash("") != hostHash("a"));
}
