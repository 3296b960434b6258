// Argument errors of the calls that came with broadcast and reduce, point-to-point, groups,
// split and nonblocking requests (part of strata_mpi_api_errors; api_checker.h declares them).
//
// Every rank makes the same invalid calls, so none of them may wait for another rank: only
// calls that are invalid on every rank appear here (a broadcast whose sendbuff is NULL on the
// root alone would leave the other ranks waiting in a valid call), except with one rank.
#include <algorithm>
#include <climits>
#include <cstdint>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "mpi/api_checker.h"
#include "strata/strata_mpi.h"

namespace strata_test {
namespace {

using From = Checker::From;

constexpr size_t kCount = 8;
constexpr float kSentinel = -12345.0f;

struct BadCall {
  std::string what;
  std::function<strataResult_t()> call;
  bool nullComm;  // the message is the thread's: strataGetLastError(NULL)
  std::vector<const char*> words;
};

// A request handle no call made; an invalid call must leave it in *request.
strataRequest_t untouchedRequest() { return reinterpret_cast<strataRequest_t>(uintptr_t{0x5eed}); }

void checkRootsAndPeers(Checker& ck, strataComm_t comm, int n) {
  std::vector<float> send(kCount * n, 1.0f), recv(kCount * n, kSentinel);
  const float* s = send.data();
  float* r = recv.data();
  const auto F32 = strataFloat32;
  const auto Sum = strataSum;
  strataRequest_t request = untouchedRequest();
  const std::vector<const char*> kRoot = {"root"}, kPeer = {"peer"}, kComm = {"comm"};
  std::vector<BadCall> cases = {
      {"broadcast with root -1",
       [&] { return strataBroadcast(s, r, kCount, F32, -1, comm, nullptr); }, false, kRoot},
      {"broadcast with root nranks",
       [&] { return strataBroadcast(s, r, kCount, F32, n, comm, nullptr); }, false, kRoot},
      {"broadcast with root INT_MAX",
       [&] { return strataBroadcast(s, r, kCount, F32, INT_MAX, comm, nullptr); }, false, kRoot},
      {"bcast with root nranks", [&] { return strataBcast(r, kCount, F32, n, comm, nullptr); },
       false, kRoot},
      {"reduce with root -1",
       [&] { return strataReduce(s, r, kCount, F32, Sum, -1, comm, nullptr); }, false, kRoot},
      {"reduce with root nranks",
       [&] { return strataReduce(s, r, kCount, F32, Sum, n, comm, nullptr); }, false, kRoot},
      {"ibroadcast with root nranks",
       [&] { return strataIBroadcast(s, r, kCount, F32, n, comm, &request); }, false, kRoot},
      {"ireduce with root -1",
       [&] { return strataIReduce(s, r, kCount, F32, Sum, -1, comm, &request); }, false, kRoot},
      {"send to peer -1", [&] { return strataSend(s, kCount, F32, -1, comm, nullptr); }, false,
       kPeer},
      {"send to peer nranks", [&] { return strataSend(s, kCount, F32, n, comm, nullptr); }, false,
       kPeer},
      {"recv from peer nranks", [&] { return strataRecv(r, kCount, F32, n, comm, nullptr); }, false,
       kPeer},
      {"recv from peer -1", [&] { return strataRecv(r, kCount, F32, -1, comm, nullptr); }, false,
       kPeer},
      {"broadcast with recvbuff NULL",
       [&] { return strataBroadcast(s, nullptr, kCount, F32, 0, comm, nullptr); },
       false,
       {"recv"}},
      {"reduce with sendbuff NULL",
       [&] { return strataReduce(nullptr, r, kCount, F32, Sum, 0, comm, nullptr); },
       false,
       {"send"}},
      {"send with sendbuff NULL",
       [&] { return strataSend(nullptr, kCount, F32, 0, comm, nullptr); },
       false,
       {"send"}},
      {"recv with recvbuff NULL",
       [&] { return strataRecv(nullptr, kCount, F32, 0, comm, nullptr); },
       false,
       {"recv"}},
      {"broadcast with datatype 42",
       [&] {
         return strataBroadcast(s, r, kCount, static_cast<strataDataType_t>(42), 0, comm, nullptr);
       },
       false,
       {"type"}},
      {"reduce with op 17",
       [&] {
         return strataReduce(s, r, kCount, F32, static_cast<strataRedOp_t>(17), 0, comm, nullptr);
       },
       false,
       {"op"}},
      {"send with datatype -1",
       [&] { return strataSend(s, kCount, static_cast<strataDataType_t>(-1), 0, comm, nullptr); },
       false,
       {"type"}},
      {"reduce with count SIZE_MAX",
       [&] {
         return strataReduce(s, r, std::numeric_limits<size_t>::max(), F32, Sum, 0, comm, nullptr);
       },
       false,
       {"overflow", "large", "count", "size"}},
      {"broadcast with comm NULL",
       [&] { return strataBroadcast(s, r, kCount, F32, 0, nullptr, nullptr); }, true, kComm},
      {"reduce with comm NULL",
       [&] { return strataReduce(s, r, kCount, F32, Sum, 0, nullptr, nullptr); }, true, kComm},
      {"send with comm NULL", [&] { return strataSend(s, kCount, F32, 0, nullptr, nullptr); }, true,
       kComm},
      {"recv with comm NULL", [&] { return strataRecv(r, kCount, F32, 0, nullptr, nullptr); }, true,
       kComm},
      {"iallreduce with comm NULL",
       [&] { return strataIAllReduce(s, r, kCount, F32, Sum, nullptr, &request); }, true, kComm},
  };
  if (n == 1) {  // the root is the only rank: its own NULL buffer is the error, on every rank
    cases.push_back({"broadcast with sendbuff NULL on the root",
                     [&] { return strataBroadcast(nullptr, r, kCount, F32, 0, comm, nullptr); },
                     false,
                     {"send"}});
    cases.push_back({"reduce with recvbuff NULL on the root",
                     [&] { return strataReduce(s, nullptr, kCount, F32, Sum, 0, comm, nullptr); },
                     false,
                     {"recv"}});
  }
  for (const BadCall& c : cases) {
    std::fill(recv.begin(), recv.end(), kSentinel);
    request = untouchedRequest();
    ck.expectFailure(c.what, c.call, {strataInvalidArgument}, c.nullComm ? nullptr : comm,
                     c.nullComm ? From::kThread : From::kComm, c.words);
    ck.expect(std::all_of(recv.begin(), recv.end(), [](float v) { return v == kSentinel; }),
              c.what + ": wrote recvbuff despite failing");
    ck.expect(std::all_of(send.begin(), send.end(), [](float v) { return v == 1.0f; }),
              c.what + ": wrote sendbuff");
    ck.expect(request == untouchedRequest(), c.what + ": wrote *request despite failing");
    expectCommWorks(ck, comm, n, c.what);
  }

  // Inside a group an invalid call fails at once; the group's valid calls still run (or, if
  // strataGroupEnd reports the refused call too, nothing hangs).
  ck.step("argument errors inside a group");
  strataResult_t rc = strataGroupStart();
  ck.expect(rc == strataSuccess, "strataGroupStart returned " + codeName(rc));
  rc = strataSend(s, kCount, F32, n, comm, nullptr);
  ck.expect(rc == strataInvalidArgument, "send to peer nranks in a group returned " + codeName(rc));
  rc = strataBroadcast(s, r, kCount, F32, -1, comm, nullptr);
  ck.expect(rc == strataInvalidArgument,
            "broadcast from root -1 in a group returned " + codeName(rc));
  int32_t ones[3] = {1, 2, 3}, sums[3] = {};
  rc = strataAllReduce(ones, sums, 3, strataInt32, Sum, comm, nullptr);
  ck.expect(rc == strataSuccess, "a valid allreduce in the group returned " + codeName(rc));
  rc = strataGroupEnd();
  ck.expect(rc == strataSuccess || rc == strataInvalidArgument,
            "strataGroupEnd after refused calls returned " + codeName(rc));
  if (rc == strataSuccess) {
    ck.expect(sums[0] == n && sums[2] == 3 * n, "the group's valid allreduce gave " +
                                                    std::to_string(sums[0]) + ", expected " +
                                                    std::to_string(n));
  }
  expectCommWorks(ck, comm, n, "argument errors inside a group");
}

// NULL buffers are fine when there is nothing to move.
void checkEmptyCalls(Checker& ck, strataComm_t comm, int n) {
  int rank = 0;
  strataCommUserRank(comm, &rank);
  const auto F32 = strataFloat32;
  const std::pair<const char*, std::function<strataResult_t()>> empty[] = {
      {"broadcast count 0 with NULL buffers",
       [&] { return strataBroadcast(nullptr, nullptr, 0, F32, n - 1, comm, nullptr); }},
      {"bcast count 0 with a NULL buffer",
       [&] { return strataBcast(nullptr, 0, F32, 0, comm, nullptr); }},
      {"reduce count 0 with NULL buffers",
       [&] { return strataReduce(nullptr, nullptr, 0, F32, strataAvg, n - 1, comm, nullptr); }},
      {"send and recv count 0 with NULL buffers, to self in a group",
       [&] {
         strataGroupStart();
         const strataResult_t s = strataSend(nullptr, 0, F32, rank, comm, nullptr);
         const strataResult_t r = strataRecv(nullptr, 0, F32, rank, comm, nullptr);
         const strataResult_t e = strataGroupEnd();
         return s != strataSuccess ? s : r != strataSuccess ? r : e;
       }},
      {"ibroadcast count 0 with NULL buffers",
       [&] {
         strataRequest_t request = nullptr;
         const strataResult_t rc = strataIBroadcast(nullptr, nullptr, 0, F32, 0, comm, &request);
         return rc != strataSuccess ? rc : strataWait(&request);
       }},
  };
  for (const auto& [what, call] : empty) {
    ck.step(what);
    const strataResult_t rc = call();
    ck.expect(rc == strataSuccess,
              std::string(what) + " returned " + codeName(rc) + ": " + strataGetLastError(comm));
    expectCommWorks(ck, comm, n, what);
  }
}

// A nonblocking int32 sum of {1, 2, 3} on `comm`; false if it could not start.
bool startSum(Checker& ck, strataComm_t comm, const int32_t* in, int32_t* out,
              strataRequest_t* request, const std::string& what) {
  const strataResult_t rc = strataIAllReduce(in, out, 3, strataInt32, strataSum, comm, request);
  return ck.expect(
      rc == strataSuccess && *request != nullptr,
      what + ": strataIAllReduce returned " + codeName(rc) + ": " + strataGetLastError(comm));
}

void checkSum(Checker& ck, const int32_t* out, int n, const std::string& what) {
  ck.expect(
      out[0] == n && out[1] == 2 * n && out[2] == 3 * n,
      what + ": the allreduce gave " + std::to_string(out[0]) + ", expected " + std::to_string(n));
}

void checkRequests(Checker& ck, strataComm_t comm, int n) {
  float f[kCount] = {}, g[kCount] = {};
  const std::vector<const char*> kRequest = {"request"};
  const std::pair<const char*, std::function<strataResult_t(strataRequest_t*)>> starts[] = {
      {"iallreduce",
       [&](strataRequest_t* q) {
         return strataIAllReduce(f, g, kCount, strataFloat32, strataSum, comm, q);
       }},
      {"ireducescatter",
       [&](strataRequest_t* q) {
         return strataIReduceScatter(f, g, 1, strataFloat32, strataSum, comm, q);
       }},
      {"iallgather",
       [&](strataRequest_t* q) { return strataIAllGather(f, g, 0, strataFloat32, comm, q); }},
      {"ibroadcast",
       [&](strataRequest_t* q) {
         return strataIBroadcast(f, g, kCount, strataFloat32, 0, comm, q);
       }},
      {"ireduce",
       [&](strataRequest_t* q) {
         return strataIReduce(f, g, kCount, strataFloat32, strataSum, 0, comm, q);
       }},
  };
  for (const auto& [name, call] : starts) {
    ck.expectFailure(
        std::string(name) + " with request NULL", [&] { return call(nullptr); },
        {strataInvalidArgument}, comm, From::kComm, kRequest);
  }
  expectCommWorks(ck, comm, n, "nonblocking calls with request NULL");

  strataRequest_t none = nullptr;
  int done = -7;
  ck.expectFailure(
      "strataWait(NULL)", [&] { return strataWait(nullptr); }, {strataInvalidArgument}, nullptr,
      From::kThread, kRequest);
  ck.expectFailure(
      "strataTest(NULL, &done)", [&] { return strataTest(nullptr, &done); },
      {strataInvalidArgument}, nullptr, From::kThread, kRequest);
  ck.expectFailure(
      "strataWait(&request) with *request NULL", [&] { return strataWait(&none); },
      {strataInvalidArgument}, nullptr, From::kThread, kRequest);
  ck.expectFailure(
      "strataTest(&request, &done) with *request NULL", [&] { return strataTest(&none, &done); },
      {strataInvalidArgument}, nullptr, From::kThread, kRequest);
  ck.expect(done == -7, "strataTest wrote *done despite failing");

  // done == NULL: refused, and the request is still there to wait for.
  const int32_t in[3] = {1, 2, 3};
  int32_t out[3] = {};
  strataRequest_t live = nullptr;
  if (startSum(ck, comm, in, out, &live, "done NULL")) {
    const strataRequest_t before = live;
    ck.expectFailure("strataTest(&request, NULL)", [&] { return strataTest(&live, nullptr); },
                     {strataInvalidArgument}, nullptr, From::kThread, {"done"});
    ck.expect(live == before, "strataTest(&request, NULL) changed *request");
    const strataResult_t rc = strataWait(&live);
    ck.expect(rc == strataSuccess && live == nullptr,
              "strataWait after strataTest(&request, NULL) returned " + codeName(rc));
    checkSum(ck, out, n, "strataWait after strataTest(&request, NULL)");

    // The handle is gone once completed: waiting on a copy of it is refused, not a crash. No
    // request is made in between, so its address cannot belong to a new one.
    strataRequest_t copy = before;
    ck.expectFailure(
        "strataWait on a completed (freed) request", [&] { return strataWait(&copy); },
        {strataInvalidArgument}, nullptr, From::kThread, kRequest);
    done = -7;
    ck.expectFailure(
        "strataTest on a completed (freed) request", [&] { return strataTest(&copy, &done); },
        {strataInvalidArgument}, nullptr, From::kThread, kRequest);
    ck.expect(done == -7, "strataTest on a freed request wrote *done");
  }

  // A request made inside a group is issued by strataGroupEnd: waiting for it before is a usage
  // error, and it completes after.
  ck.step("a request waited inside its group");
  out[0] = out[1] = out[2] = 0;
  strataRequest_t grouped = nullptr;
  ck.expect(strataGroupStart() == strataSuccess, "strataGroupStart failed");
  if (startSum(ck, comm, in, out, &grouped, "in a group")) {
    ck.expectFailure("strataWait on a request before its strataGroupEnd",
                     [&] { return strataWait(&grouped); }, {strataInvalidUsage}, nullptr,
                     From::kThread, {"group"});
    ck.expectFailure("strataTest on a request before its strataGroupEnd",
                     [&] { return strataTest(&grouped, &done); }, {strataInvalidUsage}, nullptr,
                     From::kThread, {"group"});
  }
  const strataResult_t end = strataGroupEnd();
  ck.expect(end == strataSuccess, "strataGroupEnd returned " + codeName(end));
  if (grouped != nullptr) {
    const strataResult_t rc = strataWait(&grouped);
    ck.expect(rc == strataSuccess && grouped == nullptr,
              "strataWait after strataGroupEnd returned " + codeName(rc));
    checkSum(ck, out, n, "a request of a group, waited after strataGroupEnd");
  }
  expectCommWorks(ck, comm, n, "the request errors");
}

void checkSplitErrors(Checker& ck, strataComm_t comm, int n) {
  const strataComm_t sentinel = reinterpret_cast<strataComm_t>(uintptr_t{0xc0ffee});
  strataComm_t out = sentinel;
  strataConfig_t zero;
  std::memset(&zero, 0, sizeof zero);
  strataConfig_t garbage;
  std::memset(&garbage, 0xff, sizeof garbage);
  const std::vector<BadCall> cases = {
      {"split with color -2",
       [&] { return strataCommSplit(comm, -2, 0, &out, nullptr); },
       false,
       {"color"}},
      {"split with color INT_MIN",
       [&] { return strataCommSplit(comm, INT_MIN, 0, &out, nullptr); },
       false,
       {"color"}},
      {"split with a zeroed config",
       [&] { return strataCommSplit(comm, 0, 0, &out, &zero); },
       false,
       {"config"}},
      {"split with a config of 0xff bytes",
       [&] { return strataCommSplit(comm, 0, 0, &out, &garbage); },
       false,
       {"config"}},
      {"split with newcomm NULL",
       [&] { return strataCommSplit(comm, 0, 0, nullptr, nullptr); },
       false,
       {"newcomm"}},
      {"split with comm NULL",
       [&] { return strataCommSplit(nullptr, 0, 0, &out, nullptr); },
       true,
       {"comm"}},
  };
  for (const BadCall& c : cases) {
    out = sentinel;
    ck.expectFailure(c.what, c.call, {strataInvalidArgument}, c.nullComm ? nullptr : comm,
                     c.nullComm ? From::kThread : From::kComm, c.words);
    ck.expect(out == sentinel, c.what + ": wrote *newcomm despite failing");
  }
  expectCommWorks(ck, comm, n, "the split errors");
  ck.step("a valid split after the errors");
  strataConfig_t config = STRATA_CONFIG_INITIALIZER;
  strataComm_t child = nullptr;
  const strataResult_t rc = strataCommSplit(comm, 0, 0, &child, &config);
  if (ck.expect(rc == strataSuccess && child != nullptr,
                "a valid split after the errors returned " + codeName(rc))) {
    expectCommWorks(ck, child, n, "a split");
    ck.expect(strataCommDestroy(child) == strataSuccess, "strataCommDestroy(split) failed");
  }
}

// A request whose communicator was destroyed: destruction runs the queued call first, so the
// request completes with the result; an error is acceptable, a crash or a wrong result is not.
void checkRequestAfterDestroy(Checker& ck, int n) {
  ck.step("a request waited after its communicator was destroyed");
  strataComm_t doomed = nullptr;
  if (!ck.expect(strataCommInitMPI(&doomed, MPI_COMM_WORLD) == strataSuccess,
                 "strataCommInitMPI for the request-after-destroy check")) {
    return;
  }
  const int32_t in[3] = {1, 2, 3};
  int32_t out[3] = {};
  strataRequest_t request = nullptr;
  const bool started = startSum(ck, doomed, in, out, &request, "request after destroy");
  ck.expect(strataCommDestroy(doomed) == strataSuccess, "strataCommDestroy with a request queued");
  if (!started) return;
  const strataResult_t rc = strataWait(&request);
  ck.expect(rc == strataSuccess || rc == strataInvalidArgument || rc == strataInvalidUsage,
            "strataWait after its communicator was destroyed returned " + codeName(rc));
  if (rc == strataSuccess) checkSum(ck, out, n, "a request waited after strataCommDestroy");
}

}  // namespace

void checkCallErrors(Checker& ck, strataComm_t comm, int nranks) {
  checkRootsAndPeers(ck, comm, nranks);
  checkEmptyCalls(ck, comm, nranks);
  checkRequests(ck, comm, nranks);
  checkSplitErrors(ck, comm, nranks);
  checkRequestAfterDestroy(ck, nranks);
}

void checkStaleCalls(Checker& ck, strataComm_t stale, const std::string& how) {
  float send[kCount] = {}, recv[kCount] = {};
  strataRequest_t request = untouchedRequest();
  strataComm_t child = reinterpret_cast<strataComm_t>(uintptr_t{0xc0ffee});
  char text[64] = "untouched";
  strataResult_t groupEnd = strataSuccess;
  const std::pair<const char*, std::function<strataResult_t()>> calls[] = {
      {"broadcast",
       [&] { return strataBroadcast(send, recv, kCount, strataFloat32, 0, stale, nullptr); }},
      {"bcast", [&] { return strataBcast(recv, kCount, strataFloat32, 0, stale, nullptr); }},
      {"reduce",
       [&] {
         return strataReduce(send, recv, kCount, strataFloat32, strataSum, 0, stale, nullptr);
       }},
      {"send", [&] { return strataSend(send, kCount, strataFloat32, 0, stale, nullptr); }},
      {"recv", [&] { return strataRecv(recv, kCount, strataFloat32, 0, stale, nullptr); }},
      {"iallreduce",
       [&] {
         return strataIAllReduce(send, recv, kCount, strataFloat32, strataSum, stale, &request);
       }},
      {"ireduce",
       [&] {
         return strataIReduce(send, recv, kCount, strataFloat32, strataSum, 0, stale, &request);
       }},
      {"strataCommSplit", [&] { return strataCommSplit(stale, 0, 0, &child, nullptr); }},
      {"strataCommDescribe", [&] { return strataCommDescribe(stale, text, sizeof text); }},
      {"send inside a group",
       [&] {
         strataGroupStart();
         const strataResult_t rc = strataSend(send, kCount, strataFloat32, 0, stale, nullptr);
         groupEnd = strataGroupEnd();  // nothing valid was recorded: an empty group
         return rc;
       }},
  };
  const std::string pre = how + " communicator: ";
  for (const auto& [what, call] : calls) {
    ck.expectFailure(pre + what, call, {strataInvalidArgument, strataInvalidUsage}, stale,
                     From::kCommOrThread, {"comm", "handle", "destroy", "free"});
  }
  ck.expect(std::all_of(recv, recv + kCount, [](float v) { return v == 0.0f; }),
            pre + "a call wrote recvbuff");
  ck.expect(request == untouchedRequest(), pre + "a nonblocking call wrote *request");
  ck.expect(groupEnd == strataSuccess || groupEnd == strataInvalidArgument,
            pre + "strataGroupEnd after a refused send returned " + codeName(groupEnd));
  ck.expect(child == reinterpret_cast<strataComm_t>(uintptr_t{0xc0ffee}),
            pre + "strataCommSplit wrote *newcomm");
}

// strataCommAbort "frees a communicator's local resources without communicating with other
// ranks": rank 0 aborts while the others wait, in plain MPI, for its word that the abort
// returned, and only then abort theirs. Then the same with a nonblocking all-reduce queued on
// rank 0 alone (its peers never issue theirs): the abort must not run it, and its request
// must complete with an error (or, with one rank, the right result). A hang is a failure.
void checkAbortIsLocal(Checker& ck, int rank, int nranks) {
  for (bool queued : {false, true}) {
    const std::string what = std::string("strataCommAbort on rank 0 alone") +
                             (queued ? ", with a nonblocking all-reduce queued there" : "");
    ck.step(what + ": strataCommInitMPI");
    strataComm_t comm = nullptr;
    if (!ck.expect(strataCommInitMPI(&comm, MPI_COMM_WORLD) == strataSuccess,
                   what + ": strataCommInitMPI failed")) {
      return;
    }
    const int32_t in[3] = {1, 2, 3};
    int32_t out[3] = {};
    strataRequest_t request = nullptr;
    int token = 0;
    if (rank == 0) {
      if (queued) startSum(ck, comm, in, out, &request, what);
      ck.step(what + " (a hang here: the abort waits for the other ranks)");
      const strataResult_t rc = strataCommAbort(comm);
      ck.expect(rc == strataSuccess, what + ": returned " + codeName(rc));
      for (int q = 1; q < nranks; ++q) MPI_Send(&token, 1, MPI_INT, q, 77, MPI_COMM_WORLD);
      if (request != nullptr) {
        ck.step(what + ": strataWait on the request");
        const strataResult_t wrc = strataWait(&request);
        if (wrc == strataSuccess) checkSum(ck, out, nranks, what + ": the request");
        ck.expect(request == nullptr, what + ": *request is not NULL after strataWait");
      }
    } else {
      ck.step(what + ": waiting for rank 0's abort to return");
      MPI_Recv(&token, 1, MPI_INT, 0, 77, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
      const strataResult_t rc = strataCommAbort(comm);
      ck.expect(rc == strataSuccess,
                what + ": returned " + codeName(rc) + " on rank " + std::to_string(rank));
    }
  }
}

void checkGroupEndWithoutStart(Checker& ck) {
  ck.expectFailure("strataGroupEnd without strataGroupStart", [] { return strataGroupEnd(); },
                   {strataInvalidArgument}, nullptr, From::kThread, {"group"});
  ck.step("strataGroupStart, strataGroupEnd, strataGroupEnd");
  const strataResult_t start = strataGroupStart(), end = strataGroupEnd();
  ck.expect(start == strataSuccess && end == strataSuccess,
            "an empty group returned " + codeName(start) + " and " + codeName(end));
  ck.expectFailure("a second strataGroupEnd after an empty group", [] { return strataGroupEnd(); },
                   {strataInvalidArgument}, nullptr, From::kThread, {"group"});
}

}  // namespace strata_test
