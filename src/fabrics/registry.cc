#include "fabrics/registry.h"

#include "fabrics/mpi/mpi_fabric.h"
#include "fabrics/shm/shm_fabric.h"
#include "fabrics/ucx/ucx_fabric.h"
#ifdef STRATA_HAVE_CUDA
#include "fabrics/local/local_fabric.h"
#include "fabrics/mpi_cuda/mpi_cuda_fabric.h"
#include "fabrics/nccl/nccl_fabric.h"
#include "fabrics/staged/staged_fabric.h"
#endif

namespace strata::fabric {

thread_local Fabric* IdleHook::current_ = nullptr;

const std::vector<FabricEntry>& fabricTable() {
  static const std::vector<FabricEntry> table = {
      {mpiTraits(), createMpiFabric},       {shmTraits(), createShmFabric},
      {ucxTraits(), createUcxFabric},
#ifdef STRATA_HAVE_CUDA
      {ncclTraits(), createNcclFabric},     {mpiCudaTraits(), createMpiCudaFabric},
      {stagedTraits(), createStagedFabric}, {localTraits(), createLocalFabric},
#endif
  };
  return table;
}

std::vector<FabricTraits> allTraits() {
  std::vector<FabricTraits> out;
  for (const FabricEntry& e : fabricTable()) out.push_back(e.traits);
  return out;
}

std::vector<std::string> fabricNames() {
  std::vector<std::string> out;
  for (const FabricEntry& e : fabricTable()) {
    if (e.traits.memory == MemoryKind::kHost) out.push_back(e.traits.name);
  }
  return out;
}

std::string netFabric(boot::Bootstrap& control, const std::string& net) {
  return control.runsOnMpi() ? net : "ucx";
}

StatusOr<std::unique_ptr<Fabric>> createFabric(const std::string& name, boot::Bootstrap& group,
                                               const FabricOptions& options, Fabric* host) {
  for (const FabricEntry& e : fabricTable()) {
    if (e.traits.name != name) continue;
    if (e.traits.wrapsHost && host == nullptr) {
      return internalError("fabric " + name + " needs the group's host fabric");
    }
    return e.make(group, host, options);
  }
  return invalidArgument("unknown fabric '" + name + "'");
}

}  // namespace strata::fabric
