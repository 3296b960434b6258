// The one table of fabrics: each registers its traits (common/fabric_traits.h: the memory it
// takes, whether its members must share a host, whether it runs asynchronously, cost hints)
// and its factory. Topology and plan files, the planner and the device-fabric choice all
// find fabrics here; nothing else names them.
#pragma once

#include <memory>
#include <string>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "common/fabric_traits.h"
#include "fabrics/fabric.h"

namespace strata::fabric {

// Makes a fabric over the group whose control plane is `group` (the fabric keeps a reference:
// the group outlives it). `host` is the group's host fabric for fabrics that wrap one
// (traits.wrapsHost), else null. Collective over `group`: every member gets a fabric, or every
// member an error.
using FabricFactory = StatusOr<std::unique_ptr<Fabric>> (*)(boot::Bootstrap& group, Fabric* host,
                                                            const FabricOptions& options);

struct FabricEntry {
  FabricTraits traits;
  FabricFactory make;
};

// Every fabric of this build (the device fabrics only in builds with CUDA).
const std::vector<FabricEntry>& fabricTable();
// Their traits, for the planner (plan::CostParams::fabrics).
std::vector<FabricTraits> allTraits();
// The host fabrics' names: what a topology or plan file may name for a level ("mpi", "shm").
std::vector<std::string> fabricNames();

// The fabric that carries messages between hosts for a communicator over `control`: its
// inter-host levels, and the shm fabric's rooted operations and exchanges. `net` is what
// STRATA_NET asked ("mpi" or "ucx"); a control plane that is not MPI (Bootstrap::runsOnMpi is
// false) always gets "ucx", since mpi cannot run there.
std::string netFabric(boot::Bootstrap& control, const std::string& net);

StatusOr<std::unique_ptr<Fabric>> createFabric(const std::string& name, boot::Bootstrap& group,
                                               const FabricOptions& options = {},
                                               Fabric* host = nullptr);

}  // namespace strata::fabric
