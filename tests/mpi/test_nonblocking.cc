// MPI integration test of the nonblocking host calls (strataIAllReduce, IReduceScatter,
// IAllGather, IBroadcast, IReduce) and their requests (strataTest, strataWait).
//
// Several calls in flight, waited in call order, in reverse, in a random order (the same on
// every rank, and one of each rank's own), or polled with strataTest until done; blocking calls
// issued between them (a blocking call runs after the queued ones, so when it returns the
// earlier requests are complete); calls on three communicators interleaved. Every result is
// checked against a local reference (collective_runs.h), and *request must be NULL once a
// request completed. With --threads also two threads at once, each driving a communicator of
// its own (which MPI_THREAD_MULTIPLE allows); and requests waited after their communicator was
// destroyed.
//
// Progress, without timing claims on strata: with a progress thread (--threads, STRATA_PROGRESS
// unset or 1) one rank starts a 16 MiB all-reduce and makes no strata call until every other
// rank reported (by a plain MPI message) that its own all-reduce finished, which it cannot
// without that rank's thread; then its first strataTest must say done. Without one (MPI_Init,
// or STRATA_PROGRESS=0) no other rank may finish before that rank's first strataTest, which
// runs the call and says done.
//
//   mpiexec -n 4 strata_mpi_nonblocking [--threads] [--timeout S] [--seed N] [-v]

#include <mpi.h>

#include <algorithm>
#include <chrono>
#include <memory>
#include <numeric>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include "mpi/collective_reference.h"
#include "mpi/collective_runs.h"
#include "mpi/misuse_checks.h"
#include "mpi/mpi_harness.h"
#include "mpi/p2p_exchange.h"
#include "strata/strata_mpi.h"

namespace {

using namespace strata_test;

// A nonblocking call in flight and what it must produce.
struct Pending {
  std::string what;
  std::unique_ptr<CaseRun> run;
  strataRequest_t request = nullptr;
  bool done = false;
};

// Starts case `c` on `cm`; a failure to start is recorded in `v` (the request stays NULL).
Pending start(Harness& h, const Comm& cm, Case c, const std::string& tag, Verdict& v) {
  Pending p;
  c.root = resolveRoot(c.root, cm.size);
  p.what = describe(c) + " on " + cm.name;
  p.run = makeCaseRun(cm, c, Reference::kLocal, h.seed(tag + " " + p.what));
  const strataResult_t rc = p.run->start(&p.request);
  if (checkResult(v, rc, cm.comm) && p.request == nullptr) v.fail(p.what + ": *request is NULL");
  return p;
}

// Waits for p (unless done) and checks its request and result.
void finish(Pending& p, Verdict& v) {
  if (!p.done && p.request != nullptr) {
    const strataResult_t rc = strataWait(&p.request);
    if (rc != strataSuccess) v.fail(p.what + ": strataWait returned " + codeName(rc));
    if (p.request != nullptr) v.fail(p.what + ": *request is not NULL after strataWait");
    p.done = true;
  }
  if (p.done) p.run->check(v);
}

// Eight mixed calls, each collective at least once, sizes from 0 to 65537 elements; the
// root-only buffers NULL elsewhere for one broadcast and one reduce.
std::vector<Case> mixedCases() {
  return {
      {Coll::kAllReduce, strataFloat32, strataSum, 65537, false},
      {Coll::kBroadcast, strataInt8, strataSum, 1021, false, -1},
      {Coll::kReduce, strataFloat64, strataSum, 1021, false, 0, Others::kNull},
      {Coll::kReduceScatter, strataBfloat16, strataSum, 1021, true},
      {Coll::kAllGather, strataInt32, strataSum, 13, false},
      {Coll::kAllReduce, strataUint8, strataMax, 0, true},
      {Coll::kReduce, strataInt64, strataProd, 13, true, -1},
      {Coll::kBroadcast, strataFloat16, strataSum, 13, false, 0, Others::kNull},
  };
}

enum class WaitOrder { kCallOrder, kReverse, kSharedRandom, kOwnRandom, kPoll };

const char* orderName(WaitOrder o) {
  switch (o) {
    case WaitOrder::kCallOrder:
      return "waited in call order";
    case WaitOrder::kReverse:
      return "waited in reverse";
    case WaitOrder::kSharedRandom:
      return "waited in a random order (the same on every rank)";
    case WaitOrder::kOwnRandom:
      return "waited in a random order of each rank's own";
    case WaitOrder::kPoll:
      return "polled with strataTest";
  }
  return "?";
}

void runInFlight(Harness& h, const Comm& cm, WaitOrder order) {
  const std::string what =
      std::string("8 calls in flight, ") + orderName(order) + ", on " + cm.name;
  h.step(what);
  Verdict v = h.verdict(what);
  std::vector<Pending> calls;
  for (const Case& c : mixedCases()) calls.push_back(start(h, cm, c, what, v));
  std::vector<size_t> idx(calls.size());
  std::iota(idx.begin(), idx.end(), size_t{0});
  if (order == WaitOrder::kReverse) std::reverse(idx.begin(), idx.end());
  if (order == WaitOrder::kSharedRandom || order == WaitOrder::kOwnRandom) {
    std::mt19937_64 rng(h.seed(what) ^ (order == WaitOrder::kOwnRandom ? mix(h.rank()) : 0));
    std::shuffle(idx.begin(), idx.end(), rng);
  }
  if (order == WaitOrder::kPoll) {
    // Round robin over the pending requests until all are done. A request not done stays as
    // it was; without a progress thread the first strataTest runs the call and is done.
    for (bool pending = true; pending;) {
      pending = false;
      for (Pending& p : calls) {
        if (p.done || p.request == nullptr) continue;
        const strataRequest_t before = p.request;
        int done = -1;
        const strataResult_t rc = strataTest(&p.request, &done);
        if (rc != strataSuccess || (done != 0 && done != 1)) {
          v.fail(p.what + ": strataTest returned " + codeName(rc) + ", done " +
                 std::to_string(done));
          p.request = nullptr;
          continue;
        }
        if (done == 1 && p.request != nullptr) v.fail(p.what + ": done, but *request is not NULL");
        if (done == 0 && p.request != before) v.fail(p.what + ": not done, but *request changed");
        if (done == 0 && !h.progressThread()) {
          v.fail(p.what + ": strataTest without a progress thread must run the call (done = 0)");
        }
        p.done = done == 1;
        pending = pending || done == 0;
      }
      if (pending) std::this_thread::yield();
    }
  }
  for (size_t i : idx) finish(calls[i], v);
  h.record(v);
}

// Blocking calls between nonblocking ones: each runs after the calls queued before it, so once
// it returned their first strataTest says done.
void runMixedWithBlocking(Harness& h, const Comm& cm) {
  const std::string what = "nonblocking calls with blocking ones between them on " + cm.name;
  h.step(what);
  Verdict v = h.verdict(what);
  const std::vector<Case> cases = mixedCases();
  std::vector<Pending> calls;
  size_t next = 0;
  const Case blocking[] = {{Coll::kAllReduce, strataInt32, strataSum, 65537, false},
                           {Coll::kBroadcast, strataFloat64, strataSum, 1021, true, -1},
                           {Coll::kReduce, strataUint64, strataMax, 1021, false, 0}};
  for (Case b : blocking) {
    for (int k = 0; k < 3 && next < cases.size(); ++k)
      calls.push_back(start(h, cm, cases[next++], what, v));
    b.root = resolveRoot(b.root, cm.size);
    auto run = makeCaseRun(cm, b, Reference::kLocal, h.seed(what + " " + describe(b)));
    if (checkResult(v, run->call(), cm.comm)) run->check(v);
    for (Pending& p : calls) {
      if (p.done || p.request == nullptr) continue;
      int done = -1;
      const strataResult_t rc = strataTest(&p.request, &done);
      if (rc != strataSuccess || done != 1 || p.request != nullptr) {
        v.fail(p.what + ": after a later blocking " + describe(b) + " returned, strataTest gave " +
               codeName(rc) + ", done " + std::to_string(done) +
               (p.request ? ", *request not NULL" : ""));
      }
      p.done = rc == strataSuccess && done == 1;
    }
  }
  for (; next < cases.size(); ++next) calls.push_back(start(h, cm, cases[next], what, v));
  for (auto it = calls.rbegin(); it != calls.rend(); ++it) finish(*it, v);
  h.record(v);
}

// Queued calls that feed each other, and a blocking one that reads the last of them
// (collective_runs.h: Chain).
void runChain(Harness& h, const Comm& cm) {
  const std::string what =
      "nonblocking calls that feed each other, then a blocking one, on " + cm.name;
  h.step(what);
  Verdict v = h.verdict(what);
  Chain ch(cm, 65537);
  const size_t n = ch.a.size();
  strataRequest_t rb = nullptr, rc = nullptr;
  checkResult(v,
              strataIBroadcast(ch.a.data(), ch.b.data(), n, strataInt32, ch.root(), cm.comm, &rb),
              cm.comm);
  checkResult(v,
              strataIAllReduce(ch.b.data(), ch.c.data(), n, strataInt32, strataSum, cm.comm, &rc),
              cm.comm);
  checkResult(
      v, strataReduce(ch.c.data(), ch.d.data(), n, strataInt32, strataSum, 0, cm.comm, nullptr),
      cm.comm);
  for (strataRequest_t* r : {&rc, &rb}) {
    if (*r != nullptr) checkResult(v, strataWait(r), nullptr);
  }
  ch.check(v);
  h.record(v);
}

// Calls on several communicators, interleaved, waited in reverse.
void runInterleaved(Harness& h, const std::vector<const Comm*>& comms) {
  std::string what = "nonblocking calls interleaved on";
  for (const Comm* cm : comms) what += " " + cm->name;
  h.step(what);
  Verdict v = h.verdict(what);
  std::vector<Pending> calls;
  const std::vector<Case> cases = mixedCases();
  for (size_t i = 0; i < cases.size(); ++i) {
    // The seed's tag is the same on every rank (`what` names this rank's half).
    for (const Comm* cm : comms) calls.push_back(start(h, *cm, cases[i], "interleaved", v));
  }
  for (auto it = calls.rbegin(); it != calls.rend(); ++it) finish(*it, v);
  h.record(v);
}

// Many small calls in flight at once.
void runMany(Harness& h, const Comm& cm) {
  const std::string what = "64 small calls in flight on " + cm.name;
  h.step(what);
  Verdict v = h.verdict(what);
  std::vector<Pending> calls;
  for (int i = 0; i < 64; ++i) {
    const Case c = i % 2 == 0 ? Case{Coll::kAllReduce, strataInt32, strataSum, size_t(1 + i), false}
                              : Case{Coll::kBroadcast, strataUint8, strataSum, size_t(i), false, i};
    Case resolved = c;
    resolved.root = c.root % cm.size;
    calls.push_back(start(h, cm, resolved, what + " #" + std::to_string(i), v));
  }
  for (Pending& p : calls) finish(p, v);
  h.record(v);
}

// See the file comment. `idle` starts a 16 MiB all-reduce and makes no strata call until the
// other ranks' tokens came (with a progress thread) or for half a second (without one, when no
// token may come); the others wait for theirs and send a token.
void runProgress(Harness& h, const Comm& cm, int idle, MPI_Comm tokens) {
  const bool thread = h.progressThread();
  const std::string what = std::string("progress ") + (thread ? "with" : "without") +
                           " a progress thread, rank " + std::to_string(idle) + " idle, on " +
                           cm.name;
  h.step(what);
  Verdict v = h.verdict(what);
  Pending p =
      start(h, cm, {Coll::kAllReduce, strataFloat64, strataSum, size_t{2} << 20, false}, what, v);
  if (cm.rank != idle) {
    finish(p, v);
    int token = 1;
    MPI_Send(&token, 1, MPI_INT, idle, 0, tokens);
    h.record(v);
    return;
  }
  std::vector<int> got(cm.size, 0);
  std::vector<MPI_Request> recvs;
  for (int q = 0; q < cm.size; ++q) {
    if (q == idle) continue;
    recvs.emplace_back();
    MPI_Irecv(&got[q], 1, MPI_INT, q, 0, tokens, &recvs.back());
  }
  using Clock = std::chrono::steady_clock;
  const auto startTime = Clock::now();
  int arrived = 0;
  if (thread) {
    h.step(what +
           ": waiting for the others' tokens, without a strata call (a hang here: the "
           "progress thread never ran this rank's part)");
    MPI_Waitall(static_cast<int>(recvs.size()), recvs.data(), MPI_STATUSES_IGNORE);
    // The others finished; this rank's own last steps (its share of the final copies) get a
    // generous while, still without a strata call.
    std::this_thread::sleep_for(std::chrono::seconds(2));
  } else {
    while (Clock::now() - startTime < std::chrono::milliseconds(500)) {
      int flag = 0;
      MPI_Testall(static_cast<int>(recvs.size()), recvs.data(), &flag, MPI_STATUSES_IGNORE);
      arrived = static_cast<int>(std::count(got.begin(), got.end(), 1));
      if (flag) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    if (arrived > 0) {
      v.fail(std::to_string(arrived) +
             " ranks finished the all-reduce before this rank made a "
             "strata call, though it has no progress thread");
    }
  }
  h.step(what + ": the first strataTest");
  int done = -1;
  const strataResult_t rc = p.request ? strataTest(&p.request, &done) : strataInternalError;
  if (rc != strataSuccess || done != 1 || p.request != nullptr) {
    v.fail(std::string("the first strataTest ") +
           (thread ? "after the others finished and 2 s of sleep" : "(which runs the call)") +
           " returned " + codeName(rc) + ", done " + std::to_string(done) +
           (p.request ? ", *request not NULL" : ""));
  }
  p.done = rc == strataSuccess && done == 1;
  finish(p, v);
  if (!thread) MPI_Waitall(static_cast<int>(recvs.size()), recvs.data(), MPI_STATUSES_IGNORE);
  h.record(v);
}

// With MPI_THREAD_MULTIPLE different communicators may be used at once from different threads:
// two threads, one communicator each, run blocking calls, a group with rings and nonblocking
// calls together (groups are per thread).
void runConcurrentComms(Harness& h, const Comm& a, const Comm& b) {
  const std::string what = "two threads, one on " + a.name + " and one on " + b.name;
  h.step(what);
  auto work = [&h](const Comm& cm, Verdict& v) {
    for (int round = 0; round < 2; ++round) {
      const std::string tag = "concurrent round " + std::to_string(round);
      for (Case c : mixedCases()) {
        c.root = resolveRoot(c.root, cm.size);
        auto run = makeCaseRun(cm, c, Reference::kLocal, h.seed(tag + describe(c) + cm.name));
        if (checkResult(v, run->call(), cm.comm)) run->check(v);
      }
      Exchange ring(cm, h.seed(tag + " ring " + cm.name));
      ring.send((cm.rank + 1) % cm.size, strataInt32, 1021);
      ring.recv((cm.rank + cm.size - 1) % cm.size, strataInt32, 1021);
      auto sum = makeCaseRun(cm, {Coll::kAllReduce, strataFloat32, strataSum, 4099, false},
                             Reference::kLocal, h.seed(tag + " group " + cm.name));
      checkResult(v, strataGroupStart(), nullptr);
      ring.postAll(v);
      checkResult(v, sum->call(), cm.comm);
      checkResult(v, strataGroupEnd(), nullptr);
      ring.check(v);
      sum->check(v);
      std::vector<Pending> calls;
      for (const Case& c : mixedCases()) calls.push_back(start(h, cm, c, tag, v));
      for (auto it = calls.rbegin(); it != calls.rend(); ++it) finish(*it, v);
    }
  };
  Verdict va = h.verdict(what + ": the thread on " + a.name);
  Verdict vb = h.verdict(what + ": the thread on " + b.name);
  std::thread ta(work, std::cref(a), std::ref(va)), tb(work, std::cref(b), std::ref(vb));
  ta.join();
  tb.join();
  h.record(va);
  h.record(vb);
}

// Requests whose communicator is destroyed before they are waited for: destruction runs the
// queued calls first, so they complete with their results. The header does not say, so an
// argument or usage error is accepted too; a crash, a hang or a wrong result is not.
void runRequestsOutliveComm(Harness& h) {
  const std::string what = "requests waited after their communicator was destroyed";
  h.step(what);
  Verdict v = h.verdict(what);
  Comm cm;
  cm.name = "doomed";
  cm.rank = h.rank();
  cm.size = h.size();
  if (!checkResult(v, initComm(&cm.comm, MPI_COMM_WORLD), nullptr)) {
    h.record(v);
    return;
  }
  std::vector<Pending> calls;
  for (const Case& c : mixedCases()) calls.push_back(start(h, cm, c, what, v));
  checkResult(v, strataCommDestroy(cm.comm), nullptr);
  for (Pending& p : calls) {
    if (p.request == nullptr) continue;
    const strataResult_t rc = strataWait(&p.request);
    if (rc == strataSuccess) {
      p.run->check(v);
    } else if (rc != strataInvalidArgument && rc != strataInvalidUsage) {
      v.fail(p.what + ": strataWait returned " + codeName(rc));
    }
    if (p.request != nullptr) v.fail(p.what + ": *request is not NULL after strataWait");
    p.done = true;
  }
  h.record(v);
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(argc, argv, "strata's nonblocking calls and requests (run under mpiexec)");
  if (!h.start(argc, argv)) return h.exitCode();

  h.step("strataCommInitMPI(MPI_COMM_WORLD) twice");
  strataComm_t a = nullptr, b = nullptr, half = nullptr;
  if (!h.expectSuccess(initComm(&a, MPI_COMM_WORLD), "strataCommInitMPI") ||
      !h.expectSuccess(initComm(&b, MPI_COMM_WORLD), "strataCommInitMPI (#2)")) {
    return h.finish();
  }
  const Comm world = commOf(a, MPI_COMM_WORLD, "world"),
             world2 = commOf(b, MPI_COMM_WORLD, "world#2");

  for (WaitOrder order : {WaitOrder::kCallOrder, WaitOrder::kReverse, WaitOrder::kSharedRandom,
                          WaitOrder::kOwnRandom, WaitOrder::kPoll}) {
    runInFlight(h, world, order);
  }
  runMixedWithBlocking(h, world);
  runChain(h, world);
  runMany(h, world);

  h.step("splitting the world in halves");
  const int color = h.rank() < (h.size() + 1) / 2 ? 0 : 1;
  if (h.expectSuccess(strataCommSplit(a, color, h.rank(), &half, nullptr), "strataCommSplit", a)) {
    const Comm halfComm = commOf(half, MPI_COMM_NULL, "half " + std::to_string(color));
    runInterleaved(h, {&world, &world2, &halfComm});
    runInFlight(h, halfComm, WaitOrder::kPoll);
    h.expectSuccess(strataCommDestroy(half), "strataCommDestroy(half)");
  }
  runInterleaved(h, {&world2, &world});

  MPI_Comm tokens = MPI_COMM_NULL;
  MPI_Comm_dup(MPI_COMM_WORLD, &tokens);
  runProgress(h, world2, h.size() - 1, tokens);
  MPI_Comm_free(&tokens);

  if (h.threads()) {
    runConcurrentComms(h, world, world2);
    strataComm_t fresh = nullptr;
    if (h.expectSuccess(initComm(&fresh, MPI_COMM_WORLD), "strataCommInitMPI (misuse)")) {
      const Comm misuse = commOf(fresh, MPI_COMM_WORLD, "misuse");
      runTwoIssuers(h, misuse);
      runTwoWaiters(h, misuse);
      h.expectSuccess(strataCommDestroy(fresh), "strataCommDestroy(misuse)");
    }
  }

  h.step("strataCommDestroy");
  h.expectSuccess(strataCommDestroy(b), "strataCommDestroy(world#2)");
  runRequestsOutliveComm(h);
  runInFlight(h, world, WaitOrder::kReverse);
  h.expectSuccess(strataCommDestroy(a), "strataCommDestroy(world)");
  return h.finish();
}
