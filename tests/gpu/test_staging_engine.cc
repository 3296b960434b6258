// The staged fabric, and the engine's progress thread behind a stream gate, on a real GPU.
//
// Staged fabric: over a one-member mpi fabric (MPI_COMM_SELF) every collective is a copy, so
// the result must equal the input bit for bit. Slots of 64 bytes cut a call into many chunks,
// so the three slots rotate many times and the last chunk is partial (1021 floats = 63 chunks
// of 16 and one of 13): a slot reused too early, or a chunk copied to the wrong place, shows.
//
// Engine and stream gate (as the device path uses them): a task must see what the stream did
// before it, and the stream's later work must see what the task wrote; a failed task must still
// release the stream and be reported.
#include <cuda_runtime.h>
#include <mpi.h>

#include <catch2/catch.hpp>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <iterator>
#include <cstdint>
#include <functional>
#include <memory>
#include <numeric>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/mpi_bootstrap.h"
#include "core/engine.h"
#include "fabrics/registry.h"
#include "fabrics/staged/staged_fabric.h"
#include "gpu/stream_gate.h"

namespace {

using strata::Status;
using strata::core::Engine;
using strata::fabric::Fabric;
using strata::gpu::StreamGate;

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
  // A pageable cudaMemcpy returns before its data lands (legacy stream), and the fabric's
  // streams are non-blocking, so not ordered after it: wait (the GPU run's zeros in the first
  // chunks were uploads that had not landed).
  void upload(const std::vector<T>& v) {
    REQUIRE(cudaMemcpy(p, v.data(), v.size() * sizeof(T), cudaMemcpyHostToDevice) == cudaSuccess);
    REQUIRE(cudaDeviceSynchronize() == cudaSuccess);
  }
  std::vector<T> download(size_t count) const {
    std::vector<T> v(count);
    REQUIRE(cudaMemcpy(v.data(), p, count * sizeof(T), cudaMemcpyDeviceToHost) == cudaSuccess);
    return v;
  }
};

// Each gate test runs with both ways of holding the stream (gpu/stream_gate.h): "auto" (stream
// memory operations where the device has them) and the spinning kernel.
std::string gateMode() { return GENERATE(as<std::string>{}, "auto", "kernel"); }

// A task on `engine`, gated on `stream` as the device path gates a call: it runs after the
// stream's earlier work, and the stream's later work waits for it.
Status submitGated(Engine& engine, StreamGate& gate, cudaStream_t stream, uint64_t seq,
                   std::function<Status()> task) {
  auto ticket = gate.hold(stream, seq);
  if (!ticket.isOk()) return ticket.status();
  const StreamGate::Ticket t = ticket.value();
  engine.submit([&gate, t, task](const Status& earlier) {
    Status st = earlier;
    if (st.isOk()) st = gate.waitReady(t);
    if (st.isOk()) st = task();
    gate.release(t);
    return st;
  });
  return Status::ok();
}

// got == want, reporting how many elements differ and the first (not both vectors: a failed
// comparison of a million elements would take minutes to print).
void checkSame(const std::vector<float>& got, const std::vector<float>& want) {
  REQUIRE(got.size() == want.size());
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < got.size(); ++i) {
    if (got[i] != want[i] && bad++ == 0) first = i;
  }
  INFO(bad << " of " << got.size() << " elements differ; first at " << first << ": "
            << (bad ? got[first] : 0.0f) << " instead of " << (bad ? want[first] : 0.0f));
  CHECK(bad == 0);
}

std::vector<float> values(size_t n, float base) {
  std::vector<float> v(n);
  for (size_t i = 0; i < n; ++i) v[i] = base + static_cast<float>(i);
  return v;
}

// A staged fabric over a one-member mpi fabric (MPI_COMM_SELF), its work on `stream`, cut
// into slots of `slotBytes` (0: the default).
struct StagedOverSelf {
  std::unique_ptr<strata::boot::Bootstrap> self;
  std::unique_ptr<Fabric> host, staged;
  StagedOverSelf(cudaStream_t stream, size_t slotBytes) {
    auto boot = strata::boot::MpiBootstrap::borrow(MPI_COMM_SELF);
    REQUIRE(boot.isOk());
    self = boot.take();
    auto h = strata::fabric::createFabric("mpi", *self);
    REQUIRE(h.isOk());
    host = h.take();
    strata::fabric::FabricOptions options;
    options.stream = stream;
    if (slotBytes > 0) options.stagingBytes = slotBytes;
    auto f = strata::fabric::createStagedFabric(*self, host.get(), options);
    REQUIRE(f.isOk());
    staged = f.take();
  }
};

}  // namespace

TEST_CASE("staged fabric: many chunks and a partial last one, in and out of place") {
  Stream stream;
  StagedOverSelf t(stream.s, 64);
  Fabric& f = *t.staged;
  CHECK(std::string(f.name()) == "mpi-staged");
  for (size_t n : {size_t{1}, size_t{16}, size_t{1021}, size_t{1} << 20}) {
    CAPTURE(n);
    const std::vector<float> in = values(n, 3.0f);
    DeviceArray<float> src(n), dst(n);
    src.upload(in);
    REQUIRE(f.allReduce(src.p, dst.p, n, strataFloat32, strataSum).isOk());
    checkSame(dst.download(n), in);
    REQUIRE(f.allReduce(src.p, src.p, n, strataFloat32, strataMax).isOk());
    checkSame(src.download(n), in);
    const size_t counts[1] = {n}, displs[1] = {0};
    REQUIRE(f.reduceScatter(src.p, dst.p, counts, displs, strataFloat32, strataSum).isOk());
    checkSame(dst.download(n), in);
    DeviceArray<float> gathered(n);
    REQUIRE(f.allGather(src.p, gathered.p, counts, displs, strataFloat32).isOk());
    checkSame(gathered.download(n), in);
  }
}

TEST_CASE("staged fabric: rooted operations and exchange over one member copy through slots") {
  Stream stream;
  StagedOverSelf t(stream.s, 64);
  Fabric& f = *t.staged;
  for (size_t n : {size_t{1}, size_t{1021}, size_t{1} << 20}) {
    CAPTURE(n);
    const std::vector<float> in = values(n, 7.0f);
    DeviceArray<float> src(n), dst(n);
    src.upload(in);
    REQUIRE(f.broadcast(src.p, dst.p, n, strataFloat32, 0).isOk());
    checkSame(dst.download(n), in);
    DeviceArray<float> red(n);
    REQUIRE(f.reduce(src.p, red.p, n, strataFloat32, strataSum, 0).isOk());
    checkSame(red.download(n), in);
    const size_t counts[1] = {n}, displs[1] = {0};
    DeviceArray<float> sc(n), ga(n);
    REQUIRE(f.scatter(src.p, sc.p, counts, displs, strataFloat32, 0).isOk());
    checkSame(sc.download(n), in);
    REQUIRE(f.gather(src.p, ga.p, counts, displs, strataFloat32, 0).isOk());
    checkSame(ga.download(n), in);
    DeviceArray<float> got(n);
    const strata::fabric::PeerOp ops[] = {{true, src.p, n, strataFloat32, 0},
                                          {false, got.p, n, strataFloat32, 0}};
    REQUIRE(f.exchange(ops, 2).isOk());
    checkSame(got.download(n), in);
  }
}

// On a GPU, cudaFreeHost waits for the whole device, the stream gate's spinning kernel included,
// which waits for the very call that frees: the runner must never free pinned memory while it
// holds a gate (gpu/stream_gate.h). Exchanges of growing size make the staged fabric's bounce
// buffer grow, behind a gate on the caller's stream, as device send/recv run.
TEST_CASE("staged fabric: exchanges behind a stream gate grow the bounce buffer without a wait "
          "for the whole device") {
  Stream user, comm;
  StagedOverSelf t(comm.s, 0);
  Fabric& f = *t.staged;
  Engine engine(/*threaded=*/true);
  auto gate = StreamGate::create(gateMode(), comm.s);
  REQUIRE(gate.isOk());
  const size_t sizes[] = {16, 1021, (size_t{1} << 16) + 3};
  std::vector<std::unique_ptr<DeviceArray<float>>> srcs, dsts;
  for (size_t n : sizes) {
    srcs.push_back(std::make_unique<DeviceArray<float>>(n));
    dsts.push_back(std::make_unique<DeviceArray<float>>(n));
    srcs.back()->upload(values(n, static_cast<float>(n)));
  }
  uint64_t seq = 0;
  for (size_t i = 0; i < std::size(sizes); ++i) {
    Fabric* fp = &f;
    DeviceArray<float>* src = srcs[i].get();
    DeviceArray<float>* dst = dsts[i].get();
    const size_t n = sizes[i];
    REQUIRE(submitGated(engine, *gate.value(), user.s, ++seq, [fp, src, dst, n] {
              const strata::fabric::PeerOp ops[] = {{true, src->p, n, strataFloat32, 0},
                                                    {false, dst->p, n, strataFloat32, 0}};
              return fp->exchange(ops, 2);
            }).isOk());
  }
  // Poll, not cudaStreamSynchronize: a runner stuck in a device-wide wait never opens the gate,
  // and nothing could end the test but its ctest timeout.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (cudaStreamQuery(user.s) == cudaErrorNotReady && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  if (cudaStreamQuery(user.s) == cudaErrorNotReady) {
    std::fprintf(stderr,
                 "FAILED: the gated stream never opened in 30 s: the runner is stuck in a wait "
                 "for the whole device (a cudaFreeHost or cudaFree while the gate's kernel "
                 "spins)\n");
    std::_Exit(1);  // the engine's thread cannot be joined
  }
  CHECK(engine.drain().isOk());
  for (size_t i = 0; i < std::size(sizes); ++i) {
    INFO("exchange of " << sizes[i]);
    checkSame(dsts[i]->download(sizes[i]), values(sizes[i], static_cast<float>(sizes[i])));
  }
}

TEST_CASE("progress thread: a task runs after the stream's earlier work, and before its later") {
  Stream stream, comm;
  Engine engine(/*threaded=*/true);
  auto gate = StreamGate::create(gateMode(), comm.s);
  REQUIRE(gate.isOk());
  DeviceArray<int32_t> buf(1 << 20), seen(1);
  // Earlier work on the stream: fill with 1s (large, so a task that ran early would see 0s).
  REQUIRE(cudaMemsetAsync(buf.p, 0, buf.n * sizeof(int32_t), stream.s) == cudaSuccess);
  REQUIRE(cudaStreamSynchronize(stream.s) == cudaSuccess);
  REQUIRE(cudaMemsetAsync(buf.p, 1, buf.n * sizeof(int32_t), stream.s) == cudaSuccess);
  int32_t taskSaw = -1;
  // The task copies on a stream of its own, as the runner does (the communicator's), and waits
  // for it before the gate opens: a pageable cudaMemcpy to the device could still be in flight
  // when the stream's later work reads the buffer.
  Stream own;
  auto copied = [&](void* dst, const void* src, cudaMemcpyKind kind) {
    return cudaMemcpyAsync(dst, src, sizeof(int32_t), kind, own.s) == cudaSuccess &&
           cudaStreamSynchronize(own.s) == cudaSuccess;
  };
  Status submitted = submitGated(engine, *gate.value(), stream.s, 1, [&]() -> Status {
    int32_t last = 0;
    if (!copied(&last, buf.p + buf.n - 1, cudaMemcpyDeviceToHost)) {
      return strata::internalError("copy failed");
    }
    taskSaw = last;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the stream must wait for this
    const int32_t seven = 7;
    if (!copied(buf.p, &seven, cudaMemcpyHostToDevice)) return strata::internalError("copy failed");
    return Status::ok();
  });
  REQUIRE(submitted.isOk());
  // Later work on the stream: copy what the task wrote.
  REQUIRE(cudaMemcpyAsync(seen.p, buf.p, sizeof(int32_t), cudaMemcpyDeviceToDevice, stream.s) ==
          cudaSuccess);
  REQUIRE(cudaStreamSynchronize(stream.s) == cudaSuccess);
  CHECK(taskSaw == 0x01010101);
  CHECK(seen.download(1)[0] == 7);
  CHECK(engine.drain().isOk());
}

TEST_CASE("progress thread: a failed task releases the stream and is reported after") {
  Stream stream, comm;
  Engine engine(/*threaded=*/true);
  auto gate = StreamGate::create(gateMode(), comm.s);
  REQUIRE(gate.isOk());
  REQUIRE(submitGated(engine, *gate.value(), stream.s, 1, [] {
            return strata::systemError("injected");
          }).isOk());
  REQUIRE(cudaStreamSynchronize(stream.s) == cudaSuccess);  // must not wait for ever
  const Status drained = engine.drain();
  CHECK(!drained.isOk());
  CHECK(drained.message().find("injected") != std::string::npos);
  // A later task gets the error instead of running, and still releases its stream.
  bool ran = false;
  REQUIRE(submitGated(engine, *gate.value(), stream.s, 2, [&] {
            ran = true;
            return Status::ok();
          }).isOk());
  REQUIRE(cudaStreamSynchronize(stream.s) == cudaSuccess);
  CHECK(!engine.drain().isOk());
  CHECK(!ran);
  CHECK(!engine.error().isOk());
}

TEST_CASE("stream gate: auto holds streams with stream memory operations where they work, else "
          "with the kernel, and says why") {
  Stream comm;
  auto memops = StreamGate::create("memops", comm.s);
  auto automatic = StreamGate::create("auto", comm.s);
  auto kernel = StreamGate::create("kernel", comm.s);
  REQUIRE(automatic.isOk());
  REQUIRE(kernel.isOk());
  CHECK(kernel.value()->mode() == StreamGate::Mode::kKernel);
  if (memops.isOk()) {
    CHECK(memops.value()->mode() == StreamGate::Mode::kMemOps);
    CHECK(automatic.value()->mode() == StreamGate::Mode::kMemOps);
    CHECK(automatic.value()->describe().find("cuStreamWaitValue32") != std::string::npos);
  } else {
    INFO(memops.status().message());
    CHECK(memops.status().message().find("STRATA_GPU_GATE=memops") != std::string::npos);
    CHECK(automatic.value()->mode() == StreamGate::Mode::kKernel);
    CHECK(automatic.value()->describe().find("no stream memory operations") != std::string::npos);
  }
}
