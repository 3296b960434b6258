// What the owners of a communicator's setup state (core/group_table.h, core/plan_book.h) read
// of it, handed to them once (bind) when its identity, settings and hierarchy are known: in
// Comm::init and Comm::initFrom, before the first group or plan is made. The owners keep no
// reference to the communicator itself.
#pragma once

#include <cstdint>
#include <functional>

#include "bootstrap/bootstrap.h"
#include "common/status.h"
#include "core/settings.h"
#include "decompose/cost_model.h"
#include "fabrics/fabric.h"
#include "topology/hierarchy.h"

namespace strata::core {

struct SetupContext {
  boot::Bootstrap* boot = nullptr;  // the communicator's control plane (collective setup)
  const topo::Hierarchy* hierarchy = nullptr;
  const Settings* settings = nullptr;
  const fabric::FabricOptions* fabrics = nullptr;
  const plan::CostParams* cost = nullptr;
  // Runs the calls queued so far (Engine::drain), before a setup that talks to other ranks.
  std::function<Status()> quiesce;
  int rank = 0;
  int size = 0;
  uint64_t hash = 0;  // Comm::hash(), for log lines
};

}  // namespace strata::core
