// The `shm` fabric: the ranks of one host combine through a shared-memory segment of strata's
// own (shm_segment.h), without MPI on the fast path.
//
// Each member owns two slots of `slotBytes` in the window (double buffering: see the protocol
// in shm_fabric.cc). An allreduce copies its input into its slot once; then every member
// reduces its own shard straight from all members' slots in one pass (reduceMany) and everyone
// copies the whole result out. Calls larger than a slot run slot-sized pieces.
#pragma once

#include <memory>

#include "bootstrap/bootstrap.h"
#include "common/fabric_traits.h"
#include "fabrics/fabric.h"

namespace strata::fabric {

// Host memory, one host, synchronous; costed as copies through shared slots.
FabricTraits shmTraits();

// Collective over `group` (any bootstrap). The rooted operations and point-to-point run on a
// partner fabric over the same group: netFabric(group, options.net), i.e. mpi on the group's
// communicator, or ucx under STRATA_NET=ucx or a control plane that is not MPI. Fails (on every member) when the group's ranks do not all share memory,
// i.e. span hosts (a member cannot open the segment). Slots of options.shmSlotBytes.
StatusOr<std::unique_ptr<Fabric>> createShmFabric(boot::Bootstrap& group, Fabric* host,
                                                  const FabricOptions& options);

}  // namespace strata::fabric
