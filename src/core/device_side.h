// The GPU path: calls on CUDA device buffers, ordered on the caller's stream.
//
// The C boundary asks placeOf() where a call's buffers live. Device calls go through
// submitDevice(): with a progress thread (the engine is threaded: STRATA_PROGRESS=1 and
// MPI initialised with MPI_THREAD_MULTIPLE) it queues the call behind a stream gate
// (gpu/stream_gate.h) and returns, NCCL-style; otherwise it waits for the stream, runs the call
// on the calling thread and returns when the result is in place. Either way the dispatcher runs
// it through a DeviceExecutor: copies, scratch and the average's division on the GPU, and each
// group on its device fabric (fabrics/device_choice.h). In a build without CUDA every buffer is
// host memory.
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
Status setUpDevice(Comm& c, IssuingThread me, const Call& call, const Program& prog);

// Runs `calls` (prepared for device memory by the issue path, core/calls.cc, each of count > 0)
// on device buffers (one call, or a group's device calls on this communicator: run.h runGroup),
// ordered on `streams` (one per call; see the top of this file): they
// start after the work queued on every one of them, and the work queued on any of them
// afterwards sees every result.
Status submitDevice(Comm& c, const std::vector<Prepared>& calls,
                    const std::vector<strataStream_t>& streams);

}  // namespace strata::core
