// The `nccl` fabric: a level's group runs NCCL's collectives on CUDA device buffers, one NCCL
// communicator per group, bootstrapped over the group's control plane (its unique id broadcast
// through the bootstrap). Only built with CUDA and NCCL (STRATA_HAVE_CUDA).
//
// Every operation enqueues on the fabric's stream and waits for it before returning, so the
// caller (a progress thread) sees the result at return. The exception is the asynchronous
// allreduce: allReduceStart only enqueues, allReduceWait waits for the stream, and progress()
// does nothing (the GPU advances on its own).
#pragma once

#include <memory>

#include "bootstrap/bootstrap.h"
#include "common/fabric_traits.h"
#include "fabrics/fabric.h"

namespace strata::fabric {

// Device memory, one host (as strata chooses it: device_choice.h), asynchronous.
FabricTraits ncclTraits();

// Creates the nccl fabric over `group` (the level group's bootstrap, used once for NCCL's
// unique id and the outcome of every member's init). Collective over `group`: a failure on any
// member (making the NCCL id on member 0, or any member's communicator init) fails every member.
// Every member must have called cudaSetDevice on a GPU of its own: members sharing a GPU are
// refused by NCCL, and the caller (the device-fabric factory) never asks for it then. All work
// runs on options.stream (a non-blocking stream the caller owns and keeps alive for the
// fabric's life). A group of one member works (NCCL supports one-rank communicators).
StatusOr<std::unique_ptr<Fabric>> createNcclFabric(boot::Bootstrap& group, Fabric* host,
                                                   const FabricOptions& options);

}  // namespace strata::fabric
