// strata-kernels --device: gpu::reduceMany over 2 sources on GPU 0 against cudaMemcpyAsync
// device to device, size by size, timed with CUDA events on one stream.
//
// Each row: every kernel is warmed up (first-launch costs are not timed), then calibrated to
// repeat enough calls per run that a run lasts kMinRunMs (event resolution is about 0.5 us and
// a small kernel takes a few), then timed over `iters` rounds in which the kernels take turns;
// the median per call is printed. Small sizes therefore show launch overhead, as they do in a
// collective.
#include "kernels_device.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <functional>
#include <nlohmann/json.hpp>
#include <stdexcept>
#include <string>
#include <utility>

#include "common/datatype.h"
#include "gpu/kernels.h"
#include "tool_cli.h"

namespace strata::tools {
namespace {

constexpr int kWarmupCalls = 5;
constexpr float kMinRunMs = 1.0f;
constexpr int kMaxInner = 1 << 14;

void check(cudaError_t err, const std::string& what) {
  if (err != cudaSuccess) throw std::runtime_error(what + ": " + cudaGetErrorString(err));
}

struct DeviceMemory {
  explicit DeviceMemory(size_t bytes) {
    check(cudaMalloc(&p, bytes), "cudaMalloc of " + human(bytes));
  }
  ~DeviceMemory() { cudaFree(p); }
  DeviceMemory(const DeviceMemory&) = delete;
  DeviceMemory& operator=(const DeviceMemory&) = delete;
  void* p = nullptr;
};

struct Event {
  Event() { check(cudaEventCreate(&e), "cudaEventCreate"); }
  ~Event() { cudaEventDestroy(e); }
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;
  cudaEvent_t e = nullptr;
};

struct Stream {
  Stream() { check(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking), "cudaStreamCreate"); }
  ~Stream() { cudaStreamDestroy(s); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t s = nullptr;
};

// A kernel under test: one call (enqueued on the stream), and the bytes it moves.
struct Timed {
  Timed(std::function<void()> c, double bytes) : call(std::move(c)), bytesMoved(bytes) {}
  std::function<void()> call;
  double bytesMoved;
  int inner = 1;                // calls per timed run
  std::vector<double> seconds;  // per call, one entry per round
};

class Timer {
 public:
  explicit Timer(cudaStream_t s) : s_(s) {}

  // Seconds for t.inner calls, between two events on the stream.
  double run(Timed& t) {
    check(cudaEventRecord(start_.e, s_), "cudaEventRecord");
    for (int r = 0; r < t.inner; ++r) t.call();
    check(cudaEventRecord(stop_.e, s_), "cudaEventRecord");
    check(cudaEventSynchronize(stop_.e), "a timed kernel");
    float ms = 0;
    check(cudaEventElapsedTime(&ms, start_.e, stop_.e), "cudaEventElapsedTime");
    return ms / 1e3;
  }

  // GB/s per kernel: warm-up, calibration, then the median over `iters` rounds.
  std::vector<double> measure(std::vector<Timed>& kernels, int iters) {
    for (Timed& t : kernels) {
      for (int i = 0; i < kWarmupCalls; ++i) t.call();
    }
    check(cudaStreamSynchronize(s_), "warm-up");
    for (Timed& t : kernels) {
      while (run(t) * 1e3 < kMinRunMs && t.inner < kMaxInner) t.inner *= 2;
    }
    for (int i = 0; i < iters; ++i) {
      for (Timed& t : kernels) t.seconds.push_back(run(t) / t.inner);
    }
    std::vector<double> out;
    for (Timed& t : kernels) {
      std::vector<double>& v = t.seconds;
      std::nth_element(v.begin(), v.begin() + static_cast<long>(v.size() / 2), v.end());
      out.push_back(t.bytesMoved / std::max(v[v.size() / 2], 1e-12) / 1e9);
    }
    return out;
  }

 private:
  cudaStream_t s_;
  Event start_, stop_;
};

struct Row {
  size_t bytes = 0;
  double copyGBps = 0, reduceGBps = 0;
};

void printHeader(const cudaDeviceProp& p, int iters) {
  std::printf("# strata-kernels --device: gpu::reduceMany on GPU 0, 2 sources, dst separate\n");
  std::printf("# device: %s, compute capability %d.%d, %d SMs, %s\n", p.name, p.major, p.minor,
              p.multiProcessorCount, human(p.totalGlobalMem).c_str());
  std::printf(
      "# median of %d rounds after %d warm-up calls, timed with CUDA events on one stream,\n"
      "# the kernels of a row taking turns\n"
      "# GB/s = bytes moved / time / 1e9, with S = the size of one buffer:\n"
      "#   copy = cudaMemcpyAsync device to device 2S (read + write);\n"
      "#   k=2 = gpu::reduceMany over 2 sources 3S (2 read, dst written)\n"
      "# %%cpy: reduceMany's GB/s over the copy's at the same size\n",
      iters, kWarmupCalls);
}

void printTable(strataDataType_t type, strataRedOp_t op, const std::vector<Row>& rows) {
  std::printf("\n# %s %s\n%9s %8s |%7s %5s\n", dataTypeName(type), redOpName(op), "size", "copy",
              "k=2", "%cpy");
  if (rows.empty()) std::printf("# no size from -b to -e holds a whole element\n");
  for (const Row& r : rows) {
    const int pct = r.copyGBps > 0 ? static_cast<int>(100 * r.reduceGBps / r.copyGBps + 0.5) : 0;
    std::printf("%9s %8.2f |%7.2f %4d%%\n", human(r.bytes).c_str(), r.copyGBps, r.reduceGBps, pct);
  }
  std::fflush(stdout);
}

}  // namespace

int runDevice(const DeviceSweep& sweep) {
  int devices = 0;
  const cudaError_t err = cudaGetDeviceCount(&devices);
  if (err != cudaSuccess || devices == 0) {
    std::fprintf(stderr, "strata-kernels: --device: no CUDA GPU visible (%s)\n",
                 err != cudaSuccess ? cudaGetErrorString(err) : "cudaGetDeviceCount returned 0");
    return kNoGpuExit;
  }
  check(cudaSetDevice(0), "cudaSetDevice(0)");
  cudaDeviceProp prop{};
  check(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  const size_t maxBytes = sweep.sizes.back();
  size_t freeBytes = 0, totalBytes = 0;
  check(cudaMemGetInfo(&freeBytes, &totalBytes), "cudaMemGetInfo");
  if (3 * maxBytes > freeBytes / 10 * 9) {
    throw UsageError("3 buffers of " + human(maxBytes) + " need more than 90% of " +
                     "GPU 0's free memory (" + human(freeBytes) + "); lower -e");
  }
  DeviceMemory dst(maxBytes), a(maxBytes), b(maxBytes);
  // 0x3c in every byte is a small normal number in every floating type (fp16 1.06, bf16 and
  // float 0.0115), so no op meets a subnormal or NaN, and a product stays finite: dst is
  // rewritten from the same sources by every call.
  check(cudaMemset(a.p, 0x3c, maxBytes), "cudaMemset");
  check(cudaMemset(b.p, 0x3c, maxBytes), "cudaMemset");
  check(cudaMemset(dst.p, 0, maxBytes), "cudaMemset");
  // cudaMemset returns before it runs, on the legacy stream, which the timed (non-blocking)
  // stream does not wait for.
  check(cudaDeviceSynchronize(), "cudaDeviceSynchronize after cudaMemset");
  Stream stream;
  Timer timer(stream.s);
  printHeader(prop, sweep.iters);

  nlohmann::json results = nlohmann::json::array();
  const void* srcs[2] = {a.p, b.p};
  for (strataDataType_t type : sweep.types) {
    const size_t ts = dataTypeSize(type);
    for (strataRedOp_t op : sweep.ops) {
      std::vector<Row> rows;
      for (size_t bytes : sweep.sizes) {
        const size_t n = bytes / ts;
        if (n == 0) continue;
        const double size = static_cast<double>(n * ts);
        std::vector<Timed> kernels;
        kernels.emplace_back(
            [&] {
              check(cudaMemcpyAsync(dst.p, a.p, n * ts, cudaMemcpyDeviceToDevice, stream.s),
                    "cudaMemcpyAsync");
            },
            2 * size);
        kernels.emplace_back(
            [&] {
              const Status st = gpu::reduceMany(dst.p, srcs, 2, n, type, op, stream.s);
              if (!st.isOk()) throw std::runtime_error(st.message());
            },
            3 * size);
        const std::vector<double> g = timer.measure(kernels, sweep.iters);
        rows.push_back({n * ts, g[0], g[1]});
        results.push_back({{"type", dataTypeName(type)},
                           {"op", redOpName(op)},
                           {"bytes", n * ts},
                           {"copy_gbps", g[0]},
                           {"reduce_many_gbps", g[1]}});
      }
      printTable(type, op, rows);
    }
  }
  if (!sweep.json.empty()) {
    nlohmann::json doc = {
        {"tool", "strata-kernels"},
        {"mode", "device"},
        {"device",
         {{"name", prop.name},
          {"compute_capability", std::to_string(prop.major) + "." + std::to_string(prop.minor)},
          {"sms", prop.multiProcessorCount},
          {"memory_bytes", prop.totalGlobalMem}}},
        {"iters", sweep.iters},
        {"warmup_calls", kWarmupCalls},
        {"sources", 2},
        {"bytes_moved", {{"copy", "2S"}, {"reduce_many", "3S"}}},
        {"results", results}};
    std::ofstream out(sweep.json);
    out << doc.dump(2) << "\n";
    if (!out) throw std::runtime_error("cannot write " + sweep.json);
  }
  return 0;
}

}  // namespace strata::tools
