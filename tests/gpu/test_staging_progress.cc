// The staged fabric and the progress queue on a real GPU.
//
// Staged fabric: over a one-member mpi fabric (MPI_COMM_SELF) every collective is a copy, so
// the result must equal the input bit for bit. Slots of 64 bytes cut a call into many chunks,
// so the three slots rotate many times and the last chunk is partial (1021 floats = 63 chunks
// of 16 and one of 13): a slot reused too early, or a chunk copied to the wrong place, shows.
//
// Progress queue: a task must see what the stream did before it, and the stream's later work
// must see what the task wrote; a failed task must still release the stream and be reported.
#include <cuda_runtime.h>
#include <mpi.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <memory>
#include <numeric>
#include <thread>
#include <vector>

#include "fabrics/fabric.h"
#include "gpu/progress.h"
#include "gpu/staged_fabric.h"

namespace {

using strata::Status;
using strata::fabric::Fabric;

struct Stream {
  cudaStream_t s = nullptr;
  Stream() { REQUIRE(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) == cudaSuccess); }
  ~Stream() { cudaStreamDestroy(s); }
};

template <typename T>
struct DeviceArray {
  T* p = nullptr;
  size_t n;
  explicit DeviceArray(size_t count) : n(count) {
    REQUIRE(cudaMalloc(&p, (n + 1) * sizeof(T)) == cudaSuccess);
  }
  ~DeviceArray() { cudaFree(p); }
  void upload(const std::vector<T>& v) {
    REQUIRE(cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice) == cudaSuccess);
  }
  std::vector<T> download(size_t count) const {
    std::vector<T> v(count);
    REQUIRE(cudaMemcpy(v.data(), p, count * sizeof(T), cudaMemcpyDeviceToHost) == cudaSuccess);
    return v;
  }
};

std::vector<float> values(size_t n, float base) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = base + static_cast<float>(i);
  return v;
}

}  // namespace

TEST_CASE("staged fabric: many chunks and a partial last one, in and out of place") {
  Stream stream;
  auto host = strata::fabric::createFabric("mpi", MPI_COMM_SELF);
  REQUIRE(host.isOk());
  auto staged = strata::gpu::createStagedFabric(host.value().get(), 64, stream.s);
  REQUIRE(staged.isOk());
  Fabric& f = *staged.value();
  CHECK(std::string(f.name()) == "mpi-staged");
  for (size_t n : {size_t{1}, size_t{16}, size_t{1021}, size_t{1} << 20}) {
    CAPTURE(n);
    const std::vector<float> in = values(n, 3.0f);
    DeviceArray<float> src(n), dst(n);
    src.upload(in);
    REQUIRE(f.allReduce(src.p, dst.p, n, strataFloat32, strataSum).isOk());
    CHECK(dst.download(n) == in);
    REQUIRE(f.allReduce(src.p, src.p, n, strataFloat32, strataMax).isOk());
    CHECK(src.download(n) == in);
    const size_t counts[1] = {n}, displs[1] = {0};
    REQUIRE(f.reduceScatter(src.p, dst.p, counts, displs, strataFloat32, strataSum).isOk());
    CHECK(dst.download(n) == in);
    DeviceArray<float> gathered(n);
    REQUIRE(f.allGather(src.p, gathered.p, counts, displs, strataFloat32).isOk());
    CHECK(gathered.download(n) == in);
  }
}

TEST_CASE("progress queue: a task runs after the stream's earlier work, and before its later") {
  Stream stream;
  auto q = strata::gpu::ProgressQueue::create(/*threaded=*/true, /*device=*/0);
  REQUIRE(q.isOk());
  DeviceArray<int32_t> buf(1 << 20), seen(1);
  // Earlier work on the stream: fill with 1s (large, so a task that ran early would see 0s).
  REQUIRE(cudaMemsetAsync(buf.p, 0, buf.n * sizeof(int32_t), stream.s) == cudaSuccess);
  REQUIRE(cudaStreamSynchronize(stream.s) == cudaSuccess);
  REQUIRE(cudaMemsetAsync(buf.p, 1, buf.n * sizeof(int32_t), stream.s) == cudaSuccess);
  int32_t taskSaw = -1;
  Status submitted = q.value()->submit(stream.s, [&]() -> Status {
    int32_t last = 0;
    if (cudaMemcpy(&last, buf.p + buf.n - 1, sizeof(last), cudaMemcpyDeviceToHost) != cudaSuccess) {
      return strata::internalError("copy failed");
    }
    taskSaw = last;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the stream must wait for this
    const int32_t seven = 7;
    if (cudaMemcpy(buf.p, &seven, sizeof(seven), cudaMemcpyHostToDevice) != cudaSuccess) {
      return strata::internalError("copy failed");
    }
    return Status::ok();
  });
  REQUIRE(submitted.isOk());
  // Later work on the stream: copy what the task wrote.
  REQUIRE(cudaMemcpyAsync(seen.p, buf.p, sizeof(int32_t), cudaMemcpyDeviceToDevice, stream.s) ==
          cudaSuccess);
  REQUIRE(cudaStreamSynchronize(stream.s) == cudaSuccess);
  CHECK(taskSaw == 0x01010101);
  CHECK(seen.download(1)[0] == 7);
  CHECK(q.value()->drain().isOk());
}

TEST_CASE("progress queue: a failed task releases the stream and is reported after") {
  Stream stream;
  auto q = strata::gpu::ProgressQueue::create(/*threaded=*/true, /*device=*/0);
  REQUIRE(q.isOk());
  REQUIRE(q.value()->submit(stream.s, [] { return strata::systemError("injected"); }).isOk());
  REQUIRE(cudaStreamSynchronize(stream.s) == cudaSuccess);  // must not wait for ever
  const Status drained = q.value()->drain();
  CHECK(!drained.isOk());
  CHECK(drained.message().find("injected") != std::string::npos);
  CHECK(!q.value()->submit(stream.s, [] { return Status::ok(); }).isOk());
  CHECK(!q.value()->error().isOk());
}

TEST_CASE("progress queue, inline: the task runs on the calling thread after the stream") {
  Stream stream;
  auto q = strata::gpu::ProgressQueue::create(/*threaded=*/false, /*device=*/0);
  REQUIRE(q.isOk());
  const auto caller = std::this_thread::get_id();
  bool sameThread = false;
  REQUIRE(q.value()->submit(stream.s, [&] {
    sameThread = std::this_thread::get_id() == caller;
    return Status::ok();
  }).isOk());
  CHECK(sameThread);
  CHECK(!q.value()->submit(stream.s, [] { return strata::systemError("inline"); }).isOk());
}
