// submitDevice (core/device_side.h): a device call's program follows its route (core/route.h).
//
//   stream  every part enqueued on the caller's stream by the calling thread, which returns: no
//           progress thread, no gate. A group on several streams runs on its first stream,
//           joined to the others by events both ways (NCCL's group semantics).
//   joined  the stream parts enqueued on the caller's stream by the calling thread; each host
//           stage behind a stream gate (gpu/stream_gate.h), run by the progress thread on the
//           communicator's stream. Without a progress thread the calling thread waits for the
//           stream, runs the host stage and goes on.
// A group whose calls mix stream steps and host stages runs on the calling thread, which waits
// for it: a stream-ordered fabric is only ever driven by the issuing thread (core/route.h), and a
// group's exchanges must be posted together. A group with host stages only is gated whole.
//
// Ordering between calls: calls on one stream are ordered by it. The communicator's device
// scratch is the one resource stream-ordered calls on different streams share; a call that uses
// it waits for the last one that did (DeviceState::scratchDone). NCCL orders its own
// communicator's work across streams.
//
// CUDA graph capture: a call whose stream captures is enqueued like any stream call, so it is
// captured. It may not make anything that needs CUDA (the device side: checkCaptureSetup,
// before it is numbered; a device fabric: setUpDevice, agreed by the ranks), grow the scratch,
// or have a host stage: those are refused with strataInvalidUsage and a message naming what,
// before anything is enqueued. Graph memory stays valid: a scratch buffer a capture used is
// never freed before the communicator.
#include "core/device_side.h"

#ifdef STRATA_HAVE_CUDA
#include <cuda_runtime.h>

#include <algorithm>
#include <string>

#include "common/cuda_check.h"
#include "common/datatype.h"
#include "core/bounded.h"
#include "core/device_state.h"
#include "core/route.h"
#include "core/timeline.h"
#endif

namespace strata::core {

#ifndef STRATA_HAVE_CUDA

StatusOr<Capture> captureOf(strataStream_t) { return Capture{}; }

StatusOr<Capture> checkCaptureSetup(Comm&, strataStream_t) { return Capture{}; }

Status submitDevice(Comm&, IssuingThread, const std::vector<Prepared>&,
                    const std::vector<strataStream_t>&) {
  return internalError("a device call in a build without CUDA");
}

#else

namespace {

cudaStream_t cudaOf(strataStream_t s) { return reinterpret_cast<cudaStream_t>(s); }

std::string streamName(cudaStream_t s) {
  char text[32];
  std::snprintf(text, sizeof text, "%p", static_cast<void*>(s));
  return std::string("stream ") + text;
}

// Grows the scratch to `bytes` (never while capturing: an allocation there would be the graph's).
// Waits for every call that may still use the old one; a buffer a graph captured is kept.
template <typename What>
Status ensureScratch(Comm& c, IssuingThread me, size_t bytes, bool capturing, What what) {
  DeviceState& d = *c.device();
  if (bytes <= d.scratchBytes) return Status::ok();
  if (capturing) {
    return invalidUsage(what() + " needs " + std::to_string(bytes) +
                        " bytes of device scratch, more than this communicator's calls used "
                        "before, while its stream captures a CUDA graph: run one such call "
                        "before capturing (as PyTorch's warm-up iterations do)");
  }
  STRATA_RETURN_IF_ERROR(c.quiesce(me));
  if (d.scratchRecorded && !d.scratchCaptured) {
    STRATA_CUDA_CHECK(cudaEventSynchronize(d.scratchDone));
  }
  if (d.scratch != nullptr) {
    if (d.scratchInGraph) {
      d.kept.push_back(d.scratch);  // a graph may still run on it
    } else {
      STRATA_CUDA_CHECK(cudaFreeAsync(d.scratch, d.stream));
    }
  }
  d.scratch = nullptr;
  d.scratchBytes = 0;
  d.scratchInGraph = false;
  d.scratchRecorded = false;
  // Stream-ordered: never a device-wide synchronisation (gpu/stream_gate.h).
  STRATA_CUDA_CHECK(cudaMallocAsync(&d.scratch, bytes, d.stream));
  STRATA_CUDA_CHECK(cudaStreamSynchronize(d.stream));
  d.scratchBytes = bytes;
  return Status::ok();
}

// Before a call that uses the scratch runs on `s`: it waits for the last one that did (on `s`
// itself, the stream already orders them: nothing to enqueue).
Status waitScratch(DeviceState& d, cudaStream_t s, const Capture& cap) {
  if (!d.scratchRecorded || d.scratchStream == s) return Status::ok();
  if (d.scratchCaptured) {
    // The last user was captured. Within the same capture the graph orders them; otherwise it
    // runs when its graph is launched, which the application orders (docs/gpu.md).
    if (cap.active && cap.id == d.scratchCapture) {
      STRATA_CUDA_CHECK(cudaStreamWaitEvent(s, d.scratchDone, 0));
    }
    return Status::ok();
  }
  if (!cap.active) {
    STRATA_CUDA_CHECK(cudaStreamWaitEvent(s, d.scratchDone, 0));
    return Status::ok();
  }
  // A capturing stream may not wait for an event recorded outside its capture: the host waits
  // instead, in relaxed capture mode (a wait is "unsafe" under a global-mode capture).
  cudaStreamCaptureMode mode = cudaStreamCaptureModeRelaxed;
  STRATA_CUDA_CHECK(cudaThreadExchangeStreamCaptureMode(&mode));
  const cudaError_t rc = cudaEventSynchronize(d.scratchDone);
  (void)cudaThreadExchangeStreamCaptureMode(&mode);
  if (rc != cudaSuccess) return cudaFailure("cudaEventSynchronize", rc, __FILE__, __LINE__);
  return Status::ok();
}

// After a call that used the scratch was enqueued on `s`.
Status noteScratch(DeviceState& d, cudaStream_t s, const Capture& cap) {
  STRATA_CUDA_CHECK(cudaEventRecord(d.scratchDone, s));
  d.scratchRecorded = true;
  d.scratchStream = s;
  d.scratchCaptured = cap.active;
  d.scratchCapture = cap.id;
  if (cap.active) d.scratchInGraph = true;
  return Status::ok();
}

bool usesScratch(const std::vector<Prepared>& calls) {
  return std::any_of(calls.begin(), calls.end(),
                     [](const Prepared& p) { return p.program->scratchBytes > 0; });
}

// Runs `body(RunContext&)` on the communicator's stream and waits for that stream, bounded as
// `calls` calls from `first`: a joined call's host stage or a gated group of host stages only
// (progress thread), or a call or group on the calling thread after its streams were waited for.
template <typename Body>
Status onCommStream(Comm& c, const Call& first, size_t calls, Body body) {
  return bounded(c, first, calls, [&](RunningCall) -> Status {
    DeviceState& d = *c.device();
    STRATA_CUDA_CHECK(cudaSetDevice(d.device));  // the progress thread's first call sets it
    DeviceExecutor x(d, d.stream);
    RunContext rc = runContextOf(c, x);
    rc.route = routeName(Program::Route::kJoined);
    Status st = body(rc);
    const cudaError_t synced = cudaStreamSynchronize(d.stream);
    if (st.isOk() && synced != cudaSuccess) {
      st = cudaFailure("cudaStreamSynchronize", synced, __FILE__, __LINE__);
    }
    return st;
  });
}

Status runOnCommStream(Comm& c, const std::vector<Prepared>& calls) {
  return onCommStream(c, calls[0].call, calls.size(), [&](RunContext& rc) {
    return calls.size() == 1 ? run(rc, calls[0]) : runGroup(rc, calls);
  });
}

// One host stage of a joined call: `part` of `p`.
Status runHostPart(Comm& c, const Prepared& p, const Part& part) {
  return onCommStream(c, p.call, 1, [&](RunContext& rc) { return run(rc, p, part); });
}

// Gates `streams` (distinct) and queues `work` behind them on the engine: it runs once the work
// queued on every stream before the gate is done, and the streams go on once it returned
// (failed or not). Returns the first failure to hold; the tickets already held are then
// released by a task that runs nothing, so that no stream waits for ever.
template <typename Work>
Status gated(Comm& c, const std::vector<cudaStream_t>& streams, uint64_t seq, Work work) {
  DeviceState& d = *c.device();
  std::vector<gpu::StreamGate::Ticket> tickets;
  Status held = Status::ok();
  for (cudaStream_t s : streams) {
    StatusOr<gpu::StreamGate::Ticket> t = d.gate->hold(s, d.gated + 1);
    if (!t.isOk()) {
      held = t.status();
      break;
    }
    ++d.gated;
    tickets.push_back(t.value());
  }
  if (tickets.empty()) return held;
  c.engine().submit([&c, tickets, held, seq, work](const Status& earlier) {
    DeviceState& state = *c.device();
    Status st = earlier.isOk() ? held : earlier;
    {
      // On the timeline: how long the stage waited for the work queued before it.
      TimelineSpan gate(c.timeline(), TimelineEvent::Cat::kWait, "stream gate", seq);
      for (const gpu::StreamGate::Ticket& t : tickets) {
        if (st.isOk()) st = state.gate->waitReady(t);
      }
    }
    if (st.isOk()) st = work();
    for (const gpu::StreamGate::Ticket& t : tickets) state.gate->release(t);
    return st;
  });
  return held;
}

// The stream route: every call enqueued on streams[0], the others joined to it both ways.
Status enqueueStream(Comm& c, const std::vector<Prepared>& calls,
                     const std::vector<cudaStream_t>& streams, const Capture& cap) {
  return bounded(c, calls[0].call, calls.size(), [&](RunningCall) -> Status {
    DeviceState& d = *c.device();
    const cudaStream_t on = streams[0];
    for (size_t i = 1; i < streams.size(); ++i) {
      STRATA_CUDA_CHECK(cudaEventRecord(d.joins[0], streams[i]));
      STRATA_CUDA_CHECK(cudaStreamWaitEvent(on, d.joins[0], 0));
    }
    const bool scratch = usesScratch(calls);
    if (scratch) STRATA_RETURN_IF_ERROR(waitScratch(d, on, cap));
    DeviceExecutor x(d, on);
    RunContext rc = runContextOf(c, x);
    rc.route = routeName(Program::Route::kStream);
    STRATA_RETURN_IF_ERROR(calls.size() == 1 ? run(rc, calls[0]) : runGroup(rc, calls));
    if (scratch) STRATA_RETURN_IF_ERROR(noteScratch(d, on, cap));
    for (size_t i = 1; i < streams.size(); ++i) {
      STRATA_CUDA_CHECK(cudaEventRecord(d.joins[1], on));
      STRATA_CUDA_CHECK(cudaStreamWaitEvent(streams[i], d.joins[1], 0));
    }
    return Status::ok();
  });
}

// The joined route of one call on `s`: its parts in order, stream parts enqueued here, host
// stages gated (or run here after waiting for `s`, without a progress thread).
Status submitJoined(Comm& c, const Prepared& p, cudaStream_t s) {
  DeviceState& d = *c.device();
  const Program& prog = *p.program;
  size_t firstHost = prog.segments.size(), lastHost = 0;
  for (size_t i = 0; i < prog.segments.size(); ++i) {
    if (!prog.segments[i].host) continue;
    firstHost = std::min(firstHost, i);
    lastHost = i;
  }
  const bool scratch = prog.scratchBytes > 0;
  if (scratch) {
    STRATA_RETURN_IF_ERROR(bounded(c, p.call, 1, [&](RunningCall) {
      return waitScratch(d, s, Capture{});
    }));
  }
  for (size_t i = 0; i < prog.segments.size(); ++i) {
    const Program::Segment& seg = prog.segments[i];
    Part part;
    part.begin = seg.begin;
    part.end = seg.end;
    if (!seg.host) {
      // The flight recorder follows the host stages; the stream parts are enqueued only.
      part.opens = part.closes = false;
      part.name = "enqueue";
      STRATA_RETURN_IF_ERROR(bounded(c, p.call, 1, [&](RunningCall) -> Status {
        DeviceExecutor x(d, s);
        RunContext rc = runContextOf(c, x);
        rc.route = routeName(Program::Route::kJoined);
        return run(rc, p, part);
      }));
      continue;
    }
    part.opens = i == firstHost;
    part.closes = i == lastHost;
    part.name = "host stage";
    if (d.gate) {
      STRATA_RETURN_IF_ERROR(
          gated(c, {s}, p.call.seq, [&c, p, part] { return runHostPart(c, p, part); }));
    } else {
      STRATA_RETURN_IF_ERROR(bounded(c, p.call, 1, [&](RunningCall) -> Status {
        STRATA_CUDA_CHECK(cudaStreamSynchronize(s));
        return Status::ok();
      }));
      STRATA_RETURN_IF_ERROR(runHostPart(c, p, part));
    }
  }
  if (scratch) {
    return bounded(c, p.call, 1, [&](RunningCall) { return noteScratch(d, s, Capture{}); });
  }
  return Status::ok();
}

// A call refused during a capture: a local error (every rank captures the same calls), the
// communicator stays usable; the flight recorder's record of each call ends with it.
Status refused(Comm& c, const std::vector<Prepared>& calls, const Status& why) {
  for (const Prepared& p : calls) c.flightRecorder().finished(p.call.record, why);
  return why;
}

}  // namespace

StatusOr<Capture> captureOf(strataStream_t stream) {
  Capture cap;
  cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
  STRATA_CUDA_CHECK(cudaStreamGetCaptureInfo(cudaOf(stream), &status, &cap.id));
  if (status == cudaStreamCaptureStatusInvalidated) {
    return invalidUsage(streamName(cudaOf(stream)) +
                        " is in a CUDA graph capture that was invalidated: end it first");
  }
  cap.active = status == cudaStreamCaptureStatusActive;
  return cap;
}

StatusOr<Capture> checkCaptureSetup(Comm& c, strataStream_t stream) {
  STRATA_ASSIGN_OR_RETURN(Capture cap, captureOf(stream));
  if (!cap.active || c.device() != nullptr) return cap;
  return invalidUsage("this is the communicator's first call on device memory, made while " +
                      streamName(cudaOf(stream)) +
                      " captures a CUDA graph: its device side (a stream, pinned memory, "
                      "device fabrics) cannot be made during a capture; make one device call "
                      "before capturing (as PyTorch's warm-up iterations do)");
}

Status submitDevice(Comm& c, IssuingThread me, const std::vector<Prepared>& calls,
                    const std::vector<strataStream_t>& streamsOfCalls) {
  if (calls.empty()) return Status::ok();
  std::vector<cudaStream_t> streams;  // distinct, in call order
  for (strataStream_t stream : streamsOfCalls) {
    const cudaStream_t s = cudaOf(stream);
    if (std::find(streams.begin(), streams.end(), s) == streams.end()) streams.push_back(s);
  }
  // Named only for a message: a call's way here is its latency floor.
  auto what = [&] { return callContext(c, calls[0].call, calls.size()); };
  // Capture: every stream of a group in the same one, or none.
  StatusOr<Capture> first = captureOf(streams[0]);
  if (!first.isOk()) return refused(c, calls, first.status().withContext(what()));
  const Capture cap = first.value();
  for (size_t i = 1; i < streams.size(); ++i) {
    StatusOr<Capture> other = captureOf(streams[i]);
    if (!other.isOk()) return refused(c, calls, other.status().withContext(what()));
    if (other.value().active != cap.active || other.value().id != cap.id) {
      return refused(c, calls,
                     invalidUsage(what() + ": its streams must all capture the same CUDA graph, "
                                           "or none"));
    }
  }
  bool allStream = true, streamSteps = false;
  size_t scratch = 0;
  for (const Prepared& p : calls) {
    const Program& prog = *p.program;
    if (prog.route != Program::Route::kStream) {
      allStream = false;
      if (cap.active) {
        return refused(
            c, calls,
            invalidUsage(callContext(c, p.call, 1) + " is made while " + streamName(streams[0]) +
                         " captures a CUDA graph, but " + firstHostStage(prog) +
                         " runs on a host thread (MPI or UCX between hosts, or ranks sharing a "
                         "GPU), which a graph cannot hold: only calls whose every stage a stream "
                         "carries (nccl, local copies) can be captured"));
      }
    }
    streamSteps = streamSteps || hasStreamSteps(prog);
    scratch = std::max(scratch, prog.scratchBytes);
  }
  STRATA_RETURN_IF_ERROR(c.engine().error());
  {
    const Status grown = ensureScratch(c, me, scratch, cap.active, what);
    if (!grown.isOk()) {
      return grown.code() == Code::kInvalidUsage ? refused(c, calls, grown)
                                                 : setupFailed(c, grown, "device scratch");
    }
  }
  DeviceState& d = *c.device();
  if (allStream) return enqueueStream(c, calls, streams, cap);
  if (calls.size() == 1) return submitJoined(c, calls[0], streams[0]);
  if (d.gate && !streamSteps) {
    // Host stages only: the whole group behind one gate per stream.
    return gated(c, streams, calls[0].call.seq, [&c, calls] { return runOnCommStream(c, calls); });
  }
  // Stream steps and host stages in one group (or no progress thread): here, waited for.
  STRATA_RETURN_IF_ERROR(c.quiesce(me));
  for (cudaStream_t s : streams) {
    const Status synced = bounded(c, calls[0].call, calls.size(), [&](RunningCall) -> Status {
      STRATA_CUDA_CHECK(cudaStreamSynchronize(s));
      return Status::ok();
    });
    STRATA_RETURN_IF_ERROR(synced);
  }
  return runOnCommStream(c, calls);
}

#endif  // STRATA_HAVE_CUDA

}  // namespace strata::core
