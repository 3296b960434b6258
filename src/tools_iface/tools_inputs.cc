#include "tools_iface/tools_inputs.h"

#include "bootstrap/mpi_bootstrap.h"
#include "common/env.h"
#include "core/plan_load.h"
#include "fabrics/registry.h"

#ifdef STRATA_HAVE_CUDA
#include "fabrics/nccl/nccl_lib.h"
#include "gpu/device.h"
#endif

namespace strata::tools_iface {

std::vector<std::string> fabricNames() { return fabric::fabricNames(); }

std::vector<FabricTraits> fabricTraits() { return fabric::allTraits(); }

StatusOr<plan::PlanFile> loadPlanFile(const std::string& path) { return plan::loadPlanFile(path); }

DeviceRuntime deviceRuntime() {
  DeviceRuntime out;
#ifdef STRATA_HAVE_CUDA
  out.built = true;
  out.visibleGpus = gpu::visibleDevices();
  const nccl_lib::Api* nccl =
      nccl_lib::load(env::get(env::var::STRATA_NCCL_REAL_LIB).c_str(), &out.ncclWhy);
  if (nccl != nullptr) {
    out.ncclLoadable = true;
    out.ncclPath = nccl->path;
    if (nccl->ncclGetVersion != nullptr) nccl->ncclGetVersion(&out.ncclVersion);
  }
#endif
  return out;
}

Status agreeOver(MPI_Comm comm, const Status& local) { return boot::agreeOver(comm, local); }

}  // namespace strata::tools_iface
