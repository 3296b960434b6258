// Validated C arguments into a Call (common/collective.h), shared by the entry points of
// collectives.cc and exchanges.cc.
#pragma once

#include <cstddef>

#include "api/handle.h"
#include "common/collective.h"
#include "common/status.h"

namespace strata::api {

// `type` and `op` were validated (checkTypeOp): only now do they become enum values.
Call makeCall(Collective coll, const void* send, void* recv, size_t count, int type, int op,
              int root);
// strataInvalidArgument unless `rank` is a rank of `comm`; `what` names it ("root", "peer").
Status checkRank(const CommEntry& comm, int rank, const char* what);

}  // namespace strata::api
