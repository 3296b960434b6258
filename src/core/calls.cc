#include "core/calls.h"

#include <string>

#include "common/datatype.h"
#include "common/deadline.h"
#include "core/check.h"
#include "core/device_side.h"
#include "core/dispatch.h"
#include "core/executor.h"
#include "core/fusion.h"
#include "core/fusion_queue.h"

namespace strata::core {
namespace {

// "allreduce #12 (1000 float32, sum) on rank 3 of 8": where an error happened.
std::string callContext(const Comm& c, uint64_t seq, const Call& call, size_t groupSize) {
  std::string s = std::string(collectiveName(call.coll)) + " #" + std::to_string(seq);
  if (groupSize > 1) s += " (a group of " + std::to_string(groupSize) + " calls)";
  s += " (" + std::to_string(call.count) + " " + dataTypeName(call.type) + ") on rank " +
       std::to_string(c.rank()) + " of " + std::to_string(c.size());
  return s;
}

// Runs `body` (on a HostExecutor) under the communicator's deadline (STRATA_TIMEOUT, and its
// abort flag: common/deadline.h), on whichever thread runs it. Any failure while running means
// the ranks may now be at different points: it puts the communicator in its error state.
template <typename Body>
Status bounded(Comm& c, uint64_t seq, const Call& first, size_t calls, Body body) {
  deadline::Scope scope(c.settings().timeoutSeconds, c.cancelFlag(), c.settings().timeoutSource);
  HostExecutor x(c.scratch());
  Status st = body(x);
  if (st.isOk()) return st;
  st = st.withContext(callContext(c, seq, first, calls));
  c.engine().fail(st);
  return st;
}

// Prepared host calls, bounded.
Status runBounded(Comm& c, uint64_t seq, const std::vector<Prepared>& calls) {
  return bounded(c, seq, calls[0].call, calls.size(), [&](Executor& x) {
    return calls.size() == 1 ? run(c, x, calls[0]) : runGroup(c, x, calls);
  });
}

// Makes what a call runs on (core/dispatch.h: plans, groups, fabrics; collective with the
// other ranks on first use), under the communicator's deadline like the run itself. A failure
// there leaves the ranks at different points of their setups, so it too puts the communicator
// in its error state. `forced`: a given plan instead of the planner's (allReduceWithPlan).
Status setupFailed(Comm& c, const Status& why, const std::string& what) {
  const Status st = why.withContext("setting up " + what + " on rank " + std::to_string(c.rank()) +
                                    " of " + std::to_string(c.size()));
  c.engine().fail(st);
  return st;
}

StatusOr<Prepared> prepareBounded(Comm& c, const Call& call, const plan::Plan* forced = nullptr) {
  deadline::Scope scope(c.settings().timeoutSeconds, c.cancelFlag(), c.settings().timeoutSource);
  StatusOr<Prepared> p = forced != nullptr ? prepareWithPlan(c, call, *forced) : prepare(c, call);
  if (p.isOk()) return p;
  return setupFailed(c, p.status(),
                     std::string(collectiveName(call.coll)) + " (" + std::to_string(call.count) +
                         " " + dataTypeName(call.type) + ")");
}

// Queues `calls` (prepared, host buffers) as one engine call.
uint64_t queueHost(Comm& c, std::vector<Prepared> calls) {
  const uint64_t seq = c.nextSeq();
  return c.engine().submit([&c, seq, calls = std::move(calls)](const Status& earlier) -> Status {
    if (!earlier.isOk()) return earlier;
    return runBounded(c, seq, calls);
  });
}

// Whether a nonblocking call joins the fusion queue (core/fusion_queue.h): a property of the
// call and the agreed settings only, so the same on every rank.
bool fusable(const Comm& c, const Call& call) {
  const Settings& s = c.settings();
  return c.size() > 1 && s.fusionWaitUs > 0 && call.coll == Collective::kAllReduce &&
         call.count > 0 && call.count * dataTypeSize(call.type) < s.fusionBytes;
}

// Queues a fusable nonblocking allreduce: its engine call runs the pack it heads (after the
// agreement), or nothing when an earlier pack took it in.
StatusOr<uint64_t> queueFusable(Comm& c, Prepared p) {
  {
    // The plans of every pack size, made here since the runner may set nothing up: a setup
    // like prepareBounded's, bounded and failing the same way.
    deadline::Scope scope(c.settings().timeoutSeconds, c.cancelFlag(), c.settings().timeoutSource);
    const Status st = c.prepareFusionPlans(c.settings().fusionBytes);
    if (!st.isOk()) return setupFailed(c, st, "the fusion plans");
  }
  const Call call = p.call;
  FusionQueue* q = &c.fusionQueue();
  // One thread issues calls at a time (core/engine.h), so the next ticket is known here.
  const uint64_t ticket = c.engine().submitted() + 1;
  const uint64_t id = q->add(std::move(p), ticket);
  const uint64_t seq = c.nextSeq();
  const uint64_t got = c.engine().submit([&c, q, id, seq, call](const Status& earlier) -> Status {
    if (!earlier.isOk()) return earlier;
    return bounded(c, seq, call, 1, [&](Executor& x) { return q->run(c, x, id); });
  });
  if (got != ticket) return internalError("fusion queue: calls issued from two threads at once");
  return got;
}

}  // namespace

Status issue(Comm& c, const Call& call, strataStream_t stream) {
  c.cutFusion();
  // Numbered and, with STRATA_CHECK, compared across ranks before any setup (core/check.h).
  STRATA_RETURN_IF_ERROR(checkCalls(c, {call}));
  STRATA_ASSIGN_OR_RETURN(Place place, placeOf(c, call.send, call.recv));
  if (place == Place::kDevice) return submitDevice(c, {call}, {stream});
  STRATA_ASSIGN_OR_RETURN(Prepared p, prepareBounded(c, call));
  // A communicator's calls run in call order on every rank: the queued ones first. In the
  // error state this fails fast with the first error.
  STRATA_RETURN_IF_ERROR(c.engine().drain());
  return runBounded(c, c.nextSeq(), {p});
}

StatusOr<uint64_t> issueNonblocking(Comm& c, const Call& call) {
  STRATA_ASSIGN_OR_RETURN(Place place, placeOf(c, call.send, call.recv));
  if (place == Place::kDevice) {
    return invalidArgument(std::string("the nonblocking ") + collectiveName(call.coll) +
                           " takes host buffers; on device buffers use the stream-ordered call");
  }
  STRATA_RETURN_IF_ERROR(checkCalls(c, {call}));
  STRATA_ASSIGN_OR_RETURN(Prepared p, prepareBounded(c, call));
  STRATA_RETURN_IF_ERROR(c.engine().error());
  if (fusable(c, call)) return queueFusable(c, std::move(p));
  c.cutFusion();
  return queueHost(c, {p});
}

StatusOr<uint64_t> issueGroup(Comm& c, const std::vector<GroupCall>& calls) {
  c.cutFusion();
  std::vector<Call> device;
  std::vector<strataStream_t> streams;
  std::vector<Call> hostCalls;
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
    hostCalls.push_back(g.call);
    wait = wait || !g.nonblocking;
  }
  // The host calls' units (core/fusion.h: packs cut from the call sequence alone, the same on
  // every rank), each prepared as one call.
  const size_t theta = c.size() > 1 ? c.settings().fusionBytes : 0;
  for (const FusionUnit& u : fusePlan(hostCalls, theta)) {
    if (!u.pack()) {
      STRATA_ASSIGN_OR_RETURN(Prepared p, prepareBounded(c, hostCalls[u.members[0]]));
      host.push_back(std::move(p));
      continue;
    }
    Call whole = hostCalls[u.members[0]];
    whole.send = nullptr;  // the fusion buffer, at run time
    whole.recv = nullptr;
    whole.count = u.bytes / dataTypeSize(whole.type);
    STRATA_ASSIGN_OR_RETURN(Prepared p, prepareBounded(c, whole));
    for (size_t i : u.members) p.fused.push_back(hostCalls[i]);
    host.push_back(std::move(p));
  }
  if (!device.empty()) STRATA_RETURN_IF_ERROR(submitDevice(c, device, streams));
  if (host.empty()) return uint64_t{0};
  STRATA_RETURN_IF_ERROR(c.engine().error());
  const uint64_t ticket = queueHost(c, std::move(host));
  if (wait) STRATA_RETURN_IF_ERROR(c.engine().wait(ticket));
  return ticket;
}

Status probe(Comm& c, int peer, bool* found, int* source, size_t* bytes) {
  c.cutFusion();
  STRATA_RETURN_IF_ERROR(c.engine().drain());
  HostExecutor x(c.scratch());
  STRATA_ASSIGN_OR_RETURN(fabric::Fabric * flat, x.fabricOf(c.flat()));
  const Status st = flat->probe(peer, found, source, bytes);
  if (st.isOk() || st.code() == Code::kInvalidUsage) return st;
  const Status failed = st.withContext("probe on rank " + std::to_string(c.rank()) + " of " +
                                       std::to_string(c.size()));
  c.engine().fail(failed);
  return failed;
}

Status allReduceWithPlan(Comm& c, const plan::Plan& plan, const void* send, void* recv,
                         size_t count, strataDataType_t type, strataRedOp_t op) {
  // A plan that does not fit the hierarchy is the caller's mistake, found locally: no error
  // state for it.
  STRATA_RETURN_IF_ERROR(plan::checkPlan(c.hierarchy(), plan));
  c.cutFusion();
  Call call;
  call.coll = Collective::kAllReduce;
  call.send = send;
  call.recv = recv;
  call.count = count;
  call.type = type;
  call.op = op;
  STRATA_ASSIGN_OR_RETURN(Prepared p, prepareBounded(c, call, &plan));
  STRATA_RETURN_IF_ERROR(c.engine().drain());
  return runBounded(c, c.nextSeq(), {p});
}

}  // namespace strata::core
