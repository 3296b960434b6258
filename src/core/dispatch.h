// The dispatcher: runs a collective's schedule on the fabrics of the communicator's levels.
//
// Arguments are validated by the C boundary (src/api) before they get here.
#pragma once

#include <cstddef>

#include "common/status.h"
#include "core/comm.h"

namespace strata::core {

Status allReduce(strataComm& c, const void* send, void* recv, size_t count, strataDataType_t type,
                 strataRedOp_t op);
Status reduceScatter(strataComm& c, const void* send, void* recv, size_t recvcount,
                     strataDataType_t type, strataRedOp_t op);
Status allGather(strataComm& c, const void* send, void* recv, size_t sendcount,
                 strataDataType_t type);

}  // namespace strata::core
