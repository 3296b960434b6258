// The stand-in's machinery behind its CUDA API (api_*.cc): configuration, the thread's last
// error, streams and their work, and the memory it knows. Internal to libstrata_cuda_standin.so.
#pragma once

#include <cuda_runtime.h>

#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <mutex>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace cuda_standin {

// ----- configuration (read once, from the environment) ---------------------------------------
struct Config {
  uint64_t maxDelayUs = 0;  // CUDA_STANDIN_DELAY_US: 0 = no injected delay
  uint64_t seed = 0;        // CUDA_STANDIN_SEED, or drawn (and printed) when delays are on
  bool lazyLoading = true;  // CUDA_MODULE_LOADING: LAZY (the default) or EAGER
  // A malformed variable: every call fails with cudaErrorInitializationError, saying why.
  std::string initError;
};
const Config& config();

// ----- errors ---------------------------------------------------------------------------------
// Records `err` as the calling thread's last error (cudaGetLastError), prints `call: why` once
// per failure on stderr (the stand-in says what CUDA only codes), and returns it.
cudaError_t fail(cudaError_t err, const char* call, const std::string& why);
// The thread's last error; cudaGetLastError resets it.
cudaError_t& lastError();
// cudaErrorInitializationError when the configuration is malformed (printed once); else success.
cudaError_t initCheck(const char* call);

// ----- streams --------------------------------------------------------------------------------
class Stream;
using StreamRef = std::shared_ptr<Stream>;

// A position in a stream's work: reached once the stream finished its `ticket`-th operation.
struct Point {
  StreamRef stream;
  uint64_t ticket = 0;
};

struct Op {
  std::string what;          // for diagnostics: what a long wait is waiting for
  bool kernel = false;       // a running kernel (lazy loading waits until none runs)
  std::vector<Point> after;  // reached before it starts: waited events, implicit synchronisation
  std::function<void()> body;
};

// One stream: a thread that runs its operations one at a time, in the order they were queued.
// Invariants: tickets are 1, 2, ... in queue order; completed_ only grows, and an operation's
// effects are visible to every thread that sees completed_ >= its ticket (the mutex orders
// them); a retired stream runs what it holds, then its thread ends.
class Stream : public std::enable_shared_from_this<Stream> {
 public:
  static StreamRef create(unsigned flags, bool legacy);
  ~Stream();

  bool legacy() const { return legacy_; }
  bool blocking() const { return !legacy_ && (flags_ & cudaStreamNonBlocking) == 0; }
  int index() const { return index_; }

  uint64_t enqueue(Op op);  // its ticket
  uint64_t tail();          // the ticket of the last operation queued (0: none yet)
  bool reached(uint64_t ticket);
  // Blocks the calling thread until `ticket` is reached; `who` names the waiter in the warning
  // printed every 10 s of waiting (a deadlock shows what it waits for).
  void waitFor(uint64_t ticket, const char* who);
  void retire();
  std::string describe();  // "stream 3 (non-blocking), running 'what'"

 private:
  Stream(unsigned flags, bool legacy, int index);
  void run();
  void delay();

  const unsigned flags_;
  const bool legacy_;
  const int index_;
  std::mutex mutex_;
  std::condition_variable changed_;
  std::deque<Op> queue_;
  uint64_t queued_ = 0, completed_ = 0;
  std::string running_;  // the operation in progress, for describe()
  bool retired_ = false;
  std::mt19937_64 rng_;
  double delayTokensUs_ = 0;  // injected delay still allowed (see delay())
  std::chrono::steady_clock::time_point lastRefill_;
};

// The stream a handle names: 0 and cudaStreamLegacy are the legacy default stream. Null, and a
// failed `call`, for a handle that is not a live stream.
StreamRef streamOf(cudaStream_t handle, const char* call);
cudaStream_t registerStream(const StreamRef& s);
StreamRef unregisterStream(cudaStream_t handle);  // null when unknown

// Queues `op` on `s` with CUDA's implicit synchronisation added: an operation on the legacy
// stream waits for the work queued before it on every blocking stream, and one on a blocking
// stream waits for the legacy stream's. Returns the ticket.
uint64_t submit(const StreamRef& s, Op op);
// Every live stream's current tail (cudaDeviceSynchronize and the calls that imply it).
std::vector<Point> allTails();
// Waits for each point (`who` for the warnings).
void waitAll(const std::vector<Point>& points, const char* who);

// Kernels running now, over all streams (lazy loading waits for none).
std::atomic<int>& runningKernels();

// ----- memory ---------------------------------------------------------------------------------
enum class MemKind { kDevice, kPinned };

struct Region {
  MemKind kind = MemKind::kDevice;
  char* base = nullptr;     // the address the program holds
  char* access = nullptr;   // where stream work reads and writes it (base for pinned memory)
  size_t bytes = 0;         // what the program asked for
  unsigned flags = 0;       // cudaHostAlloc's
};

// Allocates device memory (filled with a pattern, as fresh memory holds no zeros by promise)
// or pinned host memory.
void* allocate(MemKind kind, size_t bytes, unsigned flags);
// Frees an allocation by its base address; false when `base` starts no allocation of `kind`.
bool release(void* base, MemKind kind);
// The allocation holding `p` (a copy); false when none does.
bool find(const void* p, Region* out);

}  // namespace cuda_standin
