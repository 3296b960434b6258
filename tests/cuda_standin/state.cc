// The stand-in's configuration, its errors and its kernels' loading (runtime.h, standin.h).
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <set>
#include <thread>

#include "runtime.h"
#include "standin.h"

namespace cuda_standin {
namespace {

// A whole decimal number up to `max`; false for anything else (empty, signs, spaces, units).
bool parseCount(const char* text, uint64_t max, uint64_t* out) {
  if (text == nullptr || *text == '\0') return false;
  uint64_t v = 0;
  for (const char* p = text; *p != '\0'; ++p) {
    if (*p < '0' || *p > '9') return false;
    const uint64_t digit = static_cast<uint64_t>(*p - '0');
    if (v > (max - digit) / 10) return false;
    v = v * 10 + digit;
  }
  *out = v;
  return true;
}

Config readConfig() {
  Config c;
  if (const char* d = std::getenv("CUDA_STANDIN_DELAY_US")) {
    if (!parseCount(d, 10000000, &c.maxDelayUs)) {
      c.initError = std::string("CUDA_STANDIN_DELAY_US='") + d +
                    "' is not a whole number of microseconds from 0 to 10000000";
    }
  }
  if (const char* s = std::getenv("CUDA_STANDIN_SEED")) {
    if (!parseCount(s, UINT64_MAX, &c.seed)) {
      c.initError = std::string("CUDA_STANDIN_SEED='") + s + "' is not a whole number";
    }
  } else {
    c.seed = static_cast<uint64_t>(
                 std::chrono::steady_clock::now().time_since_epoch().count()) ^
             (static_cast<uint64_t>(getpid()) << 32);
  }
  if (const char* m = std::getenv("CUDA_MODULE_LOADING")) {
    const std::string mode = m;
    if (mode == "EAGER") {
      c.lazyLoading = false;
    } else if (mode != "LAZY" && mode != "DEFAULT") {
      c.initError = "CUDA_MODULE_LOADING='" + mode + "' is not LAZY, EAGER or DEFAULT";
    }
  }
  if (const char* m = std::getenv("CUDA_STANDIN_MEMOPS")) {
    const std::string mode = m;
    if (mode == "0") {
      c.memOps = MemOps::kAbsent;
    } else if (mode == "unsupported") {
      c.memOps = MemOps::kUnsupported;
    } else if (mode != "1") {
      c.initError = "CUDA_STANDIN_MEMOPS='" + mode + "' is not 1, 0 or unsupported";
    }
  }
  if (c.initError.empty() && c.maxDelayUs > 0) {
    std::fprintf(stderr,
                 "cuda stand-in: queued operations wait up to %llu us at random; seed %llu "
                 "(CUDA_STANDIN_SEED=%llu repeats the draws)\n",
                 static_cast<unsigned long long>(c.maxDelayUs),
                 static_cast<unsigned long long>(c.seed),
                 static_cast<unsigned long long>(c.seed));
  }
  return c;
}

}  // namespace

const Config& config() {
  static const Config* c = new Config(readConfig());  // never freed: stream threads outlive exit
  return *c;
}

cudaError_t& lastError() {
  thread_local cudaError_t err = cudaSuccess;
  return err;
}

namespace {

// The names of the codes graph capture returns, which api_device.cc's table (cudaGetErrorName)
// does not know yet.
const char* errorName(cudaError_t err) {
  switch (err) {
    case cudaErrorIllegalState:
      return "cudaErrorIllegalState";
    case cudaErrorStreamCaptureUnsupported:
      return "cudaErrorStreamCaptureUnsupported";
    case cudaErrorStreamCaptureInvalidated:
      return "cudaErrorStreamCaptureInvalidated";
    case cudaErrorStreamCaptureMerge:
      return "cudaErrorStreamCaptureMerge";
    case cudaErrorStreamCaptureUnmatched:
      return "cudaErrorStreamCaptureUnmatched";
    case cudaErrorStreamCaptureUnjoined:
      return "cudaErrorStreamCaptureUnjoined";
    case cudaErrorStreamCaptureIsolation:
      return "cudaErrorStreamCaptureIsolation";
    case cudaErrorStreamCaptureImplicit:
      return "cudaErrorStreamCaptureImplicit";
    case cudaErrorCapturedEvent:
      return "cudaErrorCapturedEvent";
    case cudaErrorStreamCaptureWrongThread:
      return "cudaErrorStreamCaptureWrongThread";
    default:
      return cudaGetErrorName(err);
  }
}

}  // namespace

cudaError_t fail(cudaError_t err, const char* call, const std::string& why) {
  lastError() = err;
  std::fprintf(stderr, "cuda stand-in: %s: %s (%s)\n", call, why.c_str(), errorName(err));
  return err;
}

cudaError_t initCheck(const char* call) {
  const Config& c = config();
  if (c.initError.empty()) return cudaSuccess;
  return fail(cudaErrorInitializationError, call, c.initError);
}

std::atomic<int>& runningKernels() {
  static std::atomic<int> n{0};
  return n;
}

namespace {

std::mutex gLoadMutex;
std::set<const Kernel*> gLoaded;

// Every Kernel object; a pointer elsewhere is no kernel to cudaFuncGetAttributes. Leaked: kernels
// are static objects that may register before, and be used after, this file's statics live.
std::set<const Kernel*>& kernels() {
  static auto* known = new std::set<const Kernel*>();
  return *known;
}

// Lazy loading: a kernel's first use loads it, and loading waits until no kernel runs (what
// made strata's first 2-rank average deadlock on a GPU: gpu/kernels.h, preloadKernels).
void load(const Kernel& k, const char* who) {
  if (!config().lazyLoading) return;
  std::lock_guard<std::mutex> lock(gLoadMutex);
  if (gLoaded.count(&k) != 0) return;
  const auto start = std::chrono::steady_clock::now();
  auto warned = start;
  while (runningKernels().load() > 0) {
    std::this_thread::sleep_for(std::chrono::microseconds(100));
    const auto now = std::chrono::steady_clock::now();
    if (now - warned >= std::chrono::seconds(10)) {
      warned = now;
      std::fprintf(stderr,
                   "cuda stand-in: %s: loading kernel %s has waited %lld s for the %d running "
                   "kernel(s) to finish (lazy loading; CUDA_MODULE_LOADING=LAZY)\n",
                   who, k.name,
                   static_cast<long long>(
                       std::chrono::duration_cast<std::chrono::seconds>(now - start).count()),
                   runningKernels().load());
    }
  }
  gLoaded.insert(&k);
}

}  // namespace

Kernel::Kernel(const char* kernelName) : name(kernelName) {
  std::lock_guard<std::mutex> lock(gLoadMutex);
  kernels().insert(this);
}

cudaError_t launch(const Kernel& kernel, cudaStream_t stream, std::string what,
                   std::function<void()> body) {
  if (cudaError_t e = initCheck("kernel launch"); e != cudaSuccess) return e;
  StreamRef s = streamOf(stream, "kernel launch");
  if (!s) return lastError();
  load(kernel, "kernel launch");
  Op op;
  op.what = std::move(what);
  op.kernel = true;
  op.body = std::move(body);
  return submit(s, std::move(op), "kernel launch");
}

}  // namespace cuda_standin

using cuda_standin::Kernel;

// cudaFuncGetAttributes: `func` must be a stand-in kernel (its Kernel's address); it is loaded.
cudaError_t cudaFuncGetAttributes(cudaFuncAttributes* attr, const void* func) {
  if (cudaError_t e = cuda_standin::initCheck("cudaFuncGetAttributes"); e != cudaSuccess) return e;
  if (attr == nullptr || func == nullptr) {
    return cuda_standin::fail(cudaErrorInvalidValue, "cudaFuncGetAttributes",
                              "attr or func is NULL");
  }
  const Kernel* kernel = nullptr;
  {
    std::lock_guard<std::mutex> lock(cuda_standin::gLoadMutex);
    if (cuda_standin::kernels().count(static_cast<const Kernel*>(func)) != 0)
      kernel = static_cast<const Kernel*>(func);
  }
  if (kernel == nullptr) {
    return cuda_standin::fail(cudaErrorInvalidDeviceFunction, "cudaFuncGetAttributes",
                              "not a kernel of the stand-in");
  }
  cuda_standin::load(*kernel, "cudaFuncGetAttributes");
  *attr = cudaFuncAttributes{};
  attr->maxThreadsPerBlock = 1024;
  attr->numRegs = 32;
  attr->binaryVersion = 90;
  attr->ptxVersion = 90;
  return cudaSuccess;
}
