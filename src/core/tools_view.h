// What strata's own tools (strata-tune, strata-plan) may see of a communicator, and the one call
// they make past the planner. Tools include this, never core/comm.h, so that the communicator's
// insides can change without them; api/tools_view.h hands one out for a strataComm_t.
//
// Threads: the issuing thread only, like setup (preparePlan is setup; allReduceWithPlan is a
// blocking call).
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "common/status.h"
#include "decompose/cost_model.h"
#include "decompose/plan.h"
#include "decompose/plan_file.h"
#include "decompose/schedule.h"
#include "strata/strata.h"
#include "topology/hierarchy.h"

namespace strata::core {

class ToolsView {
 public:
  virtual ~ToolsView() = default;

  // Who the communicator is and what it was built from (Comm's accessors of the same names).
  virtual int rank() const = 0;
  virtual int size() const = 0;
  virtual const topo::Hierarchy& hierarchy() const = 0;
  // Where the hierarchy came from: "detected: ...", a topology file, ...
  virtual const std::string& hierarchySource() const = 0;
  virtual const std::vector<plan::PlanRule>& planRules() const = 0;  // empty: no plan file
  // The plan file's pinned reduce-scatter and all-gather forms (empty lists: the planner's).
  virtual const plan::BlockRules& blockRules() const = 0;
  virtual const std::string& planSource() const = 0;
  virtual const plan::CostParams& costParams() const = 0;

  // The communicator's own control plane (for boot::agree over its ranks).
  virtual boot::Bootstrap& bootstrap() = 0;
  // The control plane of this rank's group at `level` of the hierarchy; null when the rank is
  // not a member of one (a level the communicator made no group for).
  virtual boot::Bootstrap* levelBootstrap(int level) = 0;

  // Makes `p`'s stage groups and fabrics now (collective, the same plans in the same order on
  // every rank), so that a timed call pays for no setup.
  virtual Status preparePlan(const plan::Plan& p) = 0;
  // An allreduce on host buffers under `p` instead of the planner's choice (core::
  // allReduceWithPlan): bounded and failing as every call does. Every rank passes the same plan.
  virtual Status allReduceWithPlan(const plan::Plan& p, const void* send, void* recv, size_t count,
                                   strataDataType_t type, strataRedOp_t op) = 0;
  // A reduce-scatter or all-gather on host buffers in `form` (core::blocksWithForm; count:
  // elements per rank's block). Every rank passes the same form.
  virtual Status blocksWithForm(Collective coll, plan::BlockForm form, const void* send, void* recv,
                                size_t count, strataDataType_t type, strataRedOp_t op) = 0;
};

}  // namespace strata::core
