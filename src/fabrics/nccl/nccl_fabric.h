// The `nccl` fabric: a level's group runs NCCL's collectives on CUDA device buffers, one NCCL
// communicator per group, bootstrapped over the group's control plane (its unique id broadcast
// through the bootstrap). Only built with CUDA and NCCL (STRATA_HAVE_CUDA).
//
// Stream-ordered (Fabric::streamOrdered): every operation only enqueues, on the stream last
// given to useStream (the communicator's until then), as NCCL's own calls do; the caller orders
// what follows on that stream or waits for it. So the asynchronous allreduce's start and wait
// are its enqueue and nothing, and progress() does nothing (the GPU advances on its own).
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
// refused by NCCL, and the caller (the device-fabric factory) never asks for it then.
// options.stream (a non-blocking stream the caller owns and keeps alive for the fabric's life)
// is where work runs until useStream names another, and what the destructor drains. A group of one member works (NCCL supports one-rank communicators).
StatusOr<std::unique_ptr<Fabric>> createNcclFabric(boot::Bootstrap& group, Fabric* host,
                                                   const FabricOptions& options);

}  // namespace strata::fabric
