// Streams: a thread each, the registry of live streams and the legacy default stream's implicit
// synchronisation (runtime.h).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <unordered_map>

#include "runtime.h"

namespace cuda_standin {
namespace {

using Clock = std::chrono::steady_clock;
constexpr auto kWarnEvery = std::chrono::seconds(10);

long long secondsSince(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - start).count();
}

}  // namespace

// ----- Stream ---------------------------------------------------------------------------------

Stream::Stream(unsigned flags, bool legacy, int index)
    : flags_(flags),
      legacy_(legacy),
      index_(index),
      rng_(config().seed + 0x9e3779b97f4a7c15ull * static_cast<uint64_t>(index + 1)),
      delayTokensUs_(4.0 * static_cast<double>(config().maxDelayUs)),
      lastRefill_(Clock::now()) {}

Stream::~Stream() = default;

StreamRef Stream::create(unsigned flags, bool legacy) {
  static std::atomic<int> next{0};
  StreamRef s(new Stream(flags, legacy, next++));
  // The thread holds the stream until it retires and has run everything queued, as CUDA
  // releases a destroyed stream only once its work is done.
  std::thread([s] { s->run(); }).detach();
  return s;
}

uint64_t Stream::enqueue(Op op) {
  std::lock_guard<std::mutex> lock(mutex_);
  queue_.push_back(std::move(op));
  changed_.notify_all();
  return ++queued_;
}

uint64_t Stream::tail() {
  std::lock_guard<std::mutex> lock(mutex_);
  return queued_;
}

bool Stream::reached(uint64_t ticket) {
  std::lock_guard<std::mutex> lock(mutex_);
  return completed_ >= ticket;
}

void Stream::waitFor(uint64_t ticket, const char* who) {
  std::unique_lock<std::mutex> lock(mutex_);
  const Clock::time_point start = Clock::now();
  while (completed_ < ticket) {
    if (changed_.wait_for(lock, kWarnEvery) == std::cv_status::timeout && completed_ < ticket) {
      std::fprintf(stderr, "cuda stand-in: %s has waited %lld s for stream %d%s, running '%s'\n",
                   who, secondsSince(start), index_, legacy_ ? " (legacy)" : "",
                   running_.empty() ? "nothing (waiting for another stream)" : running_.c_str());
    }
  }
}

void Stream::retire() {
  std::lock_guard<std::mutex> lock(mutex_);
  retired_ = true;
  changed_.notify_all();
}

std::string Stream::describe() {
  std::lock_guard<std::mutex> lock(mutex_);
  return "stream " + std::to_string(index_) + (legacy_ ? " (legacy)" : "") +
         (running_.empty() ? "" : ", running '" + running_ + "'");
}

// Injected delay (CUDA_STANDIN_DELAY_US = D): about one operation in four waits a uniform random
// time up to D before it starts. A bucket refilled at a quarter of the wall time caps what is
// spent so, so that a test of a million small operations slows by at most about a quarter,
// while the first operations after a quiet spell (where the bucket is full) are delayed freely.
void Stream::delay() {
  const uint64_t max = config().maxDelayUs;
  if (max == 0) return;
  const Clock::time_point now = Clock::now();
  const double elapsedUs =
      std::chrono::duration<double, std::micro>(now - lastRefill_).count();
  lastRefill_ = now;
  delayTokensUs_ = std::min(delayTokensUs_ + 0.25 * elapsedUs, 4.0 * static_cast<double>(max));
  if (rng_() % 4 != 0) return;
  const double d = static_cast<double>(rng_() % (max + 1));
  if (d > delayTokensUs_) return;
  std::this_thread::sleep_for(std::chrono::duration<double, std::micro>(d));
  // What the sleep cost (a short one oversleeps by tens of microseconds), not what was asked.
  const Clock::time_point woke = Clock::now();
  delayTokensUs_ -= std::chrono::duration<double, std::micro>(woke - now).count();
  lastRefill_ = woke;
}

void Stream::run() {
  std::unique_lock<std::mutex> lock(mutex_);
  for (;;) {
    changed_.wait(lock, [&] { return !queue_.empty() || retired_; });
    if (queue_.empty()) return;  // retired, and everything queued has run
    Op op = std::move(queue_.front());
    queue_.pop_front();
    running_ = op.what;
    lock.unlock();
    const std::string who = "stream " + std::to_string(index_) + " ('" + op.what + "')";
    for (const Point& p : op.after) p.stream->waitFor(p.ticket, who.c_str());
    delay();
    if (op.kernel) ++runningKernels();
    op.body();
    if (op.kernel) --runningKernels();
    op.body = nullptr;  // what it captured goes before the waiters wake
    lock.lock();
    ++completed_;
    running_.clear();
    changed_.notify_all();
  }
}

// ----- the registry ---------------------------------------------------------------------------

namespace {

struct Registry {
  std::mutex mutex;
  std::unordered_map<cudaStream_t, StreamRef> live;
  std::vector<std::weak_ptr<Stream>> retired;  // destroyed, perhaps with work left
  StreamRef legacy;

  StreamRef legacyLocked() {
    if (!legacy) legacy = Stream::create(0, /*legacy=*/true);
    return legacy;
  }
};

Registry& registry() {
  static auto* r = new Registry();  // never freed: detached stream threads may outlive exit
  return *r;
}

bool isLegacy(cudaStream_t h) { return h == nullptr || h == cudaStreamLegacy; }

}  // namespace

StreamRef streamOf(cudaStream_t handle, const char* call) {
  if (initCheck(call) != cudaSuccess) return nullptr;
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (isLegacy(handle)) return r.legacyLocked();
  if (handle == cudaStreamPerThread) {
    fail(cudaErrorNotSupported, call, "the stand-in has no per-thread default stream");
    return nullptr;
  }
  const auto it = r.live.find(handle);
  if (it == r.live.end()) {
    char text[64];
    std::snprintf(text, sizeof text, "%p is not a live stream", static_cast<void*>(handle));
    fail(cudaErrorInvalidResourceHandle, call, text);
    return nullptr;
  }
  return it->second;
}

StreamRef findStream(cudaStream_t handle) {
  if (!config().initError.empty() || handle == cudaStreamPerThread) return nullptr;
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  if (isLegacy(handle)) return r.legacyLocked();
  const auto it = r.live.find(handle);
  return it == r.live.end() ? nullptr : it->second;
}

cudaStream_t registerStream(const StreamRef& s) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  const auto handle = reinterpret_cast<cudaStream_t>(s.get());
  r.live[handle] = s;
  return handle;
}

StreamRef unregisterStream(cudaStream_t handle) {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  const auto it = r.live.find(handle);
  if (it == r.live.end()) return nullptr;
  StreamRef s = it->second;
  r.live.erase(it);
  r.retired.erase(std::remove_if(r.retired.begin(), r.retired.end(),
                                 [](const std::weak_ptr<Stream>& w) { return w.expired(); }),
                  r.retired.end());
  r.retired.push_back(s);
  return s;
}

cudaError_t submitAll(const StreamRef& s, std::vector<Op> ops, const char* call,
                      uint64_t* ticket) {
  Registry& r = registry();
  // The tails below, the capture checks and the enqueues, as one step: nothing of another
  // thread's lands between `ops`, and no capture begins or ends in between.
  std::lock_guard<std::mutex> lock(r.mutex);
  if (ticket != nullptr) *ticket = 0;
  if (ops.empty()) return cudaSuccess;
  bool recorded = false;
  if (cudaError_t e = recordIfCapturing(s, &ops, call, &recorded); e != cudaSuccess) return e;
  if (recorded) return cudaSuccess;
  if (s->legacy()) {
    if (cudaError_t e = legacyUseCheck(call); e != cudaSuccess) return e;
  }
  Op& first = ops.front();
  auto addTail = [&first](const StreamRef& other) {
    const uint64_t t = other->tail();
    if (t > 0 && !other->reached(t)) first.after.push_back({other, t});
  };
  if (s->legacy()) {
    for (const auto& entry : r.live) {
      if (entry.second->blocking()) addTail(entry.second);
    }
  } else if (s->blocking()) {
    addTail(r.legacyLocked());
  }
  uint64_t last = 0;
  for (Op& op : ops) last = s->enqueue(std::move(op));
  if (ticket != nullptr) *ticket = last;
  return cudaSuccess;
}

cudaError_t submit(const StreamRef& s, Op op, const char* call, uint64_t* ticket) {
  std::vector<Op> ops;
  ops.push_back(std::move(op));
  return submitAll(s, std::move(ops), call, ticket);
}

std::vector<Point> allTails() {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mutex);
  std::vector<Point> points;
  auto add = [&points](const StreamRef& s) { points.push_back({s, s->tail()}); };
  add(r.legacyLocked());
  for (const auto& entry : r.live) add(entry.second);
  for (const auto& w : r.retired) {
    if (StreamRef s = w.lock()) add(s);
  }
  return points;
}

void waitAll(const std::vector<Point>& points, const char* who) {
  for (const Point& p : points) p.stream->waitFor(p.ticket, who);
}

}  // namespace cuda_standin
