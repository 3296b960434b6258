// Groups (strataGroupStart/End) at the C boundary: per thread, as NCCL's. Inside a group each
// collective entry validates its arguments and records the call here instead of issuing it;
// the outermost strataGroupEnd issues the recorded calls, communicator by communicator in the
// order of their ids, which every rank shares (core/calls.h: issueGroup).
#pragma once

#include "api/handle.h"
#include "api/request.h"
#include "core/calls.h"

namespace strata::api {

// Whether the calling thread is inside a group.
bool inGroup();
// Records a validated call of `comm` (with the request of a nonblocking call, else null).
void record(strataComm_t comm, const core::GroupCall& call, strataRequest* request);
void groupStart();
// Ends one level of nesting; the outermost issues the group. Returns the first error, and in
// *comm the communicator it belongs to (null for a usage error with no communicator).
Status groupEnd(strataComm_t* comm);

}  // namespace strata::api
