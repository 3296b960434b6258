// The `ucx` fabric: a level's group exchanges tagged messages over UCX (UCP), on whatever
// transports UCX finds (tcp, shared memory, cma, ...), with the collectives of
// fabrics/p2p/ (rings, direct rooted operations). It needs only a Bootstrap to connect, so it
// is the inter-host engine of communicators whose control plane is not MPI, and the choice
// of STRATA_NET=ucx for those made from MPI.
#pragma once

#include <memory>

#include "bootstrap/bootstrap.h"
#include "common/fabric_traits.h"
#include "fabrics/fabric.h"

namespace strata::fabric {

// Host memory, any members, asynchronous (allReduceStart runs the p2p ring); costed as
// messages like mpi.
FabricTraits ucxTraits();

// Collective over `group` (any bootstrap): every member connects to every member.
StatusOr<std::unique_ptr<Fabric>> createUcxFabric(boot::Bootstrap& group, Fabric* host,
                                                  const FabricOptions& options);

}  // namespace strata::fabric
