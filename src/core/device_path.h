// The GPU path: collectives on CUDA device buffers, ordered on the caller's stream.
//
// The C boundary asks placeOf() where a call's buffers live. Host calls run as before, on the
// calling thread, after drainDevice() has let every device call queued before them finish (a
// communicator's collectives run in the order they were called, on every rank). Device calls
// go through submitDevice(): with a progress thread (STRATA_GPU_PROGRESS=1 and MPI initialised
// with MPI_THREAD_MULTIPLE) it enqueues and returns, NCCL-style; otherwise it runs the call on
// the calling thread and returns when the result is in place.
//
// While a device call runs, c.onDevice is set and the dispatcher reaches memory and fabrics only
// through the helpers below: copies, scratch and the average's division go to the GPU, and each
// level runs on its device fabric (nccl, or mpi on device or staged buffers; see
// gpu/device_fabric.h). In a host-only build every buffer is host memory and the helpers are
// the host ones.
#pragma once

#include <cstddef>

#include "common/status.h"
#include "core/comm.h"
#include "strata/strata.h"

namespace strata::core {

enum class Place { kHost, kDevice };

// Where the buffers of one call live. Null pointers (count 0) do not count. Refuses a call that
// mixes host and device memory, naming which buffer is where.
StatusOr<Place> placeOf(const strataComm& c, const void* send, const void* recv);

// Waits until every device call queued on `c` has run. Returns the first error a queued call
// met (and keeps it: the communicator is unusable after an asynchronous failure, as NCCL's).
Status drainDevice(strataComm& c);

// The asynchronous error of `c`, if a device call failed after its call returned (what
// strataCommGetAsyncError reports); ok otherwise. Never blocks.
Status asyncError(const strataComm& c);

enum class CollKind { kAllReduce, kReduceScatter, kAllGather };

// One collective call, as the C boundary validated it.
struct DeviceCall {
  CollKind kind = CollKind::kAllReduce;
  const void* send = nullptr;
  void* recv = nullptr;
  size_t count = 0;  // count, recvcount or sendcount
  strataDataType_t type = strataFloat32;
  strataRedOp_t op = strataSum;
};

// Runs `call` on device buffers, ordered on `stream` (see the top of this file).
Status submitDevice(strataComm& c, strataStream_t stream, const DeviceCall& call);

// --- Helpers for the dispatcher: host or device memory, as c.onDevice says. ---------------

// dst <- src, `bytes` bytes (no overlap).
Status copyBytes(strataComm& c, void* dst, const void* src, size_t bytes);
// buf[i] /= divisor (finishing strataAvg).
Status divideBy(strataComm& c, void* buf, size_t count, strataDataType_t type, int divisor);
// Working memory of at least `bytes`, reused across calls.
StatusOr<void*> scratchBytes(strataComm& c, size_t bytes);
// The fabric of a level group (nullptr: the whole communicator's), for the current call's
// memory. A device fabric missing here is a broken invariant: submitDevice makes every one a
// call needs before the call runs.
StatusOr<fabric::Fabric*> fabricOf(strataComm& c, LevelGroup* g);

}  // namespace strata::core
