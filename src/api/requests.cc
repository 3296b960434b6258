// The C boundary for request handles: strataTest, strataWait and strataWaitLazy.
#include "api/guard.h"
#include "api/request.h"
#include "strata/strata.h"

namespace strata::api {
namespace {

// The live request behind *request, or why there is none.
StatusOr<strataRequest*> liveRequest(strataRequest_t* request) {
  if (request == nullptr) return invalidArgument("request is NULL");
  if (*request == nullptr) return invalidArgument("*request is NULL (no request to complete)");
  if (!isLiveRequest(*request)) {
    return invalidArgument("*request is not a live request (already completed or never made)");
  }
  // Completing a request may run queued calls, which talk to other ranks.
  STRATA_RETURN_IF_ERROR(checkMpiActive());
  if (!(*request)->engine) {
    return invalidUsage(
        "the request's call is inside a group that has not ended "
        "(strataGroupEnd issues it)");
  }
  return *request;
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
  return guarded(nullptr, "strataTest", [&]() -> Status {
    if (done == nullptr) return invalidArgument("done is NULL");
    STRATA_ASSIGN_OR_RETURN(strataRequest * r, liveRequest(request));
    if (!r->failed.isOk()) {
      *done = 1;
      return complete(request, r->failed);
    }
    Status result = Status::ok();
    if (!r->engine->test(r->ticket, &result)) {
      *done = 0;
      return Status::ok();
    }
    *done = 1;
    return complete(request, result);
  });
}

strataResult_t strataWait(strataRequest_t* request) {
  return guarded(nullptr, "strataWait", [&]() -> Status {
    STRATA_ASSIGN_OR_RETURN(strataRequest * r, liveRequest(request));
    if (!r->failed.isOk()) return complete(request, r->failed);
    return complete(request, r->engine->wait(r->ticket));
  });
}

strataResult_t strataWaitLazy(strataRequest_t* request) {
  return guarded(nullptr, "strataWaitLazy", [&]() -> Status {
    STRATA_ASSIGN_OR_RETURN(strataRequest * r, liveRequest(request));
    if (!r->failed.isOk()) return complete(request, r->failed);
    return complete(request, r->engine->waitLazy(r->ticket));
  });
}

}  // extern "C"
