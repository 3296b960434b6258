// The C boundary for request handles: strataTest, strataWait and strataWaitLazy.
#include <string>

#include "api/guard.h"
#include "api/request.h"
#include "strata/strata.h"

namespace strata::api {
namespace {

// The live request behind *request, claimed by this thread (released when it stays
// incomplete, freed when complete), or why there is none.
StatusOr<strataRequest*> liveRequest(strataRequest_t* request) {
  if (request == nullptr) return invalidArgument("request is NULL");
  strataRequest* r = *request;
  if (r == nullptr) return invalidArgument("*request is NULL (no request to complete)");
  switch (claimRequest(r)) {
    case Claim::kNotLive:
      return invalidArgument("*request is not a live request (already completed or never made)");
    case Claim::kBusy:
      return invalidUsage(
          "another thread is completing this request now (strataTest, strataWait or "
          "strataWaitLazy); one thread completes a request");
    case Claim::kClaimed:
      break;
  }
  // Completing a request may run queued calls, which talk to other ranks.
  Status usable = checkMpiActive();
  if (usable.isOk() && !r->engine) {
    usable = invalidUsage(
        "the request's call is inside a group that has not ended "
        "(strataGroupEnd issues it)");
  }
  if (!usable.isOk()) {
    releaseRequest(r);
    return usable;
  }
  return r;
}

// Frees a completed request and returns the call's result.
Status complete(strataRequest_t* request, const Status& result) {
  freeRequest(*request);
  *request = nullptr;
  return result;
}

}  // namespace
}  // namespace strata::api

using namespace strata;       // NOLINT: the C entry points below are thin wrappers
using namespace strata::api;  // NOLINT

extern "C" {

strataResult_t strataTest(strataRequest_t* request, int* done) {
  return guarded(requestComm(request), "strataTest", [&]() -> Status {
    if (done == nullptr) return invalidArgument("done is NULL");
    STRATA_ASSIGN_OR_RETURN(strataRequest * r, liveRequest(request));
    if (!r->failed.isOk()) {
      *done = 1;
      return complete(request, r->failed);
    }
    Status result = Status::ok();
    if (!r->engine->test(r->ticket, &result)) {
      *done = 0;
      releaseRequest(r);
      return Status::ok();
    }
    *done = 1;
    return complete(request, result);
  });
}

strataResult_t strataWait(strataRequest_t* request) {
  return guarded(requestComm(request), "strataWait", [&]() -> Status {
    STRATA_ASSIGN_OR_RETURN(strataRequest * r, liveRequest(request));
    if (!r->failed.isOk()) return complete(request, r->failed);
    return complete(request, r->engine->wait(r->ticket));
  });
}

strataResult_t strataWaitLazy(strataRequest_t* request) {
  return guarded(requestComm(request), "strataWaitLazy", [&]() -> Status {
    STRATA_ASSIGN_OR_RETURN(strataRequest * r, liveRequest(request));
    if (!r->failed.isOk()) return complete(request, r->failed);
    return complete(request, r->engine->waitLazy(r->ticket));
  });
}

}  // extern "C"
