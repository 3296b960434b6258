#include "core/calls.h"

#include "core/check.h"
#include "core/device_side.h"
#include "core/dispatch.h"
#include "core/executor.h"

namespace strata::core {
namespace {

// Queues `calls` (prepared, host buffers) as one engine call.
uint64_t queueHost(Comm& c, std::vector<Prepared> calls) {
  return c.engine().submit([&c, calls = std::move(calls)](const Status& earlier) -> Status {
    if (!earlier.isOk()) return earlier;
    HostExecutor x(c.scratch());
    return calls.size() == 1 ? run(c, x, calls[0]) : runGroup(c, x, calls);
  });
}

}  // namespace

Status issue(Comm& c, const Call& call, strataStream_t stream) {
  // Numbered and, with STRATA_CHECK, compared across ranks before any setup (core/check.h).
  STRATA_RETURN_IF_ERROR(checkCalls(c, {call}));
  STRATA_ASSIGN_OR_RETURN(Place place, placeOf(c, call.send, call.recv));
  if (place == Place::kDevice) return submitDevice(c, {call}, {stream});
  STRATA_ASSIGN_OR_RETURN(Prepared p, prepare(c, call));
  // A communicator's calls run in call order on every rank: the queued ones first.
  STRATA_RETURN_IF_ERROR(c.engine().drain());
  HostExecutor x(c.scratch());
  return run(c, x, p);
}

StatusOr<uint64_t> issueNonblocking(Comm& c, const Call& call) {
  STRATA_ASSIGN_OR_RETURN(Place place, placeOf(c, call.send, call.recv));
  if (place == Place::kDevice) {
    return invalidArgument(std::string("the nonblocking ") + collectiveName(call.coll) +
                           " takes host buffers; on device buffers use the stream-ordered call");
  }
  STRATA_RETURN_IF_ERROR(checkCalls(c, {call}));
  STRATA_ASSIGN_OR_RETURN(Prepared p, prepare(c, call));
  STRATA_RETURN_IF_ERROR(c.engine().error());
  return queueHost(c, {p});
}

StatusOr<uint64_t> issueGroup(Comm& c, const std::vector<GroupCall>& calls) {
  std::vector<Call> device;
  std::vector<strataStream_t> streams;
  std::vector<Prepared> host;
  bool wait = false;
  std::vector<Call> all;
  for (const GroupCall& g : calls) all.push_back(g.call);
  STRATA_RETURN_IF_ERROR(checkCalls(c, all));
  for (const GroupCall& g : calls) {
    STRATA_ASSIGN_OR_RETURN(Place place, placeOf(c, g.call.send, g.call.recv));
    if (place == Place::kDevice) {
      if (g.nonblocking) {
        return invalidArgument(std::string("the nonblocking ") + collectiveName(g.call.coll) +
                               " takes host buffers; on device buffers use the stream-ordered "
                               "call");
      }
      device.push_back(g.call);
      streams.push_back(g.stream);
      continue;
    }
    STRATA_ASSIGN_OR_RETURN(Prepared p, prepare(c, g.call));
    host.push_back(p);
    wait = wait || !g.nonblocking;
  }
  if (!device.empty()) STRATA_RETURN_IF_ERROR(submitDevice(c, device, streams));
  if (host.empty()) return uint64_t{0};
  STRATA_RETURN_IF_ERROR(c.engine().error());
  const uint64_t ticket = queueHost(c, std::move(host));
  if (wait) STRATA_RETURN_IF_ERROR(c.engine().wait(ticket));
  return ticket;
}

}  // namespace strata::core
