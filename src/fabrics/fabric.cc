#include "fabrics/fabric.h"

#include "fabrics/mpi/mpi_fabric.h"

namespace strata::fabric {

std::vector<std::string> fabricNames() { return {"mpi"}; }

StatusOr<std::unique_ptr<Fabric>> createFabric(const std::string& name, MPI_Comm group) {
  if (name == "mpi") return createMpiFabric(group);
  return invalidArgument("unknown fabric '" + name + "'");
}

}  // namespace strata::fabric
