#include "api/group.h"

#include <algorithm>
#include <vector>

namespace strata::api {
namespace {

struct Recorded {
  strataComm* comm;
  core::GroupCall call;
  strataRequest* request;
};

thread_local int tDepth = 0;
thread_local std::vector<Recorded> tCalls;

}  // namespace

bool inGroup() { return tDepth > 0; }

void record(strataComm* comm, const core::GroupCall& call, strataRequest* request) {
  tCalls.push_back(Recorded{comm, call, request});
}

void groupStart() { ++tDepth; }

Status groupEnd(strataComm** failedComm) {
  *failedComm = nullptr;
  if (tDepth == 0) return invalidArgument("strataGroupEnd without strataGroupStart");
  if (--tDepth > 0) return Status::ok();
  std::vector<Recorded> calls;
  calls.swap(tCalls);  // a failure below must not leave them for the next group
  // Communicators in the order of their ids, the same on every rank: a rank's group may name
  // them in another order than its peers' (a send on one, a receive on the other), and each
  // communicator's part runs as a whole.
  std::vector<strataComm*> comms;
  for (const Recorded& r : calls) {
    if (std::find(comms.begin(), comms.end(), r.comm) == comms.end()) comms.push_back(r.comm);
  }
  std::stable_sort(comms.begin(), comms.end(), [](strataComm* a, strataComm* b) {
    const bool la = isLive(a), lb = isLive(b);
    if (!la || !lb) return la && !lb;  // dead handles last (refused below)
    return a->impl->uid() < b->impl->uid();
  });
  Status first = Status::ok();
  for (strataComm* comm : comms) {
    if (!isLive(comm)) {
      if (first.isOk())
        first = invalidUsage("a communicator of the group was destroyed before strataGroupEnd");
      continue;
    }
    std::vector<core::GroupCall> mine;
    std::vector<strataRequest*> requests;
    for (const Recorded& r : calls) {
      if (r.comm != comm) continue;
      mine.push_back(r.call);
      if (r.request != nullptr) requests.push_back(r.request);
    }
    StatusOr<uint64_t> ticket = core::issueGroup(*comm->impl, mine);
    for (strataRequest* req : requests) {
      // Issued: the request follows the group's host call. Failed before queuing: the request
      // is complete, with the error.
      req->engine = comm->impl->sharedEngine();
      req->ticket = ticket.isOk() ? ticket.value() : 0;
      if (!ticket.isOk()) req->failed = ticket.status();
    }
    if (!ticket.isOk() && first.isOk()) {
      first = ticket.status();
      *failedComm = comm;
    }
  }
  return first;
}

}  // namespace strata::api
