// MPI integration test of strataSend/strataRecv and of groups (strataGroupStart/End).
//
// Point-to-point: rings and pairs inside a group, with the sends posted before the receives and
// after them (a group posts all of them together, so neither order may deadlock); every rank
// to every rank; several messages to the same peer in one group, which must match in the order
// they were posted; a rank sending to itself; and outside a group, pairs and a chain whose
// ranks do not depend on each other. Messages of 0, 1, 1021 and about a million elements.
//
// Groups mixing collectives: an all-reduce, a broadcast, a reduce-scatter, an all-gather, a
// reduce and rings of sends and receives in one group, in two orders; nested groups, where the
// inner strataGroupEnd must issue nothing (the recvbuffs still hold their sentinel after it);
// a group spanning three communicators; groups holding nonblocking calls, waited after
// strataGroupEnd. Every result is checked against a local reference (collective_runs.h) and
// every message's bytes (p2p_exchange.h).
//
// All-to-all, gather and scatter (strataAllToAll, strataGather, strataScatter) against MPI's,
// alone and in groups, and their argument errors (exchange_checks.h). strataIprobe and a
// receive from any source built on it (probe_checks.h).
//
// --cross-order-group p2p|collectives runs only a group over two communicators that odd ranks
// name in the other order (an entry of its own each).
//
//   mpiexec -n 4 strata_mpi_p2p_groups [--threads] [--timeout S] [--seed N] [-v]
//                                      [--cross-order-group p2p|collectives]

#include <mpi.h>

#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "mpi/collective_reference.h"
#include "mpi/collective_runs.h"
#include "mpi/exchange_checks.h"
#include "mpi/mpi_harness.h"
#include "mpi/p2p_exchange.h"
#include "mpi/probe_checks.h"
#include "strata/strata_mpi.h"

namespace {

using namespace strata_test;

enum class Order { kSendsFirst, kRecvsFirst };

const char* orderName(Order o) { return o == Order::kSendsFirst ? "sends first" : "recvs first"; }

// Builds an Exchange with `build`, posts it (inside a group when `grouped`) and checks it.
void runExchange(Harness& h, const Comm& cm, const std::string& what, bool grouped,
                 const std::function<void(Exchange&)>& build) {
  const std::string name = what + (grouped ? " in a group" : " outside a group") + " on " + cm.name;
  h.step(name);
  Verdict v = h.verdict(name);
  Exchange ex(cm, h.seed(name));
  build(ex);
  if (grouped) checkResult(v, strataGroupStart(), nullptr);
  ex.postAll(v);
  if (grouped) checkResult(v, strataGroupEnd(), nullptr);
  ex.check(v);
  h.record(v);
}

struct Message {
  strataDataType_t type;
  size_t count;
};

// `big`: also messages of about a million elements.
void runPointToPoint(Harness& h, const Comm& cm, bool big) {
  const int n = cm.size, r = cm.rank, right = (r + 1) % n, left = (r + n - 1) % n;
  const Message sizes[] = {{strataBfloat16, 0},
                           {strataInt8, 1},
                           {strataFloat32, 1021},
                           {strataFloat32, (size_t{1} << 20) + 1}};
  for (const Message& m : sizes) {
    if (!big && m.count > 65536) continue;
    const std::string msg = std::string(typeName(m.type)) + " x" + std::to_string(m.count);
    for (Order order : {Order::kSendsFirst, Order::kRecvsFirst}) {
      const bool sendsFirst = order == Order::kSendsFirst;
      runExchange(h, cm, "ring " + msg + ", " + orderName(order), true, [&](Exchange& ex) {
        if (sendsFirst) ex.send(right, m.type, m.count);
        ex.recv(left, m.type, m.count);
        if (!sendsFirst) ex.send(right, m.type, m.count);
      });
      // Pairs (0,1), (2,3), ...; a rank without a partner exchanges with itself.
      const int partner = (r ^ 1) < n ? (r ^ 1) : r;
      runExchange(h, cm, "pairs " + msg + ", " + orderName(order), true, [&](Exchange& ex) {
        if (sendsFirst) ex.send(partner, m.type, m.count);
        ex.recv(partner, m.type, m.count);
        if (!sendsFirst) ex.send(partner, m.type, m.count);
      });
    }
  }

  // Every rank to every rank, itself included; receives in reverse order in the second.
  for (const Message& m : {Message{strataInt32, 13}, Message{strataUint8, 1021}}) {
    const std::string msg = std::string(typeName(m.type)) + " x" + std::to_string(m.count);
    runExchange(h, cm, "all to all " + msg + ", sends first", true, [&](Exchange& ex) {
      for (int q = 0; q < n; ++q) ex.send(q, m.type, m.count);
      for (int q = 0; q < n; ++q) ex.recv(q, m.type, m.count);
    });
    runExchange(h, cm, "all to all " + msg + ", recvs first, reversed", true, [&](Exchange& ex) {
      for (int q = n - 1; q >= 0; --q) ex.recv(q, m.type, m.count);
      for (int q = n - 1; q >= 0; --q) ex.send(q, m.type, m.count);
    });
  }

  // Four messages to the same peer: equal sizes, so only their order tells them apart.
  for (Order order : {Order::kSendsFirst, Order::kRecvsFirst}) {
    const size_t counts[] = {7, 7, 1021, 7};
    runExchange(h, cm, std::string("four fp64 messages to the right, ") + orderName(order), true,
                [&](Exchange& ex) {
                  if (order == Order::kSendsFirst) {
                    for (size_t c : counts) ex.send(right, strataFloat64, c);
                  }
                  for (size_t c : counts) ex.recv(left, strataFloat64, c);
                  if (order == Order::kRecvsFirst) {
                    for (size_t c : counts) ex.send(right, strataFloat64, c);
                  }
                });
  }
  // The same, interleaved: send 0, recv 0, send 1, recv 1, ...
  runExchange(h, cm, "four int64 messages to the right, interleaved", true, [&](Exchange& ex) {
    for (size_t c : {7, 7, 1021, 7}) {
      ex.send(right, strataInt64, c);
      ex.recv(left, strataInt64, c);
    }
  });

  // To itself.
  for (const Message& m :
       {Message{strataUint32, 0}, Message{strataFloat16, 1}, Message{strataInt64, 1021}}) {
    const std::string msg = std::string(typeName(m.type)) + " x" + std::to_string(m.count);
    runExchange(h, cm, "to self " + msg + ", sends first", true, [&](Exchange& ex) {
      ex.send(r, m.type, m.count);
      ex.recv(r, m.type, m.count);
    });
    runExchange(h, cm, "to self " + msg + ", recvs first", true, [&](Exchange& ex) {
      ex.recv(r, m.type, m.count);
      ex.send(r, m.type, m.count);
    });
  }

  // Outside a group, between ranks that do not depend on each other: even ranks send to the
  // next odd one, then the other way; a chain where each rank receives from the one before it
  // and then sends to the one after it.
  if (n < 2) return;
  const bool paired = (r ^ 1) < n;
  for (const Message& m : sizes) {
    if (!big && m.count > 65536) continue;
    const std::string msg = std::string(typeName(m.type)) + " x" + std::to_string(m.count);
    for (int sender : {0, 1}) {
      runExchange(h, cm, "rank 2k" + std::string(sender ? "+1" : "") + " to its partner " + msg,
                  false, [&](Exchange& ex) {
                    if (!paired) return;
                    if (r % 2 == sender) {
                      ex.send(r ^ 1, m.type, m.count);
                    } else {
                      ex.recv(r ^ 1, m.type, m.count);
                    }
                  });
    }
  }
  // Three messages one way, the large one in the middle: they match in the order issued.
  runExchange(h, cm, "three fp16 messages from rank 2k to 2k+1", false, [&](Exchange& ex) {
    if (!paired) return;
    for (size_t count : {size_t{7}, big ? (size_t{1} << 20) + 1 : size_t{1021}, size_t{7}}) {
      if (r % 2 == 0) {
        ex.send(r + 1, strataFloat16, count);
      } else {
        ex.recv(r - 1, strataFloat16, count);
      }
    }
  });
  runExchange(h, cm, "chain fp32 x1021", false, [&](Exchange& ex) {
    if (r > 0) ex.recv(r - 1, strataFloat32, 1021);
    if (r + 1 < n) ex.send(r + 1, strataFloat32, 1021);
  });
}

// ----- Groups of collectives ------------------------------------------------------------------

// The collectives a mixed group holds, each on its communicator.
struct GroupedCase {
  const Comm* cm;
  Case c;
};

std::vector<std::unique_ptr<CaseRun>> makeRuns(Harness& h, const std::string& what,
                                               const std::vector<GroupedCase>& cases) {
  std::vector<std::unique_ptr<CaseRun>> runs;
  for (const GroupedCase& g : cases) {
    Case c = g.c;
    c.root = resolveRoot(c.root, g.cm->size);
    runs.push_back(makeCaseRun(*g.cm, c, Reference::kLocal,
                               h.seed(what + " " + describe(c) + " on " + g.cm->name)));
  }
  return runs;
}

// A ring to the right and one to the left on `ex`'s communicator.
void addRings(Exchange& ex, const Comm& cm) {
  const int right = (cm.rank + 1) % cm.size, left = (cm.rank + cm.size - 1) % cm.size;
  ex.send(right, strataUint8, 1021);
  ex.recv(left, strataUint8, 1021);
  ex.recv(right, strataInt32, 13);
  ex.send(left, strataInt32, 13);
}

std::vector<GroupedCase> mixedCases(const Comm& cm) {
  return {
      {&cm, {Coll::kAllReduce, strataFloat32, strataSum, 1021, false}},
      {&cm, {Coll::kBroadcast, strataInt64, strataSum, 13, false, -1}},
      {&cm, {Coll::kReduceScatter, strataBfloat16, strataSum, 65, true}},
      {&cm, {Coll::kAllGather, strataFloat16, strataSum, 13, false}},
      {&cm, {Coll::kReduce, strataInt32, strataMax, 1021, false, 0, Others::kNull}},
      {&cm, {Coll::kAllReduce, strataUint64, strataProd, 65537, true}},
  };
}

// One group: the collectives and the rings, either all collectives first or alternating.
void runMixedGroup(Harness& h, const Comm& cm, bool interleaved) {
  const std::string what = std::string("group of collectives and rings, ") +
                           (interleaved ? "interleaved" : "collectives first") + ", on " + cm.name;
  h.step(what);
  Verdict v = h.verdict(what);
  auto runs = makeRuns(h, what, mixedCases(cm));
  Exchange ex(cm, h.seed(what));
  addRings(ex, cm);
  checkResult(v, strataGroupStart(), nullptr);
  for (size_t i = 0; i < runs.size() || i < ex.size(); ++i) {
    if (i < runs.size()) checkResult(v, runs[i]->call(), cm.comm);
    if (interleaved && i < ex.size()) checkResult(v, ex.post(i), cm.comm);
  }
  if (!interleaved) ex.postAll(v);
  checkResult(v, strataGroupEnd(), nullptr);
  for (auto& run : runs) run->check(v);
  ex.check(v);
  h.record(v);
}

// Only the outermost strataGroupEnd issues: after an inner End nothing is written yet.
void runNestedGroups(Harness& h, const Comm& cm) {
  const std::string what = "nested groups on " + cm.name;
  h.step(what);
  Verdict v = h.verdict(what);
  auto runs = makeRuns(h, what,
                       {{&cm, {Coll::kAllReduce, strataInt32, strataSum, 1021, false}},
                        {&cm, {Coll::kBroadcast, strataFloat64, strataSum, 13, false, -1}},
                        {&cm, {Coll::kAllGather, strataInt8, strataSum, 5, false}},
                        {&cm, {Coll::kReduce, strataFloat32, strataMin, 1021, false, 0}}});
  Exchange ex(cm, h.seed(what));
  addRings(ex, cm);
  checkResult(v, strataGroupStart(), nullptr);
  checkResult(v, runs[0]->call(), cm.comm);
  checkResult(v, strataGroupStart(), nullptr);
  checkResult(v, runs[1]->call(), cm.comm);
  ex.postAll(v);
  checkResult(v, strataGroupStart(), nullptr);  // three deep
  checkResult(v, runs[2]->call(), cm.comm);
  checkResult(v, strataGroupEnd(), nullptr);
  checkResult(v, strataGroupEnd(), nullptr);
  // Still inside the outer group: nothing may have run.
  for (size_t i = 0; i < 3; ++i) runs[i]->recv().checkUnwritten(v, "recvbuff before the outer end");
  checkResult(v, runs[3]->call(), cm.comm);
  checkResult(v, strataGroupEnd(), nullptr);
  for (auto& run : runs) run->check(v);
  ex.check(v);
  h.record(v);
}

// A group's collectives on one communicator run in call order: a chain of calls that feed each
// other (collective_runs.h: Chain) in one group.
void runChainGroup(Harness& h, const Comm& cm) {
  const std::string what = "a group of calls that feed each other on " + cm.name;
  h.step(what);
  Verdict v = h.verdict(what);
  Chain ch(cm, 4099);
  const size_t n = ch.a.size();
  checkResult(v, strataGroupStart(), nullptr);
  checkResult(
      v, strataBroadcast(ch.a.data(), ch.b.data(), n, strataInt32, ch.root(), cm.comm, nullptr),
      cm.comm);
  checkResult(
      v, strataAllReduce(ch.b.data(), ch.c.data(), n, strataInt32, strataSum, cm.comm, nullptr),
      cm.comm);
  checkResult(
      v, strataReduce(ch.c.data(), ch.d.data(), n, strataInt32, strataSum, 0, cm.comm, nullptr),
      cm.comm);
  checkResult(v, strataGroupEnd(), nullptr);
  ch.check(v);
  h.record(v);
}

// A group over `a`, `b` (other members) and `c` (the same as `a`): the calls alternate between
// the communicators.
void runGroupOverComms(Harness& h, const Comm& a, const Comm& b, const Comm& c) {
  const std::string what = "group over " + a.name + ", " + b.name + " and " + c.name;
  h.step(what);
  Verdict v = h.verdict(what);
  // Seeds from what every rank of a communicator agrees on (not `what`: b differs by rank).
  const std::string seedName = "group over three communicators";
  auto runs = makeRuns(h, seedName,
                       {{&a, {Coll::kAllReduce, strataFloat32, strataSum, 1021, false}},
                        {&b, {Coll::kAllReduce, strataInt32, strataMax, 1021, true}},
                        {&c, {Coll::kBroadcast, strataUint8, strataSum, 1021, false, -1}},
                        {&b, {Coll::kReduce, strataFloat64, strataSum, 13, false, -1}},
                        {&a, {Coll::kAllGather, strataBfloat16, strataSum, 7, true}},
                        {&c, {Coll::kReduceScatter, strataInt64, strataSum, 5, false}}});
  // Rings on all three: a and c have the same members, so their messages are alike.
  Exchange ringA(a, h.seed(seedName + " ring a")), ringB(b, h.seed(seedName + " ring b")),
      ringC(c, h.seed(seedName + " ring c"));
  addRings(ringA, a);
  addRings(ringB, b);
  addRings(ringC, c);
  checkResult(v, strataGroupStart(), nullptr);
  checkResult(v, runs[0]->call(), a.comm);
  ringA.postAll(v);
  ringB.postAll(v);
  checkResult(v, runs[1]->call(), b.comm);
  checkResult(v, runs[2]->call(), c.comm);
  ringC.postAll(v);
  for (size_t i = 3; i < runs.size(); ++i) checkResult(v, runs[i]->call(), nullptr);
  checkResult(v, strataGroupEnd(), nullptr);
  for (auto& run : runs) run->check(v);
  ringA.check(v);
  ringB.check(v);
  ringC.check(v);
  h.record(v);
}

// Nonblocking calls inside a group: their requests complete once the group ended.
void runNonblockingInGroup(Harness& h, const Comm& cm) {
  const std::string what = "nonblocking calls in a group on " + cm.name;
  h.step(what);
  Verdict v = h.verdict(what);
  auto runs = makeRuns(h, what,
                       {{&cm, {Coll::kAllReduce, strataFloat32, strataAvg, 1021, false}},
                        {&cm, {Coll::kBroadcast, strataFloat16, strataSum, 13, true, -1}},
                        {&cm, {Coll::kReduce, strataUint32, strataSum, 65537, false, 0}}});
  Exchange ex(cm, h.seed(what));
  addRings(ex, cm);
  strataRequest_t requests[3] = {nullptr, nullptr, nullptr};
  checkResult(v, strataGroupStart(), nullptr);
  checkResult(v, runs[0]->start(&requests[0]), cm.comm);
  ex.postAll(v);
  checkResult(v, runs[1]->start(&requests[1]), cm.comm);
  checkResult(v, runs[2]->start(&requests[2]), cm.comm);
  checkResult(v, strataGroupEnd(), nullptr);
  for (int i = 2; i >= 0; --i) {
    if (requests[i] == nullptr) {
      v.fail("request " + std::to_string(i) + " is NULL after the call");
      continue;
    }
    checkResult(v, strataWait(&requests[i]), nullptr);
    if (requests[i] != nullptr) v.fail("*request is not NULL after strataWait");
  }
  for (auto& run : runs) run->check(v);
  ex.check(v);
  h.record(v);
}

// A group of nonblocking calls only: strataGroupEnd need not wait for them; the requests
// complete them, waited in call order.
void runNonblockingOnlyGroup(Harness& h, const Comm& cm) {
  const std::string what = "a group of nonblocking calls only on " + cm.name;
  h.step(what);
  Verdict v = h.verdict(what);
  auto runs = makeRuns(h, what,
                       {{&cm, {Coll::kReduceScatter, strataInt32, strataSum, 1021, false}},
                        {&cm, {Coll::kAllGather, strataBfloat16, strataSum, 65, true}},
                        {&cm, {Coll::kReduce, strataFloat32, strataMax, 4099, true, -1}}});
  std::vector<strataRequest_t> requests(runs.size(), nullptr);
  checkResult(v, strataGroupStart(), nullptr);
  for (size_t i = 0; i < runs.size(); ++i) checkResult(v, runs[i]->start(&requests[i]), cm.comm);
  checkResult(v, strataGroupEnd(), nullptr);
  for (size_t i = 0; i < runs.size(); ++i) {
    if (requests[i] == nullptr) {
      v.fail("request " + std::to_string(i) + " is NULL after the call");
      continue;
    }
    checkResult(v, strataWait(&requests[i]), nullptr);
    if (requests[i] != nullptr) v.fail("*request is not NULL after strataWait");
    runs[i]->check(v);
  }
  h.record(v);
}

// A group is issued as a whole at strataGroupEnd (NCCL's semantics), so the order of its
// communicators may differ between ranks: even ranks put `a` first, odd ranks `b`.
//   p2p:          even ranks send on a and receive on b, odd ranks the other way round (each
//                 pair's messages match within one communicator);
//   collectives:  an all-reduce on each, even ranks a's first, odd ranks b's.
// A library that issues one communicator after the other, in the order each first appeared,
// deadlocks here (the watchdog reports it).
void runCrossOrderGroup(Harness& h, const Comm& a, const Comm& b, const std::string& kind) {
  const bool even = h.rank() % 2 == 0;
  const Comm& first = even ? a : b;
  const Comm& second = even ? b : a;
  const std::string what = "a group over " + a.name + " and " + b.name + ", " + kind +
                           ", the communicators in another order on odd ranks";
  h.step(what + " (a hang here: the group issued one communicator after the other)");
  Verdict v = h.verdict(what);
  std::vector<std::unique_ptr<CaseRun>> runs;
  Exchange onA(a, h.seed(what + " a")), onB(b, h.seed(what + " b"));
  const int partner = (h.rank() ^ 1) < h.size() ? (h.rank() ^ 1) : h.rank();
  if (kind == "p2p") {
    (even ? onA : onB).send(partner, strataFloat32, 65537);
    (even ? onB : onA).recv(partner, strataFloat32, 65537);
    if (partner == h.rank()) {  // alone: receive its own sends too
      (even ? onB : onA).send(partner, strataFloat32, 65537);
      (even ? onA : onB).recv(partner, strataFloat32, 65537);
    }
  } else {
    // The same collective on each communicator on every rank (a float sum on a, an int max on
    // b), issued in the other order on odd ranks.
    const Case onFirst = &first == &a
                             ? Case{Coll::kAllReduce, strataFloat32, strataSum, 65537, false}
                             : Case{Coll::kAllReduce, strataInt32, strataMax, 65537, false};
    const Case onSecond = &second == &a
                              ? Case{Coll::kAllReduce, strataFloat32, strataSum, 65537, false}
                              : Case{Coll::kAllReduce, strataInt32, strataMax, 65537, false};
    runs = makeRuns(h, what, {{&first, onFirst}, {&second, onSecond}});
  }
  checkResult(v, strataGroupStart(), nullptr);
  for (auto& run : runs) checkResult(v, run->call(), nullptr);
  Exchange& firstEx = even ? onA : onB;
  Exchange& secondEx = even ? onB : onA;
  firstEx.postAll(v);
  secondEx.postAll(v);
  checkResult(v, strataGroupEnd(), nullptr);
  for (auto& run : runs) run->check(v);
  onA.check(v);
  onB.check(v);
  h.record(v);
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(argc, argv, "strata send/recv and groups (run under mpiexec)");
  std::string crossOrder;
  h.app()
      .add_option("--cross-order-group", crossOrder,
                  "only a group over two communicators in another order on odd ranks")
      ->check(CLI::IsMember({"p2p", "collectives"}));
  if (!h.start(argc, argv)) return h.exitCode();

  h.step("strataCommInitMPI(MPI_COMM_WORLD)");
  strataComm_t worldComm = nullptr;
  if (!h.expectSuccess(strataCommInitMPI(&worldComm, MPI_COMM_WORLD), "strataCommInitMPI")) {
    return h.finish();
  }
  Comm world = commOf(worldComm, MPI_COMM_WORLD, "world");

  if (!crossOrder.empty()) {
    strataComm_t secondComm = nullptr;
    if (h.expectSuccess(strataCommInitMPI(&secondComm, MPI_COMM_WORLD), "strataCommInitMPI")) {
      runCrossOrderGroup(h, world, commOf(secondComm, MPI_COMM_NULL, "world#2"), crossOrder);
      h.expectSuccess(strataCommDestroy(secondComm), "strataCommDestroy(world#2)");
    }
    h.expectSuccess(strataCommDestroy(worldComm), "strataCommDestroy(world)");
    return h.finish();
  }

  runPointToPoint(h, world, true);
  for (bool interleaved : {false, true}) runMixedGroup(h, world, interleaved);
  runNestedGroups(h, world);
  runChainGroup(h, world);
  runNonblockingInGroup(h, world);
  runNonblockingOnlyGroup(h, world);
  runExchanges(h, world);
  runProbes(h, world);

  // A second communicator over every rank, and the world split by parity.
  h.step("the second communicator and the parity split");
  strataComm_t secondComm = nullptr, parityComm = nullptr;
  const bool made =
      h.expectSuccess(strataCommInitMPI(&secondComm, MPI_COMM_WORLD), "strataCommInitMPI (#2)") &&
      h.expectSuccess(strataCommSplit(worldComm, h.rank() % 2, h.rank(), &parityComm, nullptr),
                      "strataCommSplit by parity", worldComm);
  if (made) {
    const Comm second = commOf(secondComm, MPI_COMM_NULL, "world#2");
    const Comm parity =
        commOf(parityComm, MPI_COMM_NULL, "parity " + std::to_string(h.rank() % 2));
    runGroupOverComms(h, world, parity, second);
    runPointToPoint(h, parity, false);
    runMixedGroup(h, parity, true);
    h.step("destroying the second communicator and the parity split");
    h.expectSuccess(strataCommDestroy(parityComm), "strataCommDestroy(parity)");
    h.expectSuccess(strataCommDestroy(secondComm), "strataCommDestroy(world#2)");
  }
  runMixedGroup(h, world, false);  // world still works

  h.step("strataCommDestroy(world)");
  h.expectSuccess(strataCommDestroy(worldComm), "strataCommDestroy(world)");
  return h.finish();
}
