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
// CUDA_STANDIN_MEMOPS: the stream memory operations (cuStreamWaitValue32, cuStreamWriteValue32,
// reached through cudaGetDriverEntryPoint*; memops.cc). Unset or "1": supported, as on a GPU;
// "0": the entry points report them cudaDriverEntryPointSymbolNotFound (a driver without them);
// "unsupported": they exist but return CUDA_ERROR_NOT_SUPPORTED (a device without them). So a
// caller's fallback for each case can be tested.
enum class MemOps { kSupported, kAbsent, kUnsupported };

struct Config {
  uint64_t maxDelayUs = 0;  // CUDA_STANDIN_DELAY_US: 0 = no injected delay
  uint64_t seed = 0;        // CUDA_STANDIN_SEED, or drawn (and printed) when delays are on
  bool lazyLoading = true;  // CUDA_MODULE_LOADING: LAZY (the default) or EAGER
  MemOps memOps = MemOps::kSupported;  // CUDA_STANDIN_MEMOPS (above)
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
// The same without a failure (the driver API's calls report their own errors): null when the
// handle is not a live stream or is cudaStreamPerThread.
StreamRef findStream(cudaStream_t handle);
cudaStream_t registerStream(const StreamRef& s);
StreamRef unregisterStream(cudaStream_t handle);  // null when unknown

// The one place operations are queued. Queues `ops` on `s`, one after another with nothing of
// another thread's between them, with CUDA's implicit synchronisation added to the first: an
// operation on the legacy stream waits for the work queued before it on every blocking stream,
// and one on a blocking stream waits for the legacy stream's. *ticket (when not null): the last
// one's ticket.
// While `s` is capturing (capture.cc), the operations are recorded into the capture's graph
// instead, in order, and do not run now; *ticket is then 0 (reached at once). It fails, and
// neither queues nor records, where CUDA refuses the work: on a stream of an invalidated capture
// (cudaErrorStreamCaptureInvalidated), and on the legacy stream while a blocking stream captures
// (cudaErrorStreamCaptureImplicit, which invalidates that capture).
cudaError_t submitAll(const StreamRef& s, std::vector<Op> ops, const char* call,
                      uint64_t* ticket = nullptr);
cudaError_t submit(const StreamRef& s, Op op, const char* call, uint64_t* ticket = nullptr);
// Every live stream's current tail (cudaDeviceSynchronize and the calls that imply it).
std::vector<Point> allTails();
// Waits for each point (`who` for the warnings).
void waitAll(const std::vector<Point>& points, const char* who);

// Kernels running now, over all streams (lazy loading waits for none).
std::atomic<int>& runningKernels();

// ----- graph capture (capture.cc) ------------------------------------------------------------
// A capture sequence (cudaStreamBeginCapture): the streams in it record what is submitted to
// them into its graph instead of queueing it. Its state is capture.cc's.
struct Capture;
using CaptureRef = std::shared_ptr<Capture>;

// An operation a capture recorded. Each launch of its graph runs `body` again, so a body must
// be re-runnable: every launch calls the recorded function (never moved from), and what it
// reads or writes is what it named at capture time (the addresses, as a CUDA graph's nodes
// keep their parameters).
struct Node {
  std::string what;
  bool kernel = false;
  std::function<void()> body;
  std::vector<size_t> deps;  // the nodes it follows; always earlier ones (recording order is
                             // a topological order)
};

// A captured graph: its nodes in recording order. Immutable once its capture ended.
struct Graph {
  std::vector<Node> nodes;
};

// Where a captured event was recorded (cudaEventRecord on a capturing stream): its capture, and
// the nodes the recording stream's next operation would have followed then.
struct CapturedAt {
  CaptureRef capture;
  std::vector<size_t> nodes;
};

// The calling thread's capture interaction mode (cudaThreadExchangeStreamCaptureMode); Global
// until the thread changes it.
cudaStreamCaptureMode& threadCaptureMode();

// cudaStreamBeginCapture, cudaStreamEndCapture (*graph null unless it succeeds) and the capture
// state cudaStreamIsCapturing and cudaStreamGetCaptureInfo report (`graph` and `dependencies`
// may be null). The legacy stream: never captured; asking it while a blocking stream captures
// is cudaErrorStreamCaptureImplicit.
cudaError_t beginCapture(const StreamRef& s, cudaStreamCaptureMode mode, const char* call);
cudaError_t endCapture(const StreamRef& s, std::shared_ptr<Graph>* graph, const char* call);
cudaError_t captureState(const StreamRef& s, const char* call, cudaStreamCaptureStatus* status,
                         unsigned long long* id, std::shared_ptr<Graph>* graph,
                         size_t* dependencies);

// The capture `s` is in (null: none), and whether that capture was invalidated.
CaptureRef captureOf(const StreamRef& s);
bool invalidated(const CaptureRef& c);
// Refuses `call` on a stream of capture `c`: invalidates `c` (CUDA: an invalid operation during
// capture invalidates it) and fails with `err`, or with cudaErrorStreamCaptureInvalidated when
// `c` was invalidated before (every later use of its streams fails so).
cudaError_t refuseInCapture(const CaptureRef& c, cudaError_t err, const char* call,
                            const std::string& why);

// A "potentially unsafe" call (cudaMalloc, cudaFree, cudaHostAlloc, cudaMallocHost,
// cudaFreeHost, cudaDeviceSynchronize, cudaMemcpy, cudaMemset, cudaEventQuery,
// cudaEventSynchronize): cudaErrorStreamCaptureUnsupported, invalidating the captures that
// forbid it, when the calling thread's mode is not Relaxed and either this thread began a
// capture not in Relaxed mode, or (the thread in Global mode) any thread runs a Global capture.
cudaError_t unsafeCallCheck(const char* call);
// cudaDeviceSynchronize: synchronising a device that has any stream capturing is invalid in
// every mode (CUDA's programming guide); it invalidates those captures.
cudaError_t deviceSyncCheck(const char* call);

// cudaEventRecord on `s`: when `s` is capturing, *at is where (no operation is recorded, as
// CUDA records none for a plain event record); at->capture stays null otherwise.
cudaError_t captureEventRecord(const StreamRef& s, const char* call, CapturedAt* at);
// cudaStreamWaitEvent(s, an event recorded at `at`): `s` joins that capture, or, in it already,
// follows `at`'s nodes too. A capture that ended: cudaErrorCapturedEvent; `s` in another
// capture: cudaErrorStreamCaptureMerge (both invalidated).
cudaError_t captureEventWait(const StreamRef& s, const CapturedAt& at, const char* call);
// cudaEventQuery and cudaEventSynchronize of an event recorded at `at`: cudaErrorCapturedEvent,
// invalidating its capture while that is active.
cudaError_t refuseCapturedEvent(const CapturedAt& at, const char* call);
// Forgets `s` (cudaStreamDestroy): a capture it began is invalidated and ended, as none can
// end it any more.
void captureForget(const StreamRef& s);

// submitAll's hooks, called with its lock held (capture.cc takes no lock of stream.cc's):
// records `ops` when `s` captures (*recorded), or refuses them; and refuses work on the legacy
// stream while a blocking stream captures.
cudaError_t recordIfCapturing(const StreamRef& s, std::vector<Op>* ops, const char* call,
                              bool* recorded);
cudaError_t legacyUseCheck(const char* call);

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
