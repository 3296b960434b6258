// strata's tools interface, part 1: what strata's own tools (strata-tune, strata-plan --live) may
// see of a communicator they made with the public strataCommInitMPI, and the calls they make
// past the planner. It is the one door from tools/ into a communicator: tools include this,
// never a header of src/core or src/api (tests/unit/test_layering.cc), so that the
// communicator's insides can change without them. Built as its own library,
// strata_tools_iface; docs/architecture.md, "Tools", says what a tool may include.
//
// Threads: the issuing thread only, like setup (preparePlan is setup; allReduceWithPlan and
// blocksWithForm are blocking calls; agree and gatherCluster are collective over the
// communicator's ranks).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "common/collective.h"
#include "common/status.h"
#include "decompose/cost_model.h"
#include "decompose/plan.h"
#include "decompose/plan_file.h"
#include "decompose/schedule.h"
#include "strata/strata.h"
#include "topology/cluster_exchange.h"
#include "topology/hierarchy.h"

namespace strata::tools_iface {

class ToolsComm {
 public:
  virtual ~ToolsComm() = default;

  // Who the communicator is and what it was built from.
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

  // Makes a local outcome collective over the communicator's ranks, on its own control plane:
  // when any rank's `local` failed, every rank returns the failure of the lowest failing rank
  // (its message prefixed with that rank on the others). Collective.
  virtual Status agree(const Status& local) = 0;

  // The cluster the communicator's ranks run on, gathered as init gathers it and over its own
  // control plane (topology/cluster_exchange.h): every rank's place (host by the name the
  // communicator groups by, package, GPU) and each host's node as its lowest rank describes it
  // now, with what that rank could not read. Every rank gets the same. Collective.
  virtual StatusOr<topo::GatheredCluster> gatherCluster() = 0;

  // Makes `p`'s stage groups and fabrics now (collective, the same plans in the same order on
  // every rank), so that a timed call pays for no setup.
  virtual Status preparePlan(const plan::Plan& p) = 0;
  // An allreduce on host buffers under `p` instead of the planner's choice: bounded and failing
  // as every call does. Every rank passes the same plan.
  virtual Status allReduceWithPlan(const plan::Plan& p, const void* send, void* recv, size_t count,
                                   strataDataType_t type, strataRedOp_t op) = 0;
  // A reduce-scatter or all-gather on host buffers in `form` (count: elements per rank's block).
  // Every rank passes the same form.
  virtual Status blocksWithForm(Collective coll, plan::BlockForm form, const void* send, void* recv,
                                size_t count, strataDataType_t type, strataRedOp_t op) = 0;
};

// The tools' view of the communicator behind `comm`; null for a handle that names no live,
// initialised communicator. Valid until `comm` is destroyed.
std::unique_ptr<ToolsComm> toolsCommOf(strataComm_t comm);

}  // namespace strata::tools_iface
