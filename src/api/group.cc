#include "api/group.h"

#include <algorithm>
#include <vector>

#include "api/guard.h"

namespace strata::api {
namespace {

struct Recorded {
  strataComm_t comm;  // a handle: looked up again at the group's end
  core::GroupCall call;
  strataRequest* request;
};

thread_local int tDepth = 0;
thread_local std::vector<Recorded> tCalls;

}  // namespace

bool inGroup() { return tDepth > 0; }

void record(strataComm_t comm, const core::GroupCall& call, strataRequest* request) {
  tCalls.push_back(Recorded{comm, call, request});
}

void groupStart() { ++tDepth; }

Status groupEnd(strataComm_t* failedComm) {
  *failedComm = nullptr;
  if (tDepth == 0) return invalidArgument("strataGroupEnd without strataGroupStart");
  if (--tDepth > 0) return Status::ok();
  std::vector<Recorded> calls;
  calls.swap(tCalls);  // a failure below must not leave them for the next group
  // Communicators in the order of their ids, the same on every rank: a rank's group may name
  // them in another order than its peers' (a send on one, a receive on the other), and each
  // communicator's part runs as a whole. Each handle goes with its entry (null when it was
  // destroyed since it was recorded).
  std::vector<std::pair<strataComm_t, CommEntry*>> comms;
  for (const Recorded& r : calls) {
    const bool seen =
        std::any_of(comms.begin(), comms.end(), [&](const auto& c) { return c.first == r.comm; });
    if (!seen) comms.emplace_back(r.comm, lookupComm(r.comm));
  }
  std::stable_sort(comms.begin(), comms.end(), [](const auto& a, const auto& b) {
    const bool la = a.second != nullptr, lb = b.second != nullptr;
    if (!la || !lb) return la && !lb;  // dead handles last (refused below)
    return a.second->impl->uid() < b.second->impl->uid();
  });
  Status first = Status::ok();
  const Status mpi = checkMpiActive();  // after MPI_Finalize every call of the group fails
  for (const auto& [handle, entry] : comms) {
    if (entry == nullptr) {
      if (first.isOk())
        first = invalidUsage("a communicator of the group was destroyed before strataGroupEnd");
      continue;
    }
    std::vector<core::GroupCall> mine;
    std::vector<strataRequest*> requests;
    for (const Recorded& r : calls) {
      if (r.comm != handle) continue;
      mine.push_back(r.call);
      if (r.request != nullptr) requests.push_back(r.request);
    }
    StatusOr<uint64_t> ticket =
        mpi.isOk() ? core::issueGroup(*entry->impl, mine) : StatusOr<uint64_t>(mpi);
    for (strataRequest* req : requests) {
      // Issued: the request follows the group's host call. Failed before queuing: the request
      // is complete, with the error.
      req->engine = entry->impl->sharedEngine();
      req->ticket = ticket.isOk() ? ticket.value() : 0;
      if (!ticket.isOk()) req->failed = ticket.status();
    }
    if (!ticket.isOk() && first.isOk()) {
      first = ticket.status();
      *failedComm = handle;
    }
  }
  return first;
}

}  // namespace strata::api
