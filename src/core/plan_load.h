// Plan files at the edge: reading STRATA_PLAN_FILE from disk and logging what is wrong with it,
// apart from the pure parsing and checking of decompose/plan_file.h. Open MPI's coll/han keeps
// reading its rules file apart from choosing with it in the same way: the planner's layer does
// no I/O and no logging, so it can be run and tested as a function.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "decompose/plan_file.h"
#include "topology/hierarchy.h"

namespace strata::plan {

// Reads the file at `path` (bounded: a FIFO, /dev/zero or a huge file is refused, never waited
// on) and parses it with parsePlanFile. Does not log. A file that is not there or cannot be read
// is kSystemError ("plan file x.yaml: file not found").
StatusOr<PlanFile> loadPlanFile(const std::string& path);

}  // namespace strata::plan

namespace strata::core {

// The rules of the plan file at `path` for `h`: read, parsed and resolved against `fabrics`;
// `*layout` gets the layout the file records (empty when it records none or cannot be read), and
// `*blocks` (when given) its form rules of reduce-scatter and all-gather. A failure is logged
// once here (WARN, PLAN) and comes back marked logged.
StatusOr<std::vector<plan::PlanRule>> loadPlanRules(const std::string& path,
                                                    const topo::Hierarchy& h,
                                                    const std::vector<std::string>& fabrics,
                                                    std::string* layout,
                                                    plan::BlockRules* blocks = nullptr);

}  // namespace strata::core
