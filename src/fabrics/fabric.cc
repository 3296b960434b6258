#include "fabrics/fabric.h"

#include "fabrics/mpi/mpi_fabric.h"
#include "fabrics/shm/shm_fabric.h"

namespace strata::fabric {

thread_local Fabric* IdleHook::current_ = nullptr;

std::vector<std::string> fabricNames() { return {"mpi", "shm"}; }

StatusOr<std::unique_ptr<Fabric>> createFabric(const std::string& name, MPI_Comm group,
                                               const FabricOptions& options) {
  if (name == "mpi") return createMpiFabric(group);
  if (name == "shm") return createShmFabric(group, options.shmSlotBytes);
  return invalidArgument("unknown fabric '" + name + "'");
}

}  // namespace strata::fabric
