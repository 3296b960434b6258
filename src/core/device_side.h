// The GPU path: calls on CUDA device buffers, ordered on the caller's stream.
//
// The C boundary asks placeOf() where a call's buffers live. prepare() sets a device call's
// groups up (setUpDevice, here) and gives its program a route (core/route.h); submitDevice()
// (core/device_submit.cc) follows the route: the stream-ordered parts are enqueued on the
// caller's stream by the calling thread, the host stages run on the progress thread behind a
// stream gate (gpu/stream_gate.h), or on the calling thread, which then waits, without one. In
// a build without CUDA every buffer is host memory.
#pragma once

#include <vector>

#include "common/collective.h"
#include "common/status.h"
#include "core/comm.h"
#include "core/run.h"
#include "strata/strata.h"

namespace strata::core {

enum class Place { kHost, kDevice };

// Where the buffers of one call live. Null pointers (count 0) do not count. Refuses a call that
// mixes host and device memory, naming which buffer is where.
StatusOr<Place> placeOf(const Comm& c, const void* send, const void* recv);

// Part of prepare() (core/prepare.h) for every device call: on the first call of its
// (collective, count, type), the device state when there is none, then the device fabric of
// every group the call's program `prog` runs on (groupsOf) that has none, after the calls already
// queued ran (NCCL's init must not meet a gated stream). Collective, issuing thread.
// `capturing` (the call's stream captures a CUDA graph): nothing that needs CUDA may be made
// (NCCL's init, a stream, pinned memory). The ranks agree whether any of them would have to
// make a device fabric; if one would, every rank refuses the call with strataInvalidUsage
// (saying it "cannot be captured"), at the same point, so the communicator stays usable.
Status setUpDevice(Comm& c, IssuingThread me, const Call& call, const Program& prog,
                   bool capturing = false);

// Whether `stream` is capturing a CUDA graph, and its capture's id. An error from CUDA (e.g. the
// legacy stream while another thread captures) is returned as is.
struct Capture {
  bool active = false;
  unsigned long long id = 0;
};
StatusOr<Capture> captureOf(strataStream_t stream);

// Whether `stream` captures; refuses a device call made while it does on a communicator whose
// device side does not exist yet (checked before the call is numbered, so that nothing of it
// happened): making it creates streams and pinned memory, which a capture forbids. Issuing
// thread.
StatusOr<Capture> checkCaptureSetup(Comm& c, strataStream_t stream);

// Runs `calls` (prepared for device memory by the issue path, core/calls.cc, each of count > 0)
// on device buffers (one call, or a group's device calls on this communicator: run.h runGroup),
// ordered on `streams` (one per call): they start after the work queued on every one of them,
// and the work queued on any of them afterwards sees every result. Issuing thread.
Status submitDevice(Comm& c, IssuingThread me, const std::vector<Prepared>& calls,
                    const std::vector<strataStream_t>& streams);

}  // namespace strata::core
