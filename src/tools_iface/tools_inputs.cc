#include "tools_iface/tools_inputs.h"

#include "bootstrap/mpi_bootstrap.h"
#include "core/plan_load.h"
#include "fabrics/registry.h"

namespace strata::tools_iface {

std::vector<std::string> fabricNames() { return fabric::fabricNames(); }

std::vector<FabricTraits> fabricTraits() { return fabric::allTraits(); }

StatusOr<plan::PlanFile> loadPlanFile(const std::string& path) { return plan::loadPlanFile(path); }

Status agreeOver(MPI_Comm comm, const Status& local) { return boot::agreeOver(comm, local); }

}  // namespace strata::tools_iface
