// What strata's stream-native device calls assume of CUDA graph capture and of the stream memory
// operations (cuStreamWaitValue32, cuStreamWriteValue32), checked where they run: on a GPU
// (CUDA's own behaviour) and against the CPU stand-in (its model of it, tests/cuda_standin), so
// that the stand-in cannot drift from CUDA unnoticed. Only CUDA's documented behaviour is
// checked on both; what only the stand-in does (CUDA_STANDIN_MEMOPS, refusing graph memory
// nodes) is checked under STRATA_CUDA_STANDIN only:
//   - captured work does not run; a graph runs it again at every launch;
//   - a fork to a second stream through events joins the capture, and must be joined back;
//   - a wait for an event from outside the capture, synchronising a capturing stream, and
//     potentially unsafe calls (cudaThreadExchangeStreamCaptureMode decides which thread may)
//     fail and invalidate the capture;
//   - a stream memory wait holds its stream until the value is there; a write stores it; both
//     can be captured; a held wait is no kernel, so lazy loading does not wait for it.
#include <cuda.h>
#include <cuda_runtime.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <thread>
#include <vector>

#include "common/datatype.h"
#include "gpu/kernels.h"

namespace {

#define REQUIRE_CUDA(call) REQUIRE((call) == cudaSuccess)

using Clock = std::chrono::steady_clock;

bool drainsWithin(cudaStream_t stream, std::chrono::milliseconds limit) {
  const auto deadline = Clock::now() + limit;
  cudaError_t q = cudaStreamQuery(stream);
  while (q == cudaErrorNotReady && Clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    q = cudaStreamQuery(stream);
  }
  return q == cudaSuccess;
}

struct Buffer {
  void* p = nullptr;
  explicit Buffer(size_t bytes) { REQUIRE_CUDA(cudaMalloc(&p, bytes)); }
  ~Buffer() { (void)cudaFree(p); }
  unsigned char* bytes() const { return static_cast<unsigned char*>(p); }
};

struct Pinned {
  void* p = nullptr;
  explicit Pinned(size_t bytes) { REQUIRE_CUDA(cudaHostAlloc(&p, bytes, cudaHostAllocMapped)); }
  ~Pinned() { (void)cudaFreeHost(p); }
  unsigned char* bytes() const { return static_cast<unsigned char*>(p); }
};

struct Stream {
  cudaStream_t s = nullptr;
  explicit Stream(unsigned flags = cudaStreamNonBlocking) {
    REQUIRE_CUDA(cudaStreamCreateWithFlags(&s, flags));
  }
  // A failed check may leave a capture open: end it, so that no later case runs in capture.
  ~Stream() {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(s, &status) == cudaSuccess && status != cudaStreamCaptureStatusNone) {
      cudaGraph_t g = nullptr;
      if (cudaStreamEndCapture(s, &g) == cudaSuccess) cudaGraphDestroy(g);
    }
    (void)cudaStreamSynchronize(s);
    (void)cudaStreamDestroy(s);
    (void)cudaGetLastError();
  }
  operator cudaStream_t() const { return s; }  // NOLINT: used as the handle it is
};

struct Event {
  cudaEvent_t e = nullptr;
  Event() { REQUIRE_CUDA(cudaEventCreateWithFlags(&e, cudaEventDisableTiming)); }
  ~Event() { (void)cudaEventDestroy(e); }
  operator cudaEvent_t() const { return e; }  // NOLINT
};

// Sets the calling thread's capture mode for a scope (cudaThreadExchangeStreamCaptureMode's
// push-pop use).
struct ThreadMode {
  cudaStreamCaptureMode previous;
  explicit ThreadMode(cudaStreamCaptureMode m) : previous(m) {
    REQUIRE_CUDA(cudaThreadExchangeStreamCaptureMode(&previous));
  }
  ~ThreadMode() { (void)cudaThreadExchangeStreamCaptureMode(&previous); }
};

cudaStreamCaptureStatus captureStatus(cudaStream_t s) {
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  REQUIRE_CUDA(cudaStreamIsCapturing(s, &status));
  return status;
}

unsigned char readByte(const void* device, size_t offset = 0) {
  unsigned char b = 0;
  REQUIRE_CUDA(cudaMemcpy(&b, static_cast<const unsigned char*>(device) + offset, 1,
                          cudaMemcpyDeviceToHost));
  return b;
}

// A capture that must fail: EndCapture's code, and no graph.
cudaError_t endFailed(cudaStream_t s) {
  cudaGraph_t g = reinterpret_cast<cudaGraph_t>(&g);  // not null, so that null is seen
  const cudaError_t e = cudaStreamEndCapture(s, &g);
  CHECK(g == nullptr);
  if (e == cudaSuccess && g != nullptr) cudaGraphDestroy(g);
  (void)cudaGetLastError();
  return e;
}

using WaitValue32 = CUresult (*)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);
using WriteValue32 = CUresult (*)(CUstream, CUdeviceptr, cuuint32_t, unsigned int);

template <typename Fn>
Fn driverFunction(const char* symbol, cudaDriverEntryPointQueryResult expected) {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSuccess;
  REQUIRE_CUDA(cudaGetDriverEntryPointByVersion(symbol, &fn, 12000, cudaEnableDefault, &status));
  REQUIRE(status == expected);
  REQUIRE((fn != nullptr) == (expected == cudaDriverEntryPointSuccess));
  return reinterpret_cast<Fn>(fn);
}

// A 32-bit word in mapped pinned memory: the host stores through `host`, stream memory
// operations reach it through `device`.
struct MappedWord {
  Pinned mem{sizeof(uint32_t)};
  volatile uint32_t* host = static_cast<volatile uint32_t*>(mem.p);
  CUdeviceptr device = 0;
  explicit MappedWord(uint32_t v) {
    set(v);
    void* d = nullptr;
    REQUIRE_CUDA(cudaHostGetDevicePointer(&d, mem.p, 0));
    device = static_cast<CUdeviceptr>(reinterpret_cast<uintptr_t>(d));
  }
  void set(uint32_t v) {
    *host = v;
    std::atomic_thread_fence(std::memory_order_seq_cst);
  }
};

}  // namespace

TEST_CASE("CUDA graphs: captured copies and sets run only at launch, again at every launch",
          "[gpu][capture]") {
  constexpr size_t kBytes = 4096, kHalf = kBytes / 2;
  Stream s;
  Buffer in(kBytes), out(kBytes);
  Pinned host(kBytes), got(kBytes);
  REQUIRE_CUDA(cudaMemsetAsync(out.p, 0, kBytes, s));
  REQUIRE_CUDA(cudaStreamSynchronize(s));

  CHECK(captureStatus(s) == cudaStreamCaptureStatusNone);
  REQUIRE_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  CHECK(captureStatus(s) == cudaStreamCaptureStatusActive);
  REQUIRE_CUDA(cudaMemcpyAsync(out.p, in.p, kBytes, cudaMemcpyDeviceToDevice, s));
  REQUIRE_CUDA(cudaMemsetAsync(out.bytes() + kHalf, 0x5A, kHalf, s));
  cudaGraph_t graph = nullptr;
  REQUIRE_CUDA(cudaStreamEndCapture(s, &graph));
  REQUIRE(graph != nullptr);
  CHECK(captureStatus(s) == cudaStreamCaptureStatusNone);
  CHECK(readByte(out.p) == 0);  // captured, not run
  CHECK(readByte(out.p, kHalf) == 0);

  cudaGraphExec_t exec = nullptr;
  REQUIRE_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  REQUIRE_CUDA(cudaGraphDestroy(graph));  // the executable graph keeps what it runs
  int wrong = 0;
  for (int launch = 0; launch < 100; ++launch) {
    for (size_t i = 0; i < kBytes; ++i) host.bytes()[i] = static_cast<unsigned char>(launch + i);
    REQUIRE_CUDA(cudaMemcpyAsync(in.p, host.p, kBytes, cudaMemcpyHostToDevice, s));
    REQUIRE_CUDA(cudaGraphLaunch(exec, s));
    REQUIRE_CUDA(cudaMemcpyAsync(got.p, out.p, kBytes, cudaMemcpyDeviceToHost, s));
    REQUIRE_CUDA(cudaStreamSynchronize(s));
    for (size_t i = 0; i < kBytes; ++i) {
      const unsigned char want = i < kHalf ? static_cast<unsigned char>(launch + i) : 0x5A;
      if (got.bytes()[i] != want && wrong++ == 0) {
        FAIL_CHECK("launch " << launch << ", byte " << i << ": " << int(got.bytes()[i]) << ", not "
                             << int(want));
      }
    }
  }
  CHECK(wrong == 0);
  REQUIRE_CUDA(cudaGraphExecDestroy(exec));
}

TEST_CASE("CUDA graphs: a fork to another stream through events joins the capture",
          "[gpu][capture]") {
  Stream origin, side;
  Event forked, joined;
  Buffer a(256), b(256), c(256);
  for (void* p : {a.p, b.p, c.p}) REQUIRE_CUDA(cudaMemsetAsync(p, 0, 256, origin));
  REQUIRE_CUDA(cudaStreamSynchronize(origin));

  REQUIRE_CUDA(cudaStreamBeginCapture(origin, cudaStreamCaptureModeGlobal));
  REQUIRE_CUDA(cudaMemsetAsync(a.p, 1, 256, origin));
  REQUIRE_CUDA(cudaEventRecord(forked, origin));
  REQUIRE_CUDA(cudaStreamWaitEvent(side, forked, 0));
  CHECK(captureStatus(side) == cudaStreamCaptureStatusActive);                   // joined
  REQUIRE_CUDA(cudaMemcpyAsync(b.p, a.p, 256, cudaMemcpyDeviceToDevice, side));  // after a = 1
  REQUIRE_CUDA(cudaMemsetAsync(c.p, 3, 256, origin));
  REQUIRE_CUDA(cudaEventRecord(joined, side));
  REQUIRE_CUDA(cudaStreamWaitEvent(origin, joined, 0));
  cudaGraph_t graph = nullptr;
  REQUIRE_CUDA(cudaStreamEndCapture(origin, &graph));
  CHECK(captureStatus(side) == cudaStreamCaptureStatusNone);
  CHECK(readByte(b.p) == 0);

  cudaGraphExec_t exec = nullptr;
  REQUIRE_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  REQUIRE_CUDA(cudaGraphLaunch(exec, origin));
  REQUIRE_CUDA(cudaStreamSynchronize(origin));
  CHECK(readByte(a.p, 255) == 1);
  CHECK(readByte(b.p, 255) == 1);
  CHECK(readByte(c.p, 255) == 3);
  REQUIRE_CUDA(cudaGraphExecDestroy(exec));
  REQUIRE_CUDA(cudaGraphDestroy(graph));

  SECTION("a fork not joined back fails the capture") {
    REQUIRE_CUDA(cudaStreamBeginCapture(origin, cudaStreamCaptureModeGlobal));
    REQUIRE_CUDA(cudaEventRecord(forked, origin));
    REQUIRE_CUDA(cudaStreamWaitEvent(side, forked, 0));
    REQUIRE_CUDA(cudaMemsetAsync(b.p, 4, 256, side));  // nothing on origin waits for it
    CHECK(endFailed(origin) == cudaErrorStreamCaptureUnjoined);
    CHECK(captureStatus(origin) == cudaStreamCaptureStatusNone);
    CHECK(captureStatus(side) == cudaStreamCaptureStatusNone);
    REQUIRE_CUDA(cudaStreamSynchronize(side));
    CHECK(readByte(b.p) == 1);  // the memset was captured, never run
  }
}

TEST_CASE("CUDA graphs: invalid operations fail and invalidate the capture", "[gpu][capture]") {
  Stream s, other;
  Buffer buf(256);
  REQUIRE_CUDA(cudaMemsetAsync(buf.p, 0, 256, s));
  REQUIRE_CUDA(cudaStreamSynchronize(s));

  SECTION("waiting for an event recorded outside the capture") {
    Event outside;
    REQUIRE_CUDA(cudaEventRecord(outside, other));
    REQUIRE_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    CHECK(cudaStreamWaitEvent(s, outside, 0) == cudaErrorStreamCaptureIsolation);
    CHECK(captureStatus(s) == cudaStreamCaptureStatusInvalidated);
    CHECK(endFailed(s) == cudaErrorStreamCaptureInvalidated);
  }
  SECTION("synchronising the capturing stream") {
    REQUIRE_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    REQUIRE_CUDA(cudaMemsetAsync(buf.p, 7, 256, s));
    CHECK(cudaStreamSynchronize(s) == cudaErrorStreamCaptureUnsupported);
    CHECK(captureStatus(s) == cudaStreamCaptureStatusInvalidated);
    CHECK(cudaMemsetAsync(buf.p, 8, 256, s) == cudaErrorStreamCaptureInvalidated);
    CHECK(endFailed(s) == cudaErrorStreamCaptureInvalidated);
    // The stream works again, and the captured memsets never ran.
    CHECK(readByte(buf.p) == 0);
    REQUIRE_CUDA(cudaMemsetAsync(buf.p, 9, 256, s));
    REQUIRE_CUDA(cudaStreamSynchronize(s));
    CHECK(readByte(buf.p) == 9);
  }
  SECTION("querying the capturing stream") {
    REQUIRE_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
    CHECK(cudaStreamQuery(s) == cudaErrorStreamCaptureUnsupported);
    CHECK(endFailed(s) == cudaErrorStreamCaptureInvalidated);
  }
  SECTION("querying an event recorded in the capture (a potentially unsafe call)") {
    Event captured;
    REQUIRE_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    REQUIRE_CUDA(cudaEventRecord(captured, s));
    CHECK(cudaEventQuery(captured) == cudaErrorStreamCaptureUnsupported);
    CHECK(endFailed(s) == cudaErrorStreamCaptureInvalidated);
  }
  SECTION("querying an event recorded in the capture from a relaxed thread") {
    Event captured;
    REQUIRE_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    REQUIRE_CUDA(cudaEventRecord(captured, s));
    {
      ThreadMode relaxed(cudaStreamCaptureModeRelaxed);
      CHECK(cudaEventQuery(captured) == cudaErrorCapturedEvent);
    }
    const cudaError_t end = endFailed(s);
#ifdef STRATA_CUDA_STANDIN
    CHECK(end == cudaErrorStreamCaptureInvalidated);  // CUDA leaves open whether it invalidates
#else
    CHECK((end == cudaErrorStreamCaptureInvalidated || end == cudaSuccess));
#endif
  }
  SECTION("the legacy stream cannot be captured") {
    CHECK(cudaStreamBeginCapture(cudaStreamLegacy, cudaStreamCaptureModeGlobal) ==
          cudaErrorStreamCaptureUnsupported);
    CHECK(captureStatus(cudaStreamLegacy) == cudaStreamCaptureStatusNone);
  }
  SECTION("asking the legacy stream while a blocking stream captures") {
    Stream blocking(cudaStreamDefault);
    REQUIRE_CUDA(cudaStreamBeginCapture(blocking, cudaStreamCaptureModeGlobal));
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    CHECK(cudaStreamIsCapturing(cudaStreamLegacy, &status) == cudaErrorStreamCaptureImplicit);
    REQUIRE_CUDA(cudaMemsetAsync(buf.p, 5, 256, blocking));
    cudaGraph_t graph = nullptr;
    CHECK(cudaStreamEndCapture(blocking, &graph) == cudaSuccess);  // not invalidated by asking
    if (graph != nullptr) cudaGraphDestroy(graph);
  }
  (void)cudaGetLastError();
}

TEST_CASE("CUDA graphs: potentially unsafe calls and the thread's capture mode", "[gpu][capture]") {
  Stream s;
  Buffer buf(256);
  void* p = nullptr;

  SECTION("refused in global mode") {
    REQUIRE_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    CHECK(cudaMalloc(&p, 256) == cudaErrorStreamCaptureUnsupported);
    CHECK(endFailed(s) == cudaErrorStreamCaptureInvalidated);
  }
  SECTION("allowed to a thread in relaxed mode, and the capture stays valid") {
    REQUIRE_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    {
      ThreadMode relaxed(cudaStreamCaptureModeRelaxed);
      CHECK(relaxed.previous == cudaStreamCaptureModeGlobal);  // the default
      CHECK(cudaMalloc(&p, 256) == cudaSuccess);
    }
    REQUIRE_CUDA(cudaMemsetAsync(buf.p, 2, 256, s));
    cudaGraph_t graph = nullptr;
    CHECK(cudaStreamEndCapture(s, &graph) == cudaSuccess);
    if (graph != nullptr) cudaGraphDestroy(graph);
    if (p != nullptr) CHECK(cudaFree(p) == cudaSuccess);
  }
  SECTION("allowed during a relaxed capture") {
    REQUIRE_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeRelaxed));
    CHECK(cudaMalloc(&p, 256) == cudaSuccess);
    cudaGraph_t graph = nullptr;
    CHECK(cudaStreamEndCapture(s, &graph) == cudaSuccess);
    if (graph != nullptr) cudaGraphDestroy(graph);
    if (p != nullptr) CHECK(cudaFree(p) == cudaSuccess);
  }
  SECTION("another thread's global capture: thread-local mode ignores it, global does not") {
    std::atomic<int> phase{0};
    cudaError_t begun = cudaErrorUnknown, ended = cudaErrorUnknown;
    std::thread capturer([&] {
      begun = cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal);
      phase = 1;
      while (phase.load() != 2) std::this_thread::sleep_for(std::chrono::milliseconds(1));
      cudaGraph_t g = nullptr;
      ended = cudaStreamEndCapture(s, &g);
      if (g != nullptr) cudaGraphDestroy(g);
      phase = 3;
    });
    while (phase.load() != 1) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    cudaError_t threadLocal = cudaErrorUnknown, global = cudaErrorUnknown;
    {
      ThreadMode local(cudaStreamCaptureModeThreadLocal);
      threadLocal = cudaMalloc(&p, 256);
    }
    void* q = nullptr;
    global = cudaMalloc(&q, 256);
    phase = 2;
    capturer.join();
    CHECK(begun == cudaSuccess);
    CHECK(threadLocal == cudaSuccess);
    CHECK(global == cudaErrorStreamCaptureUnsupported);
#ifdef STRATA_CUDA_STANDIN
    CHECK(ended == cudaErrorStreamCaptureInvalidated);  // CUDA leaves open whether it invalidates
#endif
    if (p != nullptr) CHECK(cudaFree(p) == cudaSuccess);
    if (q != nullptr) cudaFree(q);
  }
#ifdef STRATA_CUDA_STANDIN
  SECTION("stream-ordered allocation in a capture (the stand-in has no graph memory nodes)") {
    REQUIRE_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    CHECK(cudaMallocAsync(&p, 256, s) == cudaErrorStreamCaptureUnsupported);
    CHECK(endFailed(s) == cudaErrorStreamCaptureInvalidated);
  }
#endif
  (void)cudaGetLastError();
}

TEST_CASE("CUDA graphs: each capture has an id of its own", "[gpu][capture]") {
  Stream s;
  unsigned long long ids[2] = {0, 0};
  for (unsigned long long& id : ids) {
    REQUIRE_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    REQUIRE_CUDA(cudaStreamGetCaptureInfo(s, &status, &id));
    CHECK(status == cudaStreamCaptureStatusActive);
    cudaGraph_t graph = nullptr;
    REQUIRE_CUDA(cudaStreamEndCapture(s, &graph));
    REQUIRE_CUDA(cudaGraphDestroy(graph));
  }
  CHECK(ids[0] != 0);
  CHECK(ids[0] != ids[1]);
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusActive;
  REQUIRE_CUDA(cudaStreamGetCaptureInfo(s, &status));
  CHECK(status == cudaStreamCaptureStatusNone);
}

TEST_CASE("stream memory operations: a wait holds its stream until the value is there",
          "[gpu][memops]") {
  auto wait = driverFunction<WaitValue32>("cuStreamWaitValue32", cudaDriverEntryPointSuccess);
  Stream gated, reader;
  Buffer buf(256);
  Pinned seen(256);
  MappedWord word(3);
  REQUIRE_CUDA(cudaMemsetAsync(buf.p, 0, 256, gated));
  REQUIRE_CUDA(cudaStreamSynchronize(gated));

  REQUIRE(wait(gated, word.device, 5, CU_STREAM_WAIT_VALUE_GEQ) == CUDA_SUCCESS);
  REQUIRE_CUDA(cudaMemsetAsync(buf.p, 7, 256, gated));
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  REQUIRE_CUDA(cudaMemcpyAsync(seen.p, buf.p, 256, cudaMemcpyDeviceToHost, reader));
  REQUIRE_CUDA(cudaStreamSynchronize(reader));
  const bool heldBefore = cudaStreamQuery(gated) == cudaErrorNotReady;
  const unsigned char before = seen.bytes()[0];
  word.set(4);  // 4 >= 5 does not hold
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  const bool heldAt4 = cudaStreamQuery(gated) == cudaErrorNotReady;
  word.set(5);
  const bool drained = drainsWithin(gated, std::chrono::seconds(10));
  CHECK(heldBefore);
  CHECK(before == 0);  // the memset behind the wait had not run
  CHECK(heldAt4);
  CHECK(drained);
  CHECK(readByte(buf.p, 255) == 7);

  // Each condition: a value that does not satisfy it holds the stream, one that does releases it.
  struct Case {
    uint32_t start, value;
    unsigned flags;
    uint32_t release;
  };
  const Case cases[] = {
      {0xFFFFFFF0u, 0x10u, CU_STREAM_WAIT_VALUE_GEQ, 0x10u},  // cyclic: 0xFFFFFFF0 is "before"
      {10u, 9u, CU_STREAM_WAIT_VALUE_EQ, 9u},
      {0x3u, 0x4u, CU_STREAM_WAIT_VALUE_AND, 0x7u},
      {1u, 0xFFFFFFFEu, CU_STREAM_WAIT_VALUE_NOR, 0u},  // ~(1 | v) == 0; ~(0 | v) == 1
  };
  for (const Case& c : cases) {
    INFO("flags " << c.flags << ", value " << c.value << ", from " << c.start);
    word.set(c.start);
    REQUIRE(wait(gated, word.device, c.value, c.flags) == CUDA_SUCCESS);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    const bool held = cudaStreamQuery(gated) == cudaErrorNotReady;
    word.set(c.release);
    CHECK(held);
    CHECK(drainsWithin(gated, std::chrono::seconds(10)));
  }
  word.set(0x10u);  // cyclic GEQ: 0x10 is at or after 0xFFFFFFF0, so this one passes at once
  REQUIRE(wait(gated, word.device, 0xFFFFFFF0u, CU_STREAM_WAIT_VALUE_GEQ) == CUDA_SUCCESS);
  CHECK(drainsWithin(gated, std::chrono::seconds(10)));
}

TEST_CASE("stream memory operations: a write stores the value after the stream's earlier work",
          "[gpu][memops]") {
  auto wait = driverFunction<WaitValue32>("cuStreamWaitValue32", cudaDriverEntryPointSuccess);
  auto write = driverFunction<WriteValue32>("cuStreamWriteValue32", cudaDriverEntryPointSuccess);
  Stream producer, consumer;
  Buffer src(256), dst(256);
  MappedWord word(0);
  REQUIRE_CUDA(cudaMemsetAsync(dst.p, 0, 256, consumer));
  REQUIRE_CUDA(cudaStreamSynchronize(consumer));

  // The consumer copies once the producer's write says its memset is done.
  REQUIRE(wait(consumer, word.device, 1, CU_STREAM_WAIT_VALUE_EQ) == CUDA_SUCCESS);
  REQUIRE_CUDA(cudaMemcpyAsync(dst.p, src.p, 256, cudaMemcpyDeviceToDevice, consumer));
  REQUIRE_CUDA(cudaMemsetAsync(src.p, 6, 256, producer));
  REQUIRE(write(producer, word.device, 1, CU_STREAM_WRITE_VALUE_DEFAULT) == CUDA_SUCCESS);
  CHECK(drainsWithin(consumer, std::chrono::seconds(10)));
  REQUIRE_CUDA(cudaStreamSynchronize(producer));
  CHECK(*word.host == 1);
  CHECK(readByte(dst.p, 255) == 6);

  // Not a symbol of the driver's: no function, and no error.
  (void)driverFunction<void*>("cuNoSuchFunction", cudaDriverEntryPointSymbolNotFound);
}

TEST_CASE("stream memory operations: captured waits and writes run at every launch",
          "[gpu][memops][capture]") {
  auto wait = driverFunction<WaitValue32>("cuStreamWaitValue32", cudaDriverEntryPointSuccess);
  auto write = driverFunction<WriteValue32>("cuStreamWriteValue32", cudaDriverEntryPointSuccess);
  Stream s;
  MappedWord gate(0), done(0);
  REQUIRE_CUDA(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
  REQUIRE(wait(s, gate.device, 1, CU_STREAM_WAIT_VALUE_GEQ) == CUDA_SUCCESS);
  REQUIRE(write(s, done.device, 42, CU_STREAM_WRITE_VALUE_DEFAULT) == CUDA_SUCCESS);
  cudaGraph_t graph = nullptr;
  REQUIRE_CUDA(cudaStreamEndCapture(s, &graph));
  CHECK(*done.host == 0);  // captured, not run
  cudaGraphExec_t exec = nullptr;
  REQUIRE_CUDA(cudaGraphInstantiate(&exec, graph, 0));
  for (int launch = 0; launch < 3; ++launch) {
    INFO("launch " << launch);
    gate.set(0);
    done.set(0);
    REQUIRE_CUDA(cudaGraphLaunch(exec, s));
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    const bool held = cudaStreamQuery(s) == cudaErrorNotReady;
    const uint32_t early = *done.host;
    gate.set(1);
    REQUIRE_CUDA(cudaStreamSynchronize(s));
    CHECK(held);
    CHECK(early == 0);
    CHECK(*done.host == 42);
  }
  REQUIRE_CUDA(cudaGraphExecDestroy(exec));
  REQUIRE_CUDA(cudaGraphDestroy(graph));
}

// The stream gate's premise: a held wait is no kernel, so a kernel's first launch, which lazy
// loading (CUDA_MODULE_LOADING=LAZY, pinned by CMakeLists.txt) makes wait for the kernels
// running, is not held by it (the spinning waitCounter kernel would hold it: gpu/kernels.h,
// preloadKernels). ctest runs each case in a process of its own, so nothing is loaded before.
TEST_CASE("stream memory operations: a held wait does not hold a kernel's lazy loading",
          "[gpu][memops]") {
  auto wait = driverFunction<WaitValue32>("cuStreamWaitValue32", cudaDriverEntryPointSuccess);
  Stream gated, work;
  Buffer buf(64);
  MappedWord gate(0);
  REQUIRE_CUDA(cudaMemsetAsync(buf.p, 0, 64, work));
  REQUIRE(wait(gated, gate.device, 1, CU_STREAM_WAIT_VALUE_GEQ) == CUDA_SUCCESS);
  std::atomic<bool> done{false}, failed{false};
  std::thread worker([&] {
    if (!strata::gpu::scaleDown(buf.p, 3, strataFloat32, 2, work).isOk()) failed = true;
    if (cudaStreamSynchronize(work) != cudaSuccess) failed = true;
    done = true;
  });
  const auto deadline = Clock::now() + std::chrono::seconds(20);
  while (!done && Clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(5));
  const bool finishedWhileGated = done;
  gate.set(1);
  worker.join();
  CHECK(finishedWhileGated);
  CHECK_FALSE(failed);
  REQUIRE_CUDA(cudaStreamSynchronize(gated));
}

#ifdef STRATA_CUDA_STANDIN
// CUDA_STANDIN_MEMOPS: hidden cases, run by their own entries with the variable set
// (CMakeLists.txt), each checking that the variable did what it says.
TEST_CASE("stand-in: CUDA_STANDIN_MEMOPS=0 hides the stream memory operations",
          "[.standin-memops-absent]") {
  (void)driverFunction<void*>("cuStreamWaitValue32", cudaDriverEntryPointSymbolNotFound);
  (void)driverFunction<void*>("cuStreamWriteValue32", cudaDriverEntryPointSymbolNotFound);
  void* fn = reinterpret_cast<void*>(&fn);
  cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSuccess;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  REQUIRE_CUDA(cudaGetDriverEntryPoint("cuStreamWaitValue32", &fn, cudaEnableDefault, &status));
#pragma GCC diagnostic pop
  CHECK(fn == nullptr);
  CHECK(status == cudaDriverEntryPointSymbolNotFound);
}

TEST_CASE("stand-in: CUDA_STANDIN_MEMOPS=unsupported makes them refuse",
          "[.standin-memops-unsupported]") {
  auto wait = driverFunction<WaitValue32>("cuStreamWaitValue32", cudaDriverEntryPointSuccess);
  auto write = driverFunction<WriteValue32>("cuStreamWriteValue32", cudaDriverEntryPointSuccess);
  Stream s;
  MappedWord word(0);
  CHECK(wait(s, word.device, 1, CU_STREAM_WAIT_VALUE_GEQ) == CUDA_ERROR_NOT_SUPPORTED);
  CHECK(write(s, word.device, 7, CU_STREAM_WRITE_VALUE_DEFAULT) == CUDA_ERROR_NOT_SUPPORTED);
  word.set(1);  // releases the wait, had it been queued after all
  REQUIRE_CUDA(cudaStreamSynchronize(s));
  CHECK(*word.host == 1);  // and no write of 7 landed
}

TEST_CASE("stand-in: the deprecated cudaGetDriverEntryPoint finds the same functions",
          "[gpu][memops]") {
  void* fn = nullptr;
  cudaDriverEntryPointQueryResult status = cudaDriverEntryPointSymbolNotFound;
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  REQUIRE_CUDA(cudaGetDriverEntryPoint("cuStreamWriteValue32", &fn, cudaEnableDefault, &status));
#pragma GCC diagnostic pop
  CHECK(status == cudaDriverEntryPointSuccess);
  CHECK(fn == reinterpret_cast<void*>(driverFunction<WriteValue32>("cuStreamWriteValue32",
                                                                   cudaDriverEntryPointSuccess)));
}
#endif
