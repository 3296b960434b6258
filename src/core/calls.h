// Issuing validated calls on a communicator: where their buffers live decides how they run.
//
// Host buffers: a blocking call runs on the calling thread after every call queued before it;
// a nonblocking call is queued on the engine (core/engine.h) and returns its ticket. Device
// buffers: ordered on the caller's stream (core/device_side.h). A group's calls on one
// communicator run together (core/run.h: runGroup).
#pragma once

#include <cstdint>
#include <vector>

#include "common/collective.h"
#include "common/status.h"
#include "core/comm.h"
#include "decompose/plan.h"
#include "decompose/schedule.h"
#include "strata/strata.h"

namespace strata::core {

// One call of a group (strataGroupStart/End), as the C boundary validated it.
struct GroupCall {
  Call call;
  strataStream_t stream = nullptr;
  bool nonblocking = false;  // strataI*: the group need not wait for it
};

Status issue(Comm& c, const Call& call, strataStream_t stream);

// A nonblocking call on host buffers: queued, returns its engine ticket at once. Device
// buffers are refused (they have the stream-ordered calls).
StatusOr<uint64_t> issueNonblocking(Comm& c, const Call& call);

// A group's calls on `c`, in call order. Device calls run as one stream-ordered call gated on
// every stream they name; host calls as one queued call, waited for unless all of them are
// nonblocking. Returns the host call's ticket (0: the group had no host call).
StatusOr<uint64_t> issueGroup(Comm& c, const std::vector<GroupCall>& calls);

// strataIprobe: whether a point-to-point message on host buffers waits for this rank, from
// `peer` or any rank (-1): Fabric::probe on the flat group, which carries every host send and
// receive. Runs after the queued calls, on the calling thread; a failure puts the
// communicator in its error state, since a fabric that failed is in an unknown state.
Status probe(Comm& c, int peer, bool* found, int* source, size_t* bytes);

// An allreduce on host buffers under a given plan for every pass instead of the planner's
// (strata-tune and the plan tests), after the queued calls, bounded and failing as issue()
// does. Every rank must pass the same plan.
Status allReduceWithPlan(Comm& c, const plan::Plan& p, const void* send, void* recv, size_t count,
                         strataDataType_t type, strataRedOp_t op);
// A reduce-scatter or all-gather (`coll`; count: elements per rank's block, as the API's) on host
// buffers in `form` instead of the planner's or the plan file's (strata-tune). A hierarchical
// form the layout cannot run is refused (kInvalidArgument) before any rank communicates. Every
// rank must pass the same form.
Status blocksWithForm(Comm& c, Collective coll, plan::BlockForm form, const void* send, void* recv,
                      size_t count, strataDataType_t type, strataRedOp_t op);

}  // namespace strata::core
