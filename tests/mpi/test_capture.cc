// CUDA graph capture of strata's device calls (docs/gpu.md, "CUDA graphs"): what NCCL allows,
// strataAllReduce and its kin made while a stream captures, replayed many times.
//
//   --expect capture  every call here is stream-ordered on this layout (one rank, or ranks with a
//                     GPU each on one host: nccl): the captured calls replay 100 times with fresh
//                     inputs each time and every result is checked;
//   --expect refuse   a call has a host stage here (ranks sharing a GPU, or hosts joined by MPI
//                     or UCX): capturing it is refused with strataInvalidUsage naming the stage,
//                     before anything is enqueued, so the capture stays valid and the
//                     communicator usable.
// Either way: a communicator's first device call is refused during capture (its device side
// cannot be made then); a call of a new shape is captured where its stages are stream-ordered
// (the device fabrics exist); calls outside the capture still work, before and after.
// Exits 77 on every rank where no GPU is visible.
#include <cuda_runtime.h>
#include <mpi.h>

#include <cstdio>
#include <string>
#include <vector>

#include "mpi/mpi_harness.h"
#include "strata/strata_mpi.h"

namespace {

using strata_test::Harness;

constexpr size_t kCount = 1021;  // elements of each call; a prime
constexpr int kReplays = 100;

bool ok(cudaError_t e) { return e == cudaSuccess; }

struct DeviceBuf {
  float* p = nullptr;
  size_t n = 0;
  explicit DeviceBuf(size_t count) : n(count) {
    if (!ok(cudaMalloc(&p, n * sizeof(float)))) p = nullptr;
  }
  ~DeviceBuf() { (void)cudaFree(p); }
  DeviceBuf(const DeviceBuf&) = delete;
  DeviceBuf& operator=(const DeviceBuf&) = delete;
};

// The calls under test, each on `s`: an allreduce sum out of place, an average in place (the
// average's division is a kernel of strata's), a reduce-scatter, an all-gather, a broadcast.
struct Calls {
  DeviceBuf src, sum, avg, rs, ag, bc;
  int size;
  Calls(int ranks)
      : src(kCount * ranks + 2), sum(kCount), avg(kCount), rs(kCount), ag(kCount * ranks),
        bc(kCount), size(ranks) {}
  bool allocated() const {
    return src.p && sum.p && avg.p && rs.p && ag.p && bc.p;
  }
  // The inputs of round k, up on `s` (not captured: before a launch).
  bool upload(int rank, int k, cudaStream_t s, std::vector<float>& host) {
    host.assign(src.n, 0);  // every element: the new shape below reads kCount + 2 of them
    for (size_t i = 0; i < host.size(); ++i) host[i] = input(rank, k, i);
    return ok(cudaMemcpyAsync(src.p, host.data(), host.size() * sizeof(float),
                              cudaMemcpyHostToDevice, s)) &&
           ok(cudaStreamSynchronize(s));
  }
  static float input(int rank, int k, size_t i) {
    return static_cast<float>(rank + k % 5 + static_cast<int>(i % 7));
  }
  // The calls; the average's input is copied into place first (in the capture, too).
  strataResult_t issue(strataComm_t comm, cudaStream_t s) {
    const auto st = reinterpret_cast<strataStream_t>(s);
    strataResult_t rc = strataAllReduce(src.p, sum.p, kCount, strataFloat32, strataSum, comm, st);
    if (rc != strataSuccess) return rc;
    if (!ok(cudaMemcpyAsync(avg.p, src.p, kCount * sizeof(float), cudaMemcpyDeviceToDevice, s))) {
      return strataUnhandledCudaError;
    }
    rc = strataAllReduce(avg.p, avg.p, kCount, strataFloat32, strataAvg, comm, st);
    if (rc != strataSuccess) return rc;
    rc = strataReduceScatter(src.p, rs.p, kCount, strataFloat32, strataMax, comm, st);
    if (rc != strataSuccess) return rc;
    rc = strataAllGather(src.p, ag.p, kCount, strataFloat32, comm, st);
    if (rc != strataSuccess) return rc;
    return strataBroadcast(src.p, bc.p, kCount, strataFloat32, size - 1, comm, st);
  }
  // Checks round k's results; `what` names the round.
  void check(Harness& h, int rank, int k, cudaStream_t s, const std::string& what) {
    std::vector<float> got(kCount * size);
    auto down = [&](const DeviceBuf& b, size_t n) {
      got.assign(n, -1);
      return ok(cudaMemcpyAsync(got.data(), b.p, n * sizeof(float), cudaMemcpyDeviceToHost, s)) &&
             ok(cudaStreamSynchronize(s));
    };
    auto verify = [&](const char* name, const DeviceBuf& b, size_t n, auto want) {
      if (!h.expect(down(b, n), what + ": " + name + " download")) return;
      size_t bad = 0, first = 0;
      for (size_t i = 0; i < n; ++i) {
        if (got[i] != want(i) && bad++ == 0) first = i;
      }
      h.expect(bad == 0, what + ": " + name + ": " + std::to_string(bad) + " wrong, first at " +
                             std::to_string(first) + " (" + std::to_string(got[first]) +
                             ", want " + std::to_string(want(first)) + ")");
    };
    const float ranksSum = static_cast<float>(size * (size - 1) / 2);
    verify("allreduce sum", sum, kCount, [&](size_t i) {
      return static_cast<float>(size) * input(0, k, i) + ranksSum;
    });
    verify("allreduce avg", avg, kCount, [&](size_t i) {
      return (static_cast<float>(size) * input(0, k, i) + ranksSum) / static_cast<float>(size);
    });
    verify("reduce-scatter max", rs, kCount,
           [&](size_t i) { return input(size - 1, k, static_cast<size_t>(rank) * kCount + i); });
    verify("all-gather", ag, kCount * size,
           [&](size_t i) { return input(static_cast<int>(i / kCount), k, i % kCount); });
    verify("broadcast", bc, kCount, [&](size_t i) { return input(size - 1, k, i); });
    (void)rank;
  }
};

}  // namespace

int main(int argc, char** argv) {
  Harness h(argc, argv, "CUDA graph capture of strata's device calls");
  std::string expect;
  h.app().add_option("--expect", expect, "capture or refuse")->required()->check(
      CLI::IsMember({"capture", "refuse"}));
  if (!h.start(argc, argv)) return h.exitCode();
  int gpus = 0;
  if (!ok(cudaGetDeviceCount(&gpus)) || gpus == 0) {
    if (h.rank() == 0) std::printf("SKIPPED: no GPU visible\n");
    MPI_Finalize();
    return 77;
  }
  const int rank = h.rank(), size = h.size();
  strataComm_t comm = nullptr;
  h.step("strataCommInitMPI");
  if (!h.expectSuccess(strataCommInitMPI(&comm, MPI_COMM_WORLD), "strataCommInitMPI")) {
    return h.finish();
  }
  cudaStream_t s = nullptr;
  h.expect(ok(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)), "cudaStreamCreate");
  Calls calls(size);
  h.expect(calls.allocated(), "cudaMalloc");
  std::vector<float> host;

  h.step("warm-up: every call once, outside any capture");
  h.expect(calls.upload(rank, 0, s, host), "upload");
  h.expectSuccess(calls.issue(comm, s), "warm-up calls", comm);
  calls.check(h, rank, 0, s, "warm-up");

  h.step("a communicator's first device call during capture is refused");
  {
    strataComm_t fresh = nullptr;
    h.expectSuccess(strataCommInitMPI(&fresh, MPI_COMM_WORLD), "a second communicator");
    h.expect(ok(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal)), "cudaStreamBeginCapture");
    const strataResult_t rc = strataAllReduce(calls.src.p, calls.sum.p, kCount, strataFloat32,
                                              strataSum, fresh, reinterpret_cast<strataStream_t>(s));
    const std::string why = strataGetLastError(fresh);
    cudaGraph_t g = nullptr;
    h.expect(ok(cudaStreamEndCapture(s, &g)), "the capture ends cleanly after a refused call");
    if (g != nullptr) (void)cudaGraphDestroy(g);
    h.expect(rc == strataInvalidUsage, "a first device call during capture: strataInvalidUsage, "
                                       "got " + std::to_string(rc) + ": " + why);
    h.expect(why.find("first call on device memory") != std::string::npos &&
                 why.find("before capturing") != std::string::npos,
             "the refusal says why and what to do: " + why);
    // The refused call left the communicator usable.
    h.expect(calls.upload(rank, 4, s, host), "upload");
    h.expectSuccess(strataAllReduce(calls.src.p, calls.sum.p, kCount, strataFloat32, strataSum,
                                    fresh, reinterpret_cast<strataStream_t>(s)),
                    "the second communicator's first call, outside the capture", fresh);
    h.expect(ok(cudaStreamSynchronize(s)), "cudaStreamSynchronize");
    h.expectSuccess(strataCommDestroy(fresh), "strataCommDestroy");
  }

  h.step("a call of a shape not seen before, during capture");
  {
    // Its setup needs no new device fabric (the warm-up made them), so it may be captured
    // where every stage is stream-ordered.
    DeviceBuf other(kCount + 2);
    h.expect(ok(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal)), "cudaStreamBeginCapture");
    const strataResult_t rc = strataAllReduce(calls.src.p, other.p, kCount + 2, strataFloat32,
                                              strataMax, comm, reinterpret_cast<strataStream_t>(s));
    const std::string why = strataGetLastError(comm);
    cudaGraph_t g = nullptr;
    h.expect(ok(cudaStreamEndCapture(s, &g)), "cudaStreamEndCapture");
    if (expect == "refuse") {
      h.expect(rc == strataInvalidUsage, "refused: " + std::to_string(rc) + ": " + why);
    } else if (h.expectSuccess(rc, "a new shape captured", comm)) {
      cudaGraphExec_t exec = nullptr;
      h.expect(calls.upload(rank, 6, s, host), "upload");
      if (h.expect(g != nullptr && ok(cudaGraphInstantiate(&exec, g, 0)), "instantiate")) {
        h.expect(ok(cudaGraphLaunch(exec, s)), "cudaGraphLaunch");
        std::vector<float> got(kCount + 2, -1);
        h.expect(ok(cudaMemcpyAsync(got.data(), other.p, got.size() * sizeof(float),
                                    cudaMemcpyDeviceToHost, s)) &&
                     ok(cudaStreamSynchronize(s)),
                 "download");
        size_t bad = 0;
        for (size_t i = 0; i < got.size(); ++i) {
          bad += got[i] != Calls::input(size - 1, 6, i) ? 1 : 0;
        }
        h.expect(bad == 0, "the new shape's max: " + std::to_string(bad) + " wrong");
        (void)cudaGraphExecDestroy(exec);
      }
    }
    if (g != nullptr) (void)cudaGraphDestroy(g);
  }

  h.step("capture");
  h.expect(ok(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal)), "cudaStreamBeginCapture");
  const strataResult_t captured = calls.issue(comm, s);
  const std::string why = strataGetLastError(comm);
  cudaGraph_t graph = nullptr;
  h.expect(ok(cudaStreamEndCapture(s, &graph)), "cudaStreamEndCapture");
  if (expect == "refuse") {
    h.expect(captured == strataInvalidUsage,
             "a call with a host stage during capture: strataInvalidUsage, got " +
                 std::to_string(captured) + ": " + why);
    h.expect(why.find("captures a CUDA graph") != std::string::npos &&
                 why.find("fabric ") != std::string::npos,
             "the refusal names the host stage and its fabric: " + why);
  } else {
    h.expectSuccess(captured, "the captured calls", comm);
    cudaGraphExec_t exec = nullptr;
    h.step("replays");
    if (h.expect(graph != nullptr && ok(cudaGraphInstantiate(&exec, graph, 0)),
                 "cudaGraphInstantiate")) {
      for (int k = 1; k <= kReplays; ++k) {
        h.expect(calls.upload(rank, k, s, host), "upload");
        h.expect(ok(cudaGraphLaunch(exec, s)), "cudaGraphLaunch");
        // Every round checked at the start and end, every tenth between (checks download).
        if (k <= 2 || k % 10 == 0 || k == kReplays) {
          calls.check(h, rank, k, s, "replay " + std::to_string(k));
        }
      }
      h.expect(ok(cudaStreamSynchronize(s)), "the replays finish");
      (void)cudaGraphExecDestroy(exec);
    }
  }
  if (graph != nullptr) (void)cudaGraphDestroy(graph);

  h.step("the communicator still works outside the capture");
  h.expect(calls.upload(rank, 7, s, host), "upload");
  h.expectSuccess(calls.issue(comm, s), "calls after the capture", comm);
  calls.check(h, rank, 7, s, "after the capture");

  h.expectSuccess(strataCommDestroy(comm), "strataCommDestroy");
  (void)cudaStreamDestroy(s);
  return h.finish();
}
