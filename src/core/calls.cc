#include "core/calls.h"

#include <string>

#include "common/datatype.h"
#include "common/deadline.h"
#include "core/bounded.h"
#include "core/check.h"
#include "core/device_side.h"
#include "core/prepare.h"
#include "core/executor.h"
#include "core/fusion.h"
#include "core/fusion_queue.h"

namespace strata::core {

std::string callContext(const Comm& c, const Call& first, size_t groupSize) {
  std::string s = std::string(collectiveName(first.coll)) + " #" + std::to_string(first.seq);
  if (pointToPoint(first.coll)) {
    s += (first.coll == Collective::kSend ? " to rank " : " from rank ") +
         std::to_string(first.root);
  }
  if (groupSize > 1) s += " (a group of " + std::to_string(groupSize) + " calls)";
  if (!first.note.empty()) s += " [" + first.note + "]";
  s += " (" + std::to_string(first.count) + " " + dataTypeName(first.type) + ") on rank " +
       std::to_string(c.rank()) + " of " + std::to_string(c.size());
  return s;
}

Status setupFailed(Comm& c, const Status& why, const std::string& what) {
  Status st = why.withContext("setting up " + what + " on rank " + std::to_string(c.rank()) +
                              " of " + std::to_string(c.size()));
  c.failHere(st);
  return st;
}

StatusOr<Prepared> prepareBounded(Comm& c, IssuingThread me, const Call& call,
                                  const Forced* forced, bool device, std::vector<Call>* pack,
                                  bool capturing) {
  deadline::Scope scope(c.settings().timeoutSeconds, c.cancelFlag(), c.settings().timeoutSource);
  StatusOr<Prepared> p = pack != nullptr     ? preparePack(c, me, call, std::move(*pack))
                         : forced != nullptr ? prepareForced(c, me, call, *forced)
                                             : prepare(c, me, call, device, capturing);
  if (p.isOk()) return p;
  if (capturing && p.status().code() == Code::kInvalidUsage) {
    c.flightRecorder().finished(call.record, p.status());
    return p.status();
  }
  return setupFailed(c, p.status(),
                     std::string(collectiveName(call.coll)) + " #" + std::to_string(call.seq) +
                         " (" + std::to_string(call.count) + " " + dataTypeName(call.type) + ")");
}

namespace {

// Prepared host calls (one, or a group's units), on a HostExecutor, bounded.
Status runBounded(Comm& c, const std::vector<Prepared>& calls) {
  return bounded(c, calls[0].call, calls.size(), [&](RunningCall running) {
    HostExecutor x(c.memory(running));
    RunContext rc = runContextOf(c, x);
    return calls.size() == 1 ? run(rc, calls[0]) : runGroup(rc, calls);
  });
}

// Queues `calls` (prepared, host buffers) as one engine call.
uint64_t queueHost(Comm& c, std::vector<Prepared> calls) {
  return c.engine().submit([&c, calls = std::move(calls)](const Status& earlier) -> Status {
    if (!earlier.isOk()) return earlier;
    return runBounded(c, calls);
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
StatusOr<uint64_t> queueFusable(Comm& c, IssuingThread me, Prepared p) {
  {
    // The plans of every pack size, made here since the runner may set nothing up: a setup
    // like prepareBounded's, bounded and failing the same way.
    deadline::Scope scope(c.settings().timeoutSeconds, c.cancelFlag(), c.settings().timeoutSource);
    const Status st = c.plans().prepareFusionPlans(c.settings().fusionBytes, me);
    if (!st.isOk()) return setupFailed(c, st, "the fusion plans");
  }
  const Call call = p.call;
  FusionQueue* q = &c.issued(me).fusionQueue();
  // One thread issues calls at a time (core/engine.h), so the next ticket is known here.
  const uint64_t ticket = c.engine().submitted() + 1;
  const uint64_t id = q->add(std::move(p), ticket);
  PackContext pc;
  pc.fusionBytes = c.settings().fusionBytes;
  pc.fusionWaitUs = c.settings().fusionWaitUs;
  pc.engine = &c.engine();
  pc.plans = &c.plans();
  pc.lower = lowerContextOf(c, false);
  const uint64_t got = c.engine().submit([&c, q, id, call, pc](const Status& earlier) -> Status {
    if (!earlier.isOk()) return earlier;
    return bounded(c, call, 1, [&](RunningCall running) {
      HostExecutor x(c.memory(running));
      RunContext rc = runContextOf(c, x);
      return q->run(rc, pc, id);
    });
  });
  if (got != ticket) return internalError("fusion queue: calls issued from two threads at once");
  return got;
}

// Where each call's buffers live, before anything is numbered or set up (a refusal here is
// local, like an argument error). A nonblocking call takes host buffers.
StatusOr<std::vector<Place>> placeAll(const Comm& c, const std::vector<GroupCall>& calls) {
  std::vector<Place> places;
  for (const GroupCall& g : calls) {
    STRATA_ASSIGN_OR_RETURN(Place place, placeOf(c, g.call.send, g.call.recv));
    if (place == Place::kDevice && g.nonblocking) {
      return invalidArgument(std::string("the nonblocking ") + collectiveName(g.call.coll) +
                             " takes host buffers; on device buffers use the stream-ordered call");
    }
    places.push_back(place);
  }
  return places;
}

// The host calls' units (core/fusion.h: packs cut from the call sequence alone, the same on
// every rank; a lone call is one unit), each prepared as one call.
StatusOr<std::vector<Prepared>> prepareHost(Comm& c, IssuingThread me, const std::vector<Call>& host,
                                            const Forced* forced) {
  const size_t theta = c.size() > 1 && host.size() > 1 ? c.settings().fusionBytes : 0;
  std::vector<Prepared> units;
  for (const FusionUnit& u : fusePlan(host, theta)) {
    if (!u.pack()) {
      STRATA_ASSIGN_OR_RETURN(Prepared p, prepareBounded(c, me, host[u.members[0]], forced));
      units.push_back(std::move(p));
      continue;
    }
    Call whole = host[u.members[0]];  // the pack is named by its first member
    whole.send = nullptr;             // the fusion buffer, at run time
    whole.recv = nullptr;
    whole.count = u.bytes / dataTypeSize(whole.type);
    std::vector<Call> members;
    for (size_t i : u.members) members.push_back(host[i]);
    STRATA_ASSIGN_OR_RETURN(Prepared p, prepareBounded(c, me, whole, nullptr, false, &members));
    units.push_back(std::move(p));
  }
  return units;
}

// The one issue path of every call, whatever its memory:
//   1. place: host or device buffers (placeOf decides, nothing else does);
//   2. number every call (Call::seq) and, with STRATA_CHECK, compare the collectives;
//   3. prepare each, bounded (a setup that fails is the error state);
//   4. run: device calls ordered on their streams, each by its route (core/route.h,
//      core/device_side.h); host calls on this
//      thread after the queued ones when all are blocking, else queued on the engine (a lone
//      fusable nonblocking allreduce through the fusion queue), waited for when any blocks.
// Returns the host calls' engine ticket (0 when nothing was queued).
// The hook the issue path (core/calls.cc) runs before preparing `calls`: numbers each call
// (Call::seq) and, with STRATA_CHECK, drains the engine and compares each collective across
// the ranks. Send and recv are not compared. Issuing thread only.
Status checkCalls(Comm& c, IssuingThread me, Call* calls, size_t n) {
  const bool check = c.settings().check && c.size() > 1;
  bool drained = false;
  for (size_t i = 0; i < n; ++i) {
    Call& call = calls[i];
    IssueState& issue = c.issued(me);
    issue.sequence().number(call);
    if (i == 0) call.note = issue.takeNote();  // a group's note is its first call's
    if (!check || pointToPoint(call.coll)) continue;
    if (!drained) {
      STRATA_RETURN_IF_ERROR(c.quiesce(me));
      drained = true;
    }
    LevelGroup& flat = c.groups().flat();
    if (!flat.fabric) return internalError("STRATA_CHECK: the communicator has no flat fabric");
    // Under the communicator's deadline: a rank that skipped the call never joins. A timeout
    // (unlike a mismatch, which every rank detects together) leaves the ranks at different
    // points, so it puts the communicator in its error state.
    deadline::Scope scope(c.settings().timeoutSeconds, c.cancelFlag(), c.settings().timeoutSource);
    Status st =
        compareCalls(*flat.fabric, CallDescriptor::of(call, call.seq, c.settings().checkSites));
    if (!st.isOk() && st.code() != Code::kInvalidUsage) c.engine().fail(st);
    STRATA_RETURN_IF_ERROR(st);
  }
  return Status::ok();
}


// Step 2 of the issue path, for a group's calls or a lone one: numbers them (and compares them
// under STRATA_CHECK), records them in the flight recorder, and stamps their issue time.
Status numberAndRecord(Comm& c, IssuingThread me, Call* calls, size_t n) {
  STRATA_RETURN_IF_ERROR(checkCalls(c, me, calls, n));
  for (size_t i = 0; i < n; ++i) calls[i].record = c.flightRecorder().issued(calls[i]);
  if (c.timeline() != nullptr) {
    const int64_t now = Timeline::nowNs();
    for (size_t i = 0; i < n; ++i) calls[i].issuedNs = now;
  }
  return Status::ok();
}

// The caller holds the communicator (IssueScope: `me`) and placed the calls.
StatusOr<uint64_t> issuePlaced(Comm& c, IssuingThread me, const std::vector<GroupCall>& calls,
                               const std::vector<Place>& places, const Forced* forced) {
  const bool lone = calls.size() == 1;
  const bool fuse = lone && forced == nullptr && calls[0].nonblocking &&
                    places[0] == Place::kHost && fusable(c, calls[0].call);
  if (!fuse)
    c.issued(me).cutFusion();  // anything else ends the fusion queue's current run
  std::vector<Call> all;
  std::vector<bool> capturing;  // per call, sized at the first device call
  for (size_t i = 0; i < calls.size(); ++i) {
    all.push_back(calls[i].call);
    // A device call made while its stream captures a graph, on a communicator whose device
    // side does not exist yet, is refused before it is numbered: nothing of it happened
    // (core/device_side.h).
    if (places[i] == Place::kDevice && all[i].count > 0) {
      if (forced != nullptr) {
        return invalidArgument("a forced plan or form runs on host buffers only");
      }
      STRATA_ASSIGN_OR_RETURN(Capture cap, checkCaptureSetup(c, calls[i].stream));
      capturing.resize(calls.size(), false);
      capturing[i] = cap.active;
    }
  }
  STRATA_RETURN_IF_ERROR(numberAndRecord(c, me, all.data(), all.size()));
  std::vector<Prepared> device;
  std::vector<strataStream_t> streams;
  std::vector<Call> host;
  bool queued = false, blocks = false;
  for (size_t i = 0; i < all.size(); ++i) {
    if (places[i] == Place::kHost) {
      host.push_back(all[i]);
      (calls[i].nonblocking ? queued : blocks) = true;
    } else if (all[i].count > 0) {  // a device call of count 0 has nothing to order
      STRATA_ASSIGN_OR_RETURN(
          Prepared p, prepareBounded(c, me, all[i], forced, true, nullptr, capturing[i]));
      device.push_back(std::move(p));
      streams.push_back(calls[i].stream);
    }
  }
  if (!device.empty()) STRATA_RETURN_IF_ERROR(submitDevice(c, me, device, streams));
  if (host.empty()) return uint64_t{0};
  STRATA_ASSIGN_OR_RETURN(std::vector<Prepared> units, prepareHost(c, me, host, forced));
  if (!queued) {
    // A communicator's calls run in call order on every rank: the queued ones first. In the
    // error state this fails fast with the first error.
    STRATA_RETURN_IF_ERROR(c.quiesce(me));
    STRATA_RETURN_IF_ERROR(runBounded(c, units));
    return uint64_t{0};
  }
  STRATA_RETURN_IF_ERROR(c.engine().error());
  if (fuse) return queueFusable(c, me, std::move(units[0]));
  const uint64_t ticket = queueHost(c, std::move(units));
  if (blocks) STRATA_RETURN_IF_ERROR(c.engine().wait(ticket));
  return ticket;
}

StatusOr<uint64_t> issueCalls(Comm& c, const std::vector<GroupCall>& calls,
                              const Forced* forced = nullptr) {
  IssueScope one(c,
                  calls.size() == 1 ? collectiveName(calls[0].call.coll) : "group of calls");
  STRATA_RETURN_IF_ERROR(one.status());
  STRATA_ASSIGN_OR_RETURN(std::vector<Place> places, placeAll(c, calls));
  return issuePlaced(c, one.thread(), calls, places, forced);
}

// A lone blocking call on host buffers, the most frequent call by far: issuePlaced's steps for
// it (a lone call is one fusion unit, run on this thread after the queued ones), without the
// vectors a group needs. Its per-call cost is the floor of every small allreduce's latency.
Status issueLoneHost(Comm& c, IssuingThread me, Call call, const Forced* forced) {
  c.issued(me).cutFusion();  // anything else ends the fusion queue's current run
  STRATA_RETURN_IF_ERROR(numberAndRecord(c, me, &call, 1));
  STRATA_ASSIGN_OR_RETURN(Prepared p, prepareBounded(c, me, call, forced));
  STRATA_RETURN_IF_ERROR(c.quiesce(me));
  return bounded(c, p.call, 1, [&](RunningCall running) {
    HostExecutor x(c.memory(running));
    RunContext rc = runContextOf(c, x);
    return run(rc, p);
  });
}

// One blocking call: placed first, so that a call on host buffers takes issueLoneHost.
Status issueBlocking(Comm& c, const Call& call, strataStream_t stream, const Forced* forced) {
  IssueScope one(c, collectiveName(call.coll));
  STRATA_RETURN_IF_ERROR(one.status());
  STRATA_ASSIGN_OR_RETURN(Place place, placeOf(c, call.send, call.recv));
  if (place == Place::kHost) return issueLoneHost(c, one.thread(), call, forced);
  return issuePlaced(c, one.thread(), {GroupCall{call, stream, false}}, {place}, forced).status();
}

}  // namespace

Status issue(Comm& c, const Call& call, strataStream_t stream) {
  return issueBlocking(c, call, stream, nullptr);
}

StatusOr<uint64_t> issueNonblocking(Comm& c, const Call& call) {
  return issueCalls(c, {GroupCall{call, nullptr, true}});
}

StatusOr<uint64_t> issueGroup(Comm& c, const std::vector<GroupCall>& calls) {
  return issueCalls(c, calls);
}

Status probe(Comm& c, int peer, bool* found, int* source, size_t* bytes) {
  IssueScope one(c, "probe");
  STRATA_RETURN_IF_ERROR(one.status());
  c.issued(one.thread()).cutFusion();
  STRATA_RETURN_IF_ERROR(c.quiesce(one.thread()));
  LevelGroup& group = c.groups().flat();
  if (!group.fabric) return internalError("probe: the communicator has no flat fabric");
  fabric::Fabric* flat = group.fabric.get();
  const Status st = flat->probe(peer, found, source, bytes);
  if (st.isOk() || st.code() == Code::kInvalidUsage) return st;
  const Status failed = st.withContext("probe on rank " + std::to_string(c.rank()) + " of " +
                                       std::to_string(c.size()));
  c.engine().fail(failed);
  return failed;
}

namespace {

// A blocking call on host buffers under what a tool forces (the two entries below).
Status issueForced(Comm& c, Collective coll, const void* send, void* recv, size_t count,
                   strataDataType_t type, strataRedOp_t op, const Forced& forced) {
  Call call;
  call.coll = coll;
  call.send = send;
  call.recv = recv;
  call.count = count;
  call.type = type;
  call.op = op;
  return issueBlocking(c, call, nullptr, &forced);
}

}  // namespace

Status allReduceWithPlan(Comm& c, const plan::Plan& plan, const void* send, void* recv,
                         size_t count, strataDataType_t type, strataRedOp_t op) {
  // A plan that does not fit the hierarchy is the caller's mistake, found locally: no error
  // state for it.
  STRATA_RETURN_IF_ERROR(plan::checkPlan(c.hierarchy(), plan));
  Forced forced;
  forced.plan = &plan;
  return issueForced(c, Collective::kAllReduce, send, recv, count, type, op, forced);
}

Status blocksWithForm(Comm& c, Collective coll, plan::BlockForm form, const void* send, void* recv,
                      size_t count, strataDataType_t type, strataRedOp_t op) {
  if (coll != Collective::kReduceScatter && coll != Collective::kAllGather) {
    return invalidArgument(
        std::string("a forced form is for a reduce-scatter or all-gather, not ") +
        collectiveName(coll));
  }
  // A form the hierarchy cannot run is the caller's mistake, found locally: no error state.
  if (form == plan::BlockForm::kHierarchical && !plan::hierarchicalBlocksPossible(c.hierarchy())) {
    return invalidArgument("the hierarchical form needs a regular layout of 2 levels or more; " +
                           c.hierarchy().describe() + " is not one");
  }
  Forced forced;
  forced.blocks = form;
  // An all-gather reduces nothing: its op is strataSum, as the API's call records it.
  return issueForced(c, coll, send, recv, count, type,
                     coll == Collective::kReduceScatter ? op : strataSum, forced);
}

}  // namespace strata::core
