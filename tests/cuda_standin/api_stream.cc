// The stand-in's streams, events and synchronisation calls (runtime.h has the machinery). On a
// capturing stream (capture.cc), an event record marks a point of the capture instead of the
// stream's queue, a wait for such an event joins the capture, and waiting for either from the
// host fails, as in CUDA.
#include <chrono>
#include <memory>
#include <mutex>
#include <unordered_set>

#include "runtime.h"

using namespace cuda_standin;  // NOLINT: the API below is CUDA's, at global scope

namespace {

// One cudaEventRecord: where in which stream, and when the stream got there; or, recorded on a
// capturing stream, where in which capture (then `at` names no stream).
struct Record {
  Point at;
  CapturedAt captured;
  std::atomic<int64_t> doneNs{-1};
};

struct Event {
  unsigned flags = 0;
  std::shared_ptr<Record> last;  // the latest record; waits and queries refer to it
};

struct Events {
  std::mutex mutex;
  std::unordered_set<Event*> live;
};

Events& events() {
  static auto* e = new Events();
  return *e;
}

// The event a handle names, and its latest record; false (and a failed `call`) when the handle
// is not a live event.
bool eventOf(cudaEvent_t handle, const char* call, Event** event,
             std::shared_ptr<Record>* last = nullptr) {
  if (initCheck(call) != cudaSuccess) return false;
  Events& e = events();
  std::lock_guard<std::mutex> lock(e.mutex);
  auto* ev = reinterpret_cast<Event*>(handle);
  if (e.live.count(ev) == 0) {
    fail(cudaErrorInvalidResourceHandle, call, "not a live event");
    return false;
  }
  *event = ev;
  if (last != nullptr) *last = ev->last;
  return true;
}

int64_t nowNs() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

cudaError_t createStream(cudaStream_t* pStream, unsigned flags, const char* call) {
  if (cudaError_t e = initCheck(call); e != cudaSuccess) return e;
  if (pStream == nullptr) return fail(cudaErrorInvalidValue, call, "pStream is NULL");
  if ((flags & ~cudaStreamNonBlocking) != 0) {
    return fail(cudaErrorInvalidValue, call, "unknown flags " + std::to_string(flags));
  }
  *pStream = registerStream(Stream::create(flags, /*legacy=*/false));
  return cudaSuccess;
}

}  // namespace

cudaError_t cudaStreamCreate(cudaStream_t* pStream) {
  return createStream(pStream, cudaStreamDefault, "cudaStreamCreate");
}

cudaError_t cudaStreamCreateWithFlags(cudaStream_t* pStream, unsigned int flags) {
  return createStream(pStream, flags, "cudaStreamCreateWithFlags");
}

// The stream's work still runs; its resources go once it has (CUDA's promise).
cudaError_t cudaStreamDestroy(cudaStream_t stream) {
  if (cudaError_t e = initCheck("cudaStreamDestroy"); e != cudaSuccess) return e;
  StreamRef s = stream == nullptr || stream == cudaStreamLegacy ? nullptr : unregisterStream(stream);
  if (!s) {
    return fail(cudaErrorInvalidResourceHandle, "cudaStreamDestroy",
                "not a stream created by cudaStreamCreate*");
  }
  captureForget(s);
  s->retire();
  return cudaSuccess;
}

cudaError_t cudaStreamSynchronize(cudaStream_t stream) {
  const char* call = "cudaStreamSynchronize";
  StreamRef s = streamOf(stream, call);
  if (!s) return lastError();
  if (CaptureRef c = captureOf(s)) {
    return refuseInCapture(c, cudaErrorStreamCaptureUnsupported, call,
                           "synchronising a capturing stream (its work is recorded, not run)");
  }
  if (s->legacy()) {
    // The legacy stream also waits for the blocking streams' earlier work.
    Op marker;
    marker.what = "cudaStreamSynchronize (host waits here)";
    marker.body = [] {};
    uint64_t t = 0;
    if (cudaError_t e = submit(s, std::move(marker), call, &t); e != cudaSuccess) return e;
    s->waitFor(t, call);
  } else {
    s->waitFor(s->tail(), "cudaStreamSynchronize");
  }
  return cudaSuccess;
}

cudaError_t cudaStreamQuery(cudaStream_t stream) {
  const char* call = "cudaStreamQuery";
  StreamRef s = streamOf(stream, call);
  if (!s) return lastError();
  if (CaptureRef c = captureOf(s)) {
    return refuseInCapture(c, cudaErrorStreamCaptureUnsupported, call,
                           "querying a capturing stream (its work is recorded, not run)");
  }
  if (s->legacy()) {
    if (cudaError_t e = legacyUseCheck(call); e != cudaSuccess) return e;
  }
  return s->reached(s->tail()) ? cudaSuccess : cudaErrorNotReady;  // not an error to record
}

cudaError_t cudaStreamWaitEvent(cudaStream_t stream, cudaEvent_t event, unsigned int flags) {
  StreamRef s = streamOf(stream, "cudaStreamWaitEvent");
  if (!s) return lastError();
  Event* ev = nullptr;
  std::shared_ptr<Record> rec;
  if (!eventOf(event, "cudaStreamWaitEvent", &ev, &rec)) return lastError();
  if (flags != cudaEventWaitDefault) {
    return fail(cudaErrorInvalidValue, "cudaStreamWaitEvent", "flags other than 0");
  }
  if (rec && rec->captured.capture) {
    return captureEventWait(s, rec->captured, "cudaStreamWaitEvent");
  }
  if (!rec) return cudaSuccess;  // never recorded: nothing to wait for
  if (CaptureRef c = captureOf(s)) {
    return refuseInCapture(c, cudaErrorStreamCaptureIsolation, "cudaStreamWaitEvent",
                           "the event was recorded outside the capture, on " +
                               rec->at.stream->describe() +
                               ": a dependency across the capture's boundary");
  }
  Op op;
  op.what = "cudaStreamWaitEvent";
  op.after.push_back(rec->at);  // the record at the time of this call, as CUDA takes it
  op.body = [] {};
  return submit(s, std::move(op), "cudaStreamWaitEvent");
}

cudaError_t cudaDeviceSynchronize(void) {
  if (cudaError_t e = initCheck("cudaDeviceSynchronize"); e != cudaSuccess) return e;
  if (cudaError_t e = unsafeCallCheck("cudaDeviceSynchronize"); e != cudaSuccess) return e;
  if (cudaError_t e = deviceSyncCheck("cudaDeviceSynchronize"); e != cudaSuccess) return e;
  waitAll(allTails(), "cudaDeviceSynchronize");
  return cudaSuccess;
}

cudaError_t cudaEventCreateWithFlags(cudaEvent_t* event, unsigned int flags) {
  if (cudaError_t e = initCheck("cudaEventCreateWithFlags"); e != cudaSuccess) return e;
  const unsigned known = cudaEventBlockingSync | cudaEventDisableTiming;
  if (event == nullptr || (flags & ~known) != 0) {
    return fail(cudaErrorInvalidValue, "cudaEventCreateWithFlags",
                "event is NULL or the flags are not the stand-in's (blocking sync, no timing)");
  }
  auto* ev = new Event();
  ev->flags = flags;
  Events& e = events();
  std::lock_guard<std::mutex> lock(e.mutex);
  e.live.insert(ev);
  *event = reinterpret_cast<cudaEvent_t>(ev);
  return cudaSuccess;
}

cudaError_t cudaEventCreate(cudaEvent_t* event) {
  return cudaEventCreateWithFlags(event, cudaEventDefault);
}

cudaError_t cudaEventDestroy(cudaEvent_t event) {
  if (cudaError_t e = initCheck("cudaEventDestroy"); e != cudaSuccess) return e;
  Events& e = events();
  std::lock_guard<std::mutex> lock(e.mutex);
  auto* ev = reinterpret_cast<Event*>(event);
  if (e.live.erase(ev) == 0) {
    return fail(cudaErrorInvalidResourceHandle, "cudaEventDestroy", "not a live event");
  }
  delete ev;  // queued waits hold their record, not the event
  return cudaSuccess;
}

cudaError_t cudaEventRecord(cudaEvent_t event, cudaStream_t stream) {
  StreamRef s = streamOf(stream, "cudaEventRecord");
  if (!s) return lastError();
  Event* ev = nullptr;
  if (!eventOf(event, "cudaEventRecord", &ev)) return lastError();
  auto rec = std::make_shared<Record>();
  if (cudaError_t e = captureEventRecord(s, "cudaEventRecord", &rec->captured); e != cudaSuccess)
    return e;
  if (!rec->captured.capture) {
    Op op;
    op.what = "cudaEventRecord";
    op.body = [rec] { rec->doneNs = nowNs(); };
    uint64_t t = 0;
    if (cudaError_t e = submit(s, std::move(op), "cudaEventRecord", &t); e != cudaSuccess) return e;
    rec->at = {s, t};
  }
  Events& e = events();
  std::lock_guard<std::mutex> lock(e.mutex);
  if (e.live.count(ev) == 0) {
    return fail(cudaErrorInvalidResourceHandle, "cudaEventRecord", "destroyed meanwhile");
  }
  ev->last = rec;
  return cudaSuccess;
}

cudaError_t cudaEventQuery(cudaEvent_t event) {
  Event* ev = nullptr;
  std::shared_ptr<Record> rec;
  if (!eventOf(event, "cudaEventQuery", &ev, &rec)) return lastError();
  if (cudaError_t e = unsafeCallCheck("cudaEventQuery"); e != cudaSuccess) return e;
  if (!rec) return cudaSuccess;
  if (rec->captured.capture) return refuseCapturedEvent(rec->captured, "cudaEventQuery");
  return rec->at.stream->reached(rec->at.ticket) ? cudaSuccess : cudaErrorNotReady;
}

cudaError_t cudaEventSynchronize(cudaEvent_t event) {
  Event* ev = nullptr;
  std::shared_ptr<Record> rec;
  if (!eventOf(event, "cudaEventSynchronize", &ev, &rec)) return lastError();
  if (cudaError_t e = unsafeCallCheck("cudaEventSynchronize"); e != cudaSuccess) return e;
  if (!rec) return cudaSuccess;
  if (rec->captured.capture) return refuseCapturedEvent(rec->captured, "cudaEventSynchronize");
  rec->at.stream->waitFor(rec->at.ticket, "cudaEventSynchronize");
  return cudaSuccess;
}

cudaError_t cudaEventElapsedTime(float* ms, cudaEvent_t start, cudaEvent_t end) {
  Event *a = nullptr, *b = nullptr;
  std::shared_ptr<Record> ra, rb;
  if (!eventOf(start, "cudaEventElapsedTime", &a, &ra) ||
      !eventOf(end, "cudaEventElapsedTime", &b, &rb)) {
    return lastError();
  }
  if (ms == nullptr) return fail(cudaErrorInvalidValue, "cudaEventElapsedTime", "ms is NULL");
  for (const auto* r : {&ra, &rb}) {
    if (*r && (*r)->captured.capture) {
      return refuseCapturedEvent((*r)->captured, "cudaEventElapsedTime");
    }
  }
  if (((a->flags | b->flags) & cudaEventDisableTiming) != 0 || !ra || !rb) {
    return fail(cudaErrorInvalidResourceHandle, "cudaEventElapsedTime",
                "an event without timing, or never recorded");
  }
  const int64_t t0 = ra->doneNs.load(), t1 = rb->doneNs.load();
  if (t0 < 0 || t1 < 0) return cudaErrorNotReady;
  *ms = static_cast<float>(static_cast<double>(t1 - t0) / 1e6);
  return cudaSuccess;
}
