// Graph capture of streams (runtime.h, "graph capture"): which streams capture into what, and
// the rules of CUDA's programming guide ("Stream Capture": cross-stream dependencies, prohibited
// and unhandled operations, invalidation, capture interaction modes) and of
// cudaThreadExchangeStreamCaptureMode's documentation.
//
// Invariants: a stream is in at most one capture (members); a capture is in `active` from its
// begin until it ends, and its streams leave it when it ends; a capture's graph only grows
// while it is active, and each node follows only earlier nodes. Lock order: stream.cc's
// registry lock, then this file's (submitAll calls the hooks below with its lock held); nothing
// here calls back into stream.cc's locked functions.
#include <algorithm>
#include <cstdio>
#include <mutex>
#include <thread>
#include <unordered_map>

#include "runtime.h"

namespace cuda_standin {

struct Capture {
  unsigned long long id = 0;
  StreamRef origin;  // where it began, and where it must end
  cudaStreamCaptureMode mode = cudaStreamCaptureModeGlobal;
  std::thread::id thread;        // the thread that began it
  std::shared_ptr<Graph> graph;  // what it recorded so far
  std::string invalid;           // why it was invalidated; empty while valid
  bool ended = false;
};

namespace {

// A stream in a capture, and the nodes its next operation follows (CUDA's dependency set).
struct Member {
  StreamRef stream;
  CaptureRef capture;
  std::vector<size_t> deps;
};

struct Captures {
  std::mutex mutex;
  std::unordered_map<const Stream*, Member> members;
  std::vector<CaptureRef> active;  // begun, not ended
  unsigned long long nextId = 1;   // unique over the process, as CUDA's capture ids
};

Captures& captures() {
  static auto* c = new Captures();  // never freed: stream threads may outlive exit
  return *c;
}

std::string name(const Capture& c) { return "capture " + std::to_string(c.id); }

const char* modeName(cudaStreamCaptureMode m) {
  switch (m) {
    case cudaStreamCaptureModeGlobal:
      return "global";
    case cudaStreamCaptureModeThreadLocal:
      return "thread-local";
    case cudaStreamCaptureModeRelaxed:
      return "relaxed";
  }
  return "unknown";
}

bool knownMode(cudaStreamCaptureMode m) {
  return m == cudaStreamCaptureModeGlobal || m == cudaStreamCaptureModeThreadLocal ||
         m == cudaStreamCaptureModeRelaxed;
}

// The first reason sticks: it is what EndCapture reports.
void invalidateLocked(Capture& c, const std::string& why) {
  if (c.invalid.empty()) c.invalid = why;
}

// Ends `c`: its streams leave it and queue their work again.
void endLocked(Captures& all, const CaptureRef& c) {
  c->ended = true;
  for (auto it = all.members.begin(); it != all.members.end();) {
    it = it->second.capture == c ? all.members.erase(it) : std::next(it);
  }
  all.active.erase(std::remove(all.active.begin(), all.active.end(), c), all.active.end());
}

// The first node recorded that the origin's next operation would not follow (CUDA's
// "unjoined" work: a fork not joined back), or -1. A stream that joined and recorded nothing
// of its own left no such node.
long firstUnjoined(const Graph& g, const std::vector<size_t>& originDeps) {
  std::vector<bool> reached(g.nodes.size(), false);
  std::vector<size_t> todo = originDeps;
  while (!todo.empty()) {
    const size_t n = todo.back();
    todo.pop_back();
    if (reached[n]) continue;
    reached[n] = true;
    for (size_t d : g.nodes[n].deps) todo.push_back(d);
  }
  for (size_t n = 0; n < g.nodes.size(); ++n) {
    if (!reached[n]) return static_cast<long>(n);
  }
  return -1;
}

}  // namespace

cudaStreamCaptureMode& threadCaptureMode() {
  thread_local cudaStreamCaptureMode mode = cudaStreamCaptureModeGlobal;
  return mode;
}

cudaError_t beginCapture(const StreamRef& s, cudaStreamCaptureMode mode, const char* call) {
  if (!knownMode(mode)) return fail(cudaErrorInvalidValue, call, "an unknown capture mode");
  if (s->legacy()) {
    return fail(cudaErrorStreamCaptureUnsupported, call,
                "the legacy default stream cannot be captured");
  }
  Captures& all = captures();
  std::lock_guard<std::mutex> lock(all.mutex);
  const auto it = all.members.find(s.get());
  if (it != all.members.end()) {
    return fail(cudaErrorIllegalState, call,
                s->describe() + " is in " + name(*it->second.capture) + " already");
  }
  auto c = std::make_shared<Capture>();
  c->id = all.nextId++;
  c->origin = s;
  c->mode = mode;
  c->thread = std::this_thread::get_id();
  c->graph = std::make_shared<Graph>();
  all.members[s.get()] = Member{s, c, {}};
  all.active.push_back(c);
  return cudaSuccess;
}

cudaError_t endCapture(const StreamRef& s, std::shared_ptr<Graph>* graph, const char* call) {
  *graph = nullptr;
  Captures& all = captures();
  std::lock_guard<std::mutex> lock(all.mutex);
  const auto it = all.members.find(s.get());
  if (it == all.members.end()) {
    return fail(cudaErrorIllegalState, call, s->describe() + " is not capturing");
  }
  const CaptureRef c = it->second.capture;
  if (c->origin != s) {
    invalidateLocked(*c, std::string(call) + " on a stream that joined it");
    return fail(cudaErrorStreamCaptureUnmatched, call,
                name(*c) + " began on " + c->origin->describe() + ", not on " + s->describe() +
                    " (it is now invalidated)");
  }
  if (c->mode != cudaStreamCaptureModeRelaxed && c->thread != std::this_thread::get_id()) {
    return fail(
        cudaErrorStreamCaptureWrongThread, call,
        name(*c) + " (" + modeName(c->mode) + " mode) must end on the thread that began it");
  }
  const std::vector<size_t> originDeps = it->second.deps;
  endLocked(all, c);  // whatever follows, its streams capture no more
  if (!c->invalid.empty()) {
    return fail(cudaErrorStreamCaptureInvalidated, call,
                name(*c) + " was invalidated: " + c->invalid + "; no graph");
  }
  const long lost = firstUnjoined(*c->graph, originDeps);
  if (lost >= 0) {
    return fail(cudaErrorStreamCaptureUnjoined, call,
                name(*c) + ": '" + c->graph->nodes[static_cast<size_t>(lost)].what + "' (node " +
                    std::to_string(lost) +
                    ") was forked off and not joined back to the stream that began the capture "
                    "(record an event after it and wait for that event there); no graph");
  }
  *graph = c->graph;
  return cudaSuccess;
}

cudaError_t captureState(const StreamRef& s, const char* call, cudaStreamCaptureStatus* status,
                         unsigned long long* id, std::shared_ptr<Graph>* graph,
                         size_t* dependencies) {
  Captures& all = captures();
  std::lock_guard<std::mutex> lock(all.mutex);
  *status = cudaStreamCaptureStatusNone;
  if (s->legacy()) {
    for (const auto& entry : all.members) {
      if (entry.second.stream->blocking()) {
        return fail(cudaErrorStreamCaptureImplicit, call,
                    "the legacy stream, while blocking " + entry.second.stream->describe() +
                        " captures (its use would depend on the capture)");
      }
    }
    return cudaSuccess;
  }
  const auto it = all.members.find(s.get());
  if (it == all.members.end()) return cudaSuccess;
  const Capture& c = *it->second.capture;
  *status = c.invalid.empty() ? cudaStreamCaptureStatusActive : cudaStreamCaptureStatusInvalidated;
  if (id != nullptr) *id = c.id;
  if (graph != nullptr) *graph = c.graph;
  if (dependencies != nullptr) *dependencies = it->second.deps.size();
  return cudaSuccess;
}

CaptureRef captureOf(const StreamRef& s) {
  Captures& all = captures();
  std::lock_guard<std::mutex> lock(all.mutex);
  const auto it = all.members.find(s.get());
  return it == all.members.end() ? nullptr : it->second.capture;
}

bool invalidated(const CaptureRef& c) {
  std::lock_guard<std::mutex> lock(captures().mutex);
  return !c->invalid.empty();
}

cudaError_t refuseInCapture(const CaptureRef& c, cudaError_t err, const char* call,
                            const std::string& why) {
  std::string before;
  {
    std::lock_guard<std::mutex> lock(captures().mutex);
    before = c->invalid;
    invalidateLocked(*c, std::string(call) + ": " + why);
  }
  if (!before.empty()) {
    return fail(cudaErrorStreamCaptureInvalidated, call,
                why + "; " + name(*c) + " was invalidated before: " + before);
  }
  return fail(err, call, why + " (" + name(*c) + " is now invalidated)");
}

cudaError_t unsafeCallCheck(const char* call) {
  const cudaStreamCaptureMode mine = threadCaptureMode();
  if (mine == cudaStreamCaptureModeRelaxed) return cudaSuccess;
  Captures& all = captures();
  std::string which;
  {
    std::lock_guard<std::mutex> lock(all.mutex);
    const std::thread::id me = std::this_thread::get_id();
    for (const CaptureRef& c : all.active) {
      const bool own = c->thread == me && c->mode != cudaStreamCaptureModeRelaxed;
      const bool global =
          mine == cudaStreamCaptureModeGlobal && c->mode == cudaStreamCaptureModeGlobal;
      if (!own && !global) continue;
      invalidateLocked(*c, std::string(call) + ", a potentially unsafe call, during it");
      which += (which.empty() ? "" : ", ") + name(*c) + " (" + modeName(c->mode) + " mode, " +
               (c->thread == me ? "this thread's" : "another thread's") + ")";
    }
  }
  if (which.empty()) return cudaSuccess;
  return fail(cudaErrorStreamCaptureUnsupported, call,
              std::string("a potentially unsafe call while ") + which +
                  " is active, from a thread in " + modeName(mine) +
                  " mode (cudaThreadExchangeStreamCaptureMode: relaxed allows it); the capture "
                  "is now invalidated");
}

cudaError_t deviceSyncCheck(const char* call) {
  Captures& all = captures();
  std::string which;
  {
    std::lock_guard<std::mutex> lock(all.mutex);
    for (const CaptureRef& c : all.active) {
      invalidateLocked(*c, std::string(call) + " during it");
      which += (which.empty() ? "" : ", ") + name(*c);
    }
  }
  if (which.empty()) return cudaSuccess;
  return fail(cudaErrorStreamCaptureUnsupported, call,
              "synchronising the device while " + which +
                  " is active (a capturing stream's work is recorded, not run); now invalidated");
}

cudaError_t captureEventRecord(const StreamRef& s, const char* call, CapturedAt* at) {
  at->capture = nullptr;
  at->nodes.clear();
  Captures& all = captures();
  std::unique_lock<std::mutex> lock(all.mutex);
  const auto it = all.members.find(s.get());
  if (it == all.members.end()) return cudaSuccess;
  const CaptureRef c = it->second.capture;
  if (!c->invalid.empty()) {
    const std::string why = c->invalid;
    lock.unlock();
    return fail(cudaErrorStreamCaptureInvalidated, call, name(*c) + " was invalidated: " + why);
  }
  at->capture = c;
  at->nodes = it->second.deps;
  return cudaSuccess;
}

cudaError_t captureEventWait(const StreamRef& s, const CapturedAt& at, const char* call) {
  Captures& all = captures();
  std::unique_lock<std::mutex> lock(all.mutex);
  const CaptureRef& c = at.capture;
  const auto it = all.members.find(s.get());
  Capture* mine = it == all.members.end() ? nullptr : it->second.capture.get();
  if (c->ended) {
    if (mine != nullptr)
      invalidateLocked(*mine, std::string(call) + " of an ended capture's event");
    lock.unlock();
    return fail(cudaErrorCapturedEvent, call,
                "the event was last recorded in " + name(*c) +
                    ", which has ended: it stands for no work (record it again)");
  }
  if (s->legacy()) {
    invalidateLocked(*c, "the legacy stream waited for one of its events");
    lock.unlock();
    return fail(cudaErrorStreamCaptureUnsupported, call,
                "the legacy stream cannot join " + name(*c) + " (now invalidated)");
  }
  if (mine != nullptr && mine != c.get()) {
    invalidateLocked(*mine, std::string(call) + " merging it with " + name(*c));
    invalidateLocked(*c, std::string(call) + " merging it with " + name(*mine));
    const std::string other = name(*mine);
    lock.unlock();
    return fail(cudaErrorStreamCaptureMerge, call,
                s->describe() + " is in " + other + " and the event in " + name(*c) +
                    " (both now invalidated)");
  }
  if (!c->invalid.empty()) {
    const std::string why = c->invalid;
    lock.unlock();
    return fail(cudaErrorStreamCaptureInvalidated, call, name(*c) + " was invalidated: " + why);
  }
  if (mine == nullptr) {  // joins: its next operation follows the event's point
    all.members[s.get()] = Member{s, c, at.nodes};
    return cudaSuccess;
  }
  std::vector<size_t>& deps = it->second.deps;
  for (size_t n : at.nodes) {
    if (std::find(deps.begin(), deps.end(), n) == deps.end()) deps.push_back(n);
  }
  return cudaSuccess;
}

cudaError_t refuseCapturedEvent(const CapturedAt& at, const char* call) {
  bool active = false;
  {
    std::lock_guard<std::mutex> lock(captures().mutex);
    active = !at.capture->ended;
    if (active) invalidateLocked(*at.capture, std::string(call) + " of one of its events");
  }
  return fail(cudaErrorCapturedEvent, call,
              "the event was last recorded in " + name(*at.capture) +
                  (active ? " (now invalidated)" : ", which has ended") +
                  ": it stands for no work that runs");
}

void captureForget(const StreamRef& s) {
  Captures& all = captures();
  std::lock_guard<std::mutex> lock(all.mutex);
  const auto it = all.members.find(s.get());
  if (it == all.members.end()) return;
  const CaptureRef c = it->second.capture;
  if (c->origin != s) {
    all.members.erase(it);  // its nodes stay: EndCapture still finds them if not joined back
    return;
  }
  invalidateLocked(*c, "the stream that began it was destroyed");
  endLocked(all, c);
  std::fprintf(stderr, "cuda stand-in: cudaStreamDestroy: %s ends with its stream, invalidated\n",
               name(*c).c_str());
}

cudaError_t recordIfCapturing(const StreamRef& s, std::vector<Op>* ops, const char* call,
                              bool* recorded) {
  *recorded = false;
  Captures& all = captures();
  std::unique_lock<std::mutex> lock(all.mutex);
  const auto it = all.members.find(s.get());
  if (it == all.members.end()) return cudaSuccess;
  const CaptureRef c = it->second.capture;
  if (!c->invalid.empty()) {
    const std::string why = c->invalid;
    lock.unlock();
    return fail(cudaErrorStreamCaptureInvalidated, call,
                "work on " + s->describe() + ", which is in " + name(*c) + ", invalidated: " + why);
  }
  // Each operation becomes a node following the stream's dependency set, and the stream's next
  // one follows it: a chain, as the stream's order. An operation's `after` points (a graph
  // launch's order behind its previous launch) are not recorded: inside a graph, order is the
  // nodes' dependencies alone.
  for (Op& op : *ops) {
    Node n;
    n.what = std::move(op.what);
    n.kernel = op.kernel;
    n.body = std::move(op.body);
    n.deps = std::move(it->second.deps);
    c->graph->nodes.push_back(std::move(n));
    it->second.deps = {c->graph->nodes.size() - 1};
  }
  *recorded = true;
  return cudaSuccess;
}

cudaError_t legacyUseCheck(const char* call) {
  Captures& all = captures();
  std::string which;
  {
    std::lock_guard<std::mutex> lock(all.mutex);
    for (auto& entry : all.members) {
      if (!entry.second.stream->blocking()) continue;
      invalidateLocked(*entry.second.capture, std::string(call) + " on the legacy stream");
      which += (which.empty() ? "" : ", ") + entry.second.stream->describe();
    }
  }
  if (which.empty()) return cudaSuccess;
  return fail(cudaErrorStreamCaptureImplicit, call,
              "work on the legacy stream while blocking " + which +
                  " captures (it would depend on the capture, which is now invalidated)");
}

}  // namespace cuda_standin
