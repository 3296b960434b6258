// The `local` fabric: a group of one member on device buffers. Every collective is a device
// copy (or nothing, in place), only enqueued on the stream in force (Fabric::streamOrdered): no NCCL
// bootstrap (which needs a network interface) for a group that exchanges nothing. Only built
// with CUDA.
#pragma once

#include <memory>

#include "bootstrap/bootstrap.h"
#include "common/fabric_traits.h"
#include "fabrics/fabric.h"

namespace strata::fabric {

// Device memory, one member (so one host), stream-ordered.
FabricTraits localTraits();

StatusOr<std::unique_ptr<Fabric>> createLocalFabric(boot::Bootstrap& group, Fabric* host,
                                                    const FabricOptions& options);

}  // namespace strata::fabric
