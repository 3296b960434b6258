// strata's tools interface, part 2: what a tool reads from the library without a communicator:
// the fabrics a topology or plan file may name and the traits the cost model prices, plan files
// read as STRATA_PLAN_FILE reads them, the device runtime and NCCL this process finds, and
// agreement over an MPI communicator before a strata
// communicator exists. Part 1, tools_comm.h, is the communicator. Tools include these rather
// than the fabric registry, the control plane or core's plan-file reader, so that each keeps
// one implementation and the tools one door (docs/architecture.md, "Tools").
#pragma once

#include <mpi.h>

#include <string>
#include <vector>

#include "common/fabric_traits.h"
#include "common/status.h"
#include "decompose/plan_file.h"

namespace strata::tools_iface {

// The host fabrics' names: what a topology or plan file may name for a level ("mpi", "shm"),
// the list topo::loadTopoFile and plan::resolvePlanFile check names against.
std::vector<std::string> fabricNames();

// The traits of every fabric of this build, for the cost model (plan::CostParams::fabrics).
std::vector<FabricTraits> fabricTraits();

// The plan file at `path`, read (bounded: a FIFO, /dev/zero or a huge file is refused) and
// parsed as STRATA_PLAN_FILE is at init; resolve it with plan::resolvePlanFile and
// fabricNames(). Does not log. A file that is not there or cannot be read is kSystemError.
StatusOr<plan::PlanFile> loadPlanFile(const std::string& path);

// The device side as this process finds it now (strata-info): the GPUs it sees and the NCCL the
// nccl fabric would load (STRATA_NCCL_REAL_LIB first, as the fabric asks). In a build without
// the GPU parts, `built` is false and nothing else is looked at.
struct DeviceRuntime {
  bool built = false;         // this build has the GPU parts (CUDA and NCCL's header)
  int visibleGpus = 0;        // CUDA devices visible to this process
  bool ncclLoadable = false;  // the real NCCL could be loaded
  std::string ncclPath;       // the file loaded, when loadable
  int ncclVersion = 0;        // its ncclGetVersion code; 0 when it has none
  std::string ncclWhy;        // where it looked and what failed, when not loadable
};
DeviceRuntime deviceRuntime();

// Makes a local outcome collective over `comm`, an MPI communicator the caller owns (tools agree
// on their command line's checks before they make a strata communicator): every rank returns
// the failure of the lowest failing rank, or ok. Collective over `comm`.
Status agreeOver(MPI_Comm comm, const Status& local);

}  // namespace strata::tools_iface
