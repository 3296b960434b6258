// The dispatcher: runs a collective's schedule on the fabrics of the communicator's levels.
//
// Arguments are validated by the C boundary (src/api) before they get here.
#pragma once

#include <cstddef>

#include "common/status.h"
#include "core/comm.h"

namespace strata::core {

// Elements of one pass (STRATA_CHUNK_BYTES worth, at least one): a larger allreduce runs as
// passes of this many elements and a shorter last one, each under the plan for its bytes.
size_t passElements(const strataComm& c, size_t ts);

Status allReduce(strataComm& c, const void* send, void* recv, size_t count, strataDataType_t type,
                 strataRedOp_t op);
// An allreduce under a given plan instead of the planner's or the plan file's choice (strata-tune
// and the plan tests). Every rank must pass the same plan.
Status allReduceWithPlan(strataComm& c, const plan::Plan& p, const void* send, void* recv,
                         size_t count, strataDataType_t type, strataRedOp_t op);
Status reduceScatter(strataComm& c, const void* send, void* recv, size_t recvcount,
                     strataDataType_t type, strataRedOp_t op);
Status allGather(strataComm& c, const void* send, void* recv, size_t sendcount,
                 strataDataType_t type);

}  // namespace strata::core
