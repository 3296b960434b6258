// The handle behind strataRequest_t: the engine that runs the call and the call's ticket on
// it. It holds the engine (not the communicator), so a request stays answerable after its
// communicator was destroyed (destruction runs every queued call first).
#pragma once

#include <cstdint>
#include <memory>

#include "common/status.h"
#include "core/engine.h"

struct strataRequest {
  std::shared_ptr<strata::core::Engine> engine;  // null until the call was issued (group end)
  uint64_t ticket = 0;
  // Set when issuing the call failed before it could be queued (a group whose setup failed):
  // the request is complete, with this error.
  strata::Status failed = strata::Status::ok();
  // The communicator the call was made on, so that a failed completion's message is also what
  // strataGetLastError(comm) says (the handle may be dead by then: looked up, never used).
  strataComm_t comm = nullptr;
};

namespace strata::api {

strataRequest* newRequest(strataComm_t comm);
// The communicator of *request when it is a live request, else null. Safe on any pointer.
strataComm_t requestComm(strataRequest_t* request);
// A thread's claim to complete `r` (strataTest, strataWait, strataWaitLazy): one thread at a
// time, checked together with liveness under one lock, so a second thread never touches a
// request the first one frees. kClaimed: release it (releaseRequest) or free it (freeRequest).
enum class Claim { kClaimed, kNotLive, kBusy };
Claim claimRequest(const strataRequest* r);
void releaseRequest(const strataRequest* r);
void freeRequest(strataRequest* r);

}  // namespace strata::api
