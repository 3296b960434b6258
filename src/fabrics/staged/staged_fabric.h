// The staged fabric: a host fabric (mpi or shm) run on device buffers through pinned host
// memory, for MPI libraries that cannot read GPU memory and for groups whose members share a
// GPU (NCCL refuses those). Only built with CUDA.
//
// A call is cut into chunks that fit one pinned slot (staging_plan.h). Three slots
// rotate, so that the device-to-host copy of chunk k+1, the host collective of chunk k and the
// host-to-device copy of chunk k-1 run at once (copies on two streams of their own, one per
// direction; the host collective on the calling thread). Horovod's hierarchical allreduce
// copies the whole buffer down, reduces, and copies it back, one after the other; here only
// the first chunk's copy down and the last one's copy up are not overlapped.
//
// Invariants: slot s is refilled (chunk k+3) only after the copy up of chunk k, which read it,
// finished (an event the down stream waits on); chunk k's host collective starts only after
// its copy down finished (the host waits for that event); chunks cover disjoint columns, so an
// in-place call never reads a column a later copy up writes. Each call starts after the work
// already queued on the communicator's stream and returns once its result is in device memory.
// A CUDA failure on one member does not stop its host collectives (its peers would wait for
// ever): the member goes on with whatever the slot holds and reports the failure at the end.
#pragma once

#include <memory>

#include "bootstrap/bootstrap.h"
#include "common/fabric_traits.h"
#include "fabrics/fabric.h"

namespace strata::fabric {

// Device memory, any members (as its host fabric), synchronous, wraps a host fabric.
FabricTraits stagedTraits();

// `host` (not owned) must outlive the fabric; the work is ordered on options.stream (the
// communicator's) and cut into slots of options.stagingBytes. Local: no member talks to another
// beyond what `host` does.
StatusOr<std::unique_ptr<Fabric>> createStagedFabric(boot::Bootstrap& group, Fabric* host,
                                                     const FabricOptions& options);

}  // namespace strata::fabric
