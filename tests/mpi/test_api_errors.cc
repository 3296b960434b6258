// MPI integration test of strata's API contract outside the arithmetic: version and error
// strings, argument checking (each invalid call returns the documented code, leaves a message
// that names the problem, writes nothing, and leaves the communicator usable), stale handles of
// destroyed or aborted communicators, and, with --expect-init-failure, a strataCommInitMPI that
// must fail on every rank (a bad STRATA_TOPO_FILE set by the ctest entry) without hanging. The
// errors of broadcast, reduce, send/recv, groups, split and requests are in api_errors_calls.cc;
// --group-end-without-start and --abort-is-local run only those checks (entries of their own).
//
// Every rank makes the same invalid calls, so a library that checks arguments collectively cannot
// hang here; one that checks them locally returns at once. A watchdog turns a hang into a failure.
//
//   mpiexec -n 4 strata_mpi_api_errors [--timeout S] [--group-end-without-start | --abort-is-local]
//   STRATA_TOPO_FILE=bad.yaml mpiexec -n 4 strata_mpi_api_errors --expect-init-failure
//       [--message-names bad.yaml]

#include <mpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>
#include <limits>
#include <string>
#include <utility>
#include <vector>

#include "common/watchdog.h"
#include "mpi/api_checker.h"
#include "strata/strata_mpi.h"

namespace {

using namespace strata_test;
using strata::test::Watchdog;

void checkStatics(Checker& ck) {
  ck.step("strataGetVersion / strataGetErrorString");
  int version = -1;
  const strataResult_t rc = strataGetVersion(&version);
  ck.expect(rc == strataSuccess && version == STRATA_VERSION_CODE,
            "strataGetVersion returned " + codeName(rc) + " and " + std::to_string(version) +
                ", expected " + std::to_string(STRATA_VERSION_CODE));
  ck.expect(strataGetVersion(nullptr) == strataInvalidArgument,
            "strataGetVersion(NULL) must return strataInvalidArgument");

  std::vector<std::string> seen;
  for (int code = 0; code < strataNumResults; ++code) {
    const char* s = strataGetErrorString(static_cast<strataResult_t>(code));
    if (!ck.expect(s != nullptr && *s != '\0',
                   "strataGetErrorString(" + std::to_string(code) + ") is NULL or empty")) {
      continue;
    }
    ck.expect(std::find(seen.begin(), seen.end(), s) == seen.end(),
              "strataGetErrorString(" + std::to_string(code) + ") = \"" + s +
                  "\" repeats another code's string");
    seen.emplace_back(s);
  }
  for (int code : {-1, static_cast<int>(strataNumResults), 99}) {
    ck.expect(strataGetErrorString(static_cast<strataResult_t>(code)) != nullptr,
              "strataGetErrorString(" + std::to_string(code) + ") returned NULL");
  }
  ck.expect(strataGetLastError(nullptr) != nullptr, "strataGetLastError(NULL) returned NULL");
}

// Invalid strataCommInitMPI arguments fail locally, before any communication.
void checkInitArguments(Checker& ck) {
  using From = Checker::From;
  ck.expectFailure("strataCommInitMPI(NULL, MPI_COMM_WORLD)",
                   [] { return strataCommInitMPI(nullptr, MPI_COMM_WORLD); },
                   {strataInvalidArgument}, nullptr, From::kThread, {"comm", "null"});

  strataComm_t untouched = reinterpret_cast<strataComm_t>(&ck);
  ck.expectFailure("strataCommInitMPI(&comm, MPI_COMM_NULL)",
                   [&] { return strataCommInitMPI(&untouched, MPI_COMM_NULL); },
                   {strataInvalidArgument, strataInvalidUsage}, nullptr, From::kThread,
                   {"comm", "mpi"});
  ck.expect(untouched == reinterpret_cast<strataComm_t>(&ck),
            "strataCommInitMPI(&comm, MPI_COMM_NULL) wrote *comm despite failing");
}

void checkQueries(Checker& ck, strataComm_t comm) {
  ck.step("strataCommCount / strataCommUserRank");
  int mpiRank = 0, mpiSize = 0, count = -1, rank = -1;
  MPI_Comm_rank(MPI_COMM_WORLD, &mpiRank);
  MPI_Comm_size(MPI_COMM_WORLD, &mpiSize);
  ck.expect(strataCommCount(comm, &count) == strataSuccess && count == mpiSize,
            "strataCommCount gave " + std::to_string(count) + ", MPI " + std::to_string(mpiSize));
  ck.expect(strataCommUserRank(comm, &rank) == strataSuccess && rank == mpiRank,
            "strataCommUserRank gave " + std::to_string(rank) + ", MPI " + std::to_string(mpiRank));
  const char* fresh = strataGetLastError(comm);
  ck.expect(fresh != nullptr && *fresh == '\0',
            std::string("strataGetLastError of a new communicator is \"") +
                (fresh ? fresh : "(null)") + "\", expected \"\"");

  using From = Checker::From;
  int untouched = -7;
  ck.expectFailure("strataCommCount(NULL, &n)",
                   [&] { return strataCommCount(nullptr, &untouched); }, {strataInvalidArgument},
                   nullptr, From::kThread, {"comm"});
  ck.expectFailure("strataCommUserRank(NULL, &r)",
                   [&] { return strataCommUserRank(nullptr, &untouched); }, {strataInvalidArgument},
                   nullptr, From::kThread, {"comm"});
  ck.expect(untouched == -7, "strataCommCount/UserRank(NULL) wrote their output");
  ck.expectFailure("strataCommCount(comm, NULL)", [&] { return strataCommCount(comm, nullptr); },
                   {strataInvalidArgument}, comm, From::kComm, {"count", "null"});
  ck.expectFailure("strataCommUserRank(comm, NULL)",
                   [&] { return strataCommUserRank(comm, nullptr); }, {strataInvalidArgument}, comm,
                   From::kComm, {"rank", "null"});
  // No device call has failed (none ran): the asynchronous error is strataSuccess.
  strataResult_t async = strataInternalError;
  ck.expect(strataCommGetAsyncError(comm, &async) == strataSuccess && async == strataSuccess,
            "strataCommGetAsyncError gave " + std::to_string(static_cast<int>(async)));
  ck.expectFailure("strataCommGetAsyncError(comm, NULL)",
                   [&] { return strataCommGetAsyncError(comm, nullptr); }, {strataInvalidArgument},
                   comm, From::kComm, {"asyncerror", "null"});
  // The flight recorder's dump on demand (a summary in the log: no STRATA_FLIGHT_RECORDER_FILE).
  ck.expect(strataCommDump(comm) == strataSuccess, "strataCommDump(comm) failed");
  ck.expectFailure("strataCommDump(NULL)", [&] { return strataCommDump(nullptr); },
                   {strataInvalidArgument}, nullptr, From::kThread, {"comm"});
}

struct ArgCase {
  std::string what;
  std::function<strataResult_t()> call;
  bool nullComm;  // the message is the thread's: strataGetLastError(NULL)
  std::vector<const char*> words;
};

// Each invalid call returns strataInvalidArgument with a message naming the problem, writes no
// output, and the communicator works afterwards.
void checkArgumentErrors(Checker& ck, strataComm_t comm, int nranks) {
  constexpr size_t kCount = 8;
  const size_t p = static_cast<size_t>(nranks);
  constexpr float kSentinel = -12345.0f;
  std::vector<float> send(kCount * p, 1.0f), recv(kCount * p, kSentinel);
  const float* s = send.data();
  float* r = recv.data();
  const size_t kMax = std::numeric_limits<size_t>::max();
  const auto badType = [](int t) { return static_cast<strataDataType_t>(t); };
  const auto badOp = [](int op) { return static_cast<strataRedOp_t>(op); };
  const std::vector<const char*> kTypeWords = {"type"};
  const std::vector<const char*> kOpWords = {"op"};
  const std::vector<const char*> kSizeWords = {"overflow", "large", "count", "size"};
  const auto F32 = strataFloat32;
  const auto Sum = strataSum;

  const ArgCase cases[] = {
      {"allreduce with comm NULL",
       [&] { return strataAllReduce(s, r, kCount, F32, Sum, nullptr, nullptr); },
       true,
       {"comm"}},
      {"reducescatter with comm NULL",
       [&] { return strataReduceScatter(s, r, kCount, F32, Sum, nullptr, nullptr); },
       true,
       {"comm"}},
      {"allgather with comm NULL",
       [&] { return strataAllGather(s, r, kCount, F32, nullptr, nullptr); },
       true,
       {"comm"}},
      {"allreduce with sendbuff NULL",
       [&] { return strataAllReduce(nullptr, r, kCount, F32, Sum, comm, nullptr); },
       false,
       {"send"}},
      {"allreduce with recvbuff NULL",
       [&] { return strataAllReduce(s, nullptr, kCount, F32, Sum, comm, nullptr); },
       false,
       {"recv"}},
      {"reducescatter with sendbuff NULL",
       [&] { return strataReduceScatter(nullptr, r, kCount, F32, Sum, comm, nullptr); },
       false,
       {"send"}},
      {"reducescatter with recvbuff NULL",
       [&] { return strataReduceScatter(s, nullptr, kCount, F32, Sum, comm, nullptr); },
       false,
       {"recv"}},
      {"allgather with sendbuff NULL",
       [&] { return strataAllGather(nullptr, r, kCount, F32, comm, nullptr); },
       false,
       {"send"}},
      {"allgather with recvbuff NULL",
       [&] { return strataAllGather(s, nullptr, kCount, F32, comm, nullptr); },
       false,
       {"recv"}},
      {"allreduce with datatype 42",
       [&] { return strataAllReduce(s, r, kCount, badType(42), Sum, comm, nullptr); }, false,
       kTypeWords},
      {"allreduce with datatype -1",
       [&] { return strataAllReduce(s, r, kCount, badType(-1), Sum, comm, nullptr); }, false,
       kTypeWords},
      {"allreduce with datatype strataNumTypes",
       [&] { return strataAllReduce(s, r, kCount, strataNumTypes, Sum, comm, nullptr); }, false,
       kTypeWords},
      {"reducescatter with datatype 42",
       [&] { return strataReduceScatter(s, r, kCount, badType(42), Sum, comm, nullptr); }, false,
       kTypeWords},
      {"allgather with datatype 42",
       [&] { return strataAllGather(s, r, kCount, badType(42), comm, nullptr); }, false,
       kTypeWords},
      {"allreduce with op 17",
       [&] { return strataAllReduce(s, r, kCount, F32, badOp(17), comm, nullptr); }, false,
       kOpWords},
      {"allreduce with op strataNumOps",
       [&] { return strataAllReduce(s, r, kCount, F32, strataNumOps, comm, nullptr); }, false,
       kOpWords},
      {"reducescatter with op -1",
       [&] { return strataReduceScatter(s, r, kCount, F32, badOp(-1), comm, nullptr); }, false,
       kOpWords},
      // Sizes whose byte count overflows size_t: the library must refuse them before touching
      // the (small, valid) buffers.
      {"allreduce fp32 with count SIZE_MAX/4+1",
       [&] { return strataAllReduce(s, r, kMax / 4 + 1, F32, Sum, comm, nullptr); }, false,
       kSizeWords},
      {"allreduce fp64 with count SIZE_MAX/8+1",
       [&] { return strataAllReduce(s, r, kMax / 8 + 1, strataFloat64, Sum, comm, nullptr); },
       false, kSizeWords},
      {"allreduce fp32 with count SIZE_MAX",
       [&] { return strataAllReduce(s, r, kMax, F32, Sum, comm, nullptr); }, false, kSizeWords},
      {"reducescatter fp32 with recvcount*nranks*4 > SIZE_MAX",
       [&] { return strataReduceScatter(s, r, kMax / (4 * p) + 1, F32, Sum, comm, nullptr); },
       false, kSizeWords},
      {"allgather fp32 with sendcount*nranks*4 > SIZE_MAX",
       [&] { return strataAllGather(s, r, kMax / (4 * p) + 1, F32, comm, nullptr); }, false,
       kSizeWords},
      // Byte sizes that fit size_t but no buffer (above PTRDIFF_MAX): a SIZE_MAX broadcast
      // once passed validation and crashed in MPI.
      {"broadcast uint8 with count SIZE_MAX",
       [&] { return strataBroadcast(s, r, kMax, strataUint8, 0, comm, nullptr); }, false,
       kSizeWords},
      {"allreduce uint8 with count 2^63",
       [&] { return strataAllReduce(s, r, kMax / 2 + 1, strataUint8, Sum, comm, nullptr); }, false,
       kSizeWords},
      {"send uint8 with count 2^63 + 5",
       [&] { return strataSend(s, kMax / 2 + 6, strataUint8, nranks - 1, comm, nullptr); }, false,
       kSizeWords},
  };
  for (const ArgCase& c : cases) {
    std::fill(recv.begin(), recv.end(), kSentinel);
    ck.expectFailure(c.what, c.call, {strataInvalidArgument}, c.nullComm ? nullptr : comm,
                     c.nullComm ? Checker::From::kThread : Checker::From::kComm, c.words);
    ck.expect(std::all_of(recv.begin(), recv.end(), [&](float v) { return v == kSentinel; }),
              c.what + ": wrote recvbuff despite failing");
    ck.expect(std::all_of(send.begin(), send.end(), [](float v) { return v == 1.0f; }),
              c.what + ": wrote sendbuff");
    expectCommWorks(ck, comm, nranks, c.what);
  }

  // NULL buffers are fine when there is nothing to move.
  const std::pair<const char*, std::function<strataResult_t()>> empty[] = {
      {"allreduce count 0 with NULL buffers",
       [&] { return strataAllReduce(nullptr, nullptr, 0, F32, Sum, comm, nullptr); }},
      {"reducescatter count 0 with NULL buffers",
       [&] { return strataReduceScatter(nullptr, nullptr, 0, F32, Sum, comm, nullptr); }},
      {"allgather count 0 with NULL buffers",
       [&] { return strataAllGather(nullptr, nullptr, 0, F32, comm, nullptr); }},
  };
  for (const auto& [what, call] : empty) {
    ck.step(what);
    const strataResult_t rc = call();
    ck.expect(rc == strataSuccess,
              std::string(what) + " returned " + codeName(rc) + ": " + strataGetLastError(comm));
    expectCommWorks(ck, comm, nranks, what);
  }
}

// Calls with the handle of a communicator that no longer exists fail without touching it (and
// without touching a newer communicator that took its place: checkLifecycle).
void checkStaleHandle(Checker& ck, strataComm_t stale, const std::string& how) {
  int32_t send[4] = {1, 2, 3, 4}, recv[64] = {};
  int out = -7;
  const std::pair<const char*, std::function<strataResult_t()>> calls[] = {
      {"allreduce",
       [&] { return strataAllReduce(send, recv, 4, strataInt32, strataSum, stale, nullptr); }},
      {"reducescatter",
       [&] { return strataReduceScatter(send, recv, 1, strataInt32, strataSum, stale, nullptr); }},
      {"allgather", [&] { return strataAllGather(send, recv, 4, strataInt32, stale, nullptr); }},
      {"strataCommCount", [&] { return strataCommCount(stale, &out); }},
      {"strataCommUserRank", [&] { return strataCommUserRank(stale, &out); }},
      {"strataCommGetAsyncError",
       [&] {
         strataResult_t async = strataSuccess;
         return strataCommGetAsyncError(stale, &async);
       }},
      {"strataCommDestroy again", [&] { return strataCommDestroy(stale); }},
      {"strataCommAbort", [&] { return strataCommAbort(stale); }},
  };
  const std::string pre = how + " communicator: ";
  for (const auto& [what, call] : calls) {
    ck.expectFailure(pre + what, call, {strataInvalidArgument, strataInvalidUsage}, stale,
                     Checker::From::kCommOrThread, {"comm", "handle", "destroy", "free"});
  }
  ck.expect(out == -7, pre + "strataCommCount/UserRank wrote their output");
  ck.expect(std::all_of(recv, recv + 64, [](int32_t v) { return v == 0; }),
            pre + "a collective wrote recvbuff");
  checkStaleCalls(ck, stale, how);
}

void checkLifecycle(Checker& ck, strataComm_t comm, int nranks) {
  ck.step("creating and destroying a second communicator");
  strataComm_t doomed = nullptr;
  strataResult_t rc = strataCommInitMPI(&doomed, MPI_COMM_WORLD);
  if (ck.expect(rc == strataSuccess, "strataCommInitMPI (second) returned " + codeName(rc))) {
    expectCommWorks(ck, doomed, nranks, "creating a second communicator");
    rc = strataCommDestroy(doomed);
    ck.expect(rc == strataSuccess, "strataCommDestroy returned " + codeName(rc));
    checkStaleHandle(ck, doomed, "a destroyed");
  }

  ck.step("creating and aborting a communicator");
  strataComm_t aborted = nullptr;
  rc = strataCommInitMPI(&aborted, MPI_COMM_WORLD);
  if (ck.expect(rc == strataSuccess, "strataCommInitMPI (third) returned " + codeName(rc))) {
    rc = strataCommAbort(aborted);
    ck.expect(rc == strataSuccess, "strataCommAbort returned " + codeName(rc));
    checkStaleHandle(ck, aborted, "an aborted");
  }

  // The next communicator may take the destroyed one's memory (malloc hands the same block
  // back): a handle that was the object's address would then be accepted as live, and a stale
  // destroy would free the new communicator. Every stale call must fail and leave it working.
  ck.step("a stale handle while a new communicator lives");
  strataComm_t old = nullptr, fresh = nullptr;
  rc = strataCommInitMPI(&old, MPI_COMM_WORLD);
  if (ck.expect(rc == strataSuccess, "strataCommInitMPI (fourth) returned " + codeName(rc))) {
    ck.expect(strataCommDestroy(old) == strataSuccess, "strataCommDestroy (fourth) failed");
    rc = strataCommInitMPI(&fresh, MPI_COMM_WORLD);
    if (ck.expect(rc == strataSuccess, "strataCommInitMPI (fifth) returned " + codeName(rc))) {
      ck.expect(fresh != old, "the new communicator got the destroyed one's handle");
      checkStaleHandle(ck, old, "a destroyed (then replaced)");
      expectCommWorks(ck, fresh, nranks, "stale calls on the replaced communicator's handle");
      ck.expect(strataCommDestroy(fresh) == strataSuccess, "strataCommDestroy (fifth) failed");
    }
  }

  ck.step("strataCommDestroy(NULL)");
  rc = strataCommDestroy(nullptr);  // NCCL returns success; an argument error is fine too
  ck.expect(rc == strataSuccess || rc == strataInvalidArgument,
            "strataCommDestroy(NULL) returned " + codeName(rc));
  expectCommWorks(ck, comm, nranks, "the stale-handle calls");
}

// STRATA_TOPO_FILE names a bad file: init must fail, with the same code on every rank, leave
// *comm alone and name the file; MPI must still work, and a second attempt must fail again.
void checkInitFailure(Checker& ck, const std::string& mustName, bool print) {
  for (int attempt = 1; attempt <= 2; ++attempt) {
    const std::string what = "strataCommInitMPI attempt " + std::to_string(attempt);
    ck.step(what + " (expected to fail)");
    strataComm_t comm = reinterpret_cast<strataComm_t>(&ck);
    const strataResult_t rc = strataCommInitMPI(&comm, MPI_COMM_WORLD);
    const char* last = strataGetLastError(nullptr);
    const std::string message = last != nullptr ? last : "";
    ck.expect(rc != strataSuccess && rc != strataInternalError,
              what + " returned " + codeName(rc) + ", expected a user error");
    ck.expect(comm == reinterpret_cast<strataComm_t>(&ck), what + " wrote *comm despite failing");
    ck.expect(!message.empty(), what + ": strataGetLastError(NULL) is empty");
    if (!mustName.empty()) {
      ck.expect(message.find(mustName) != std::string::npos,
                what + ": message \"" + message + "\" does not name " + mustName);
    }
    if (print && rc != strataSuccess) std::printf("init failed as expected: %s\n", message.c_str());
    ck.step(what + ": comparing result codes across ranks (MPI_Allreduce)");
    int codes[2] = {static_cast<int>(rc), -static_cast<int>(rc)};
    MPI_Allreduce(MPI_IN_PLACE, codes, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
    ck.expect(codes[0] == -codes[1], what + ": ranks returned different codes (" +
                                         std::to_string(-codes[1]) + ".." +
                                         std::to_string(codes[0]) + ")");
    if (rc == strataSuccess) strataCommAbort(comm);
  }
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  double timeout = 120;
  bool expectInitFailure = false, groupEndWithoutStart = false, abortIsLocal = false;
  std::string mustName;
  CLI::App app{"strata API and error handling (run under mpiexec)"};
  app.add_option("--timeout", timeout, "seconds before the watchdog fails a hung run")
      ->capture_default_str();
  app.add_flag("--expect-init-failure", expectInitFailure,
               "only check that strataCommInitMPI fails cleanly (STRATA_TOPO_FILE is bad)");
  app.add_option("--message-names", mustName,
                 "text the init failure's message must contain (the bad file's name)");
  app.add_flag("--group-end-without-start", groupEndWithoutStart,
               "only check strataGroupEnd without strataGroupStart");
  app.add_flag("--abort-is-local", abortIsLocal,
               "only check that strataCommAbort on one rank returns without the others");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = rank == 0 ? app.exit(e) : e.get_exit_code();
    MPI_Finalize();
    return rc;
  }

  Watchdog watchdog;
  watchdog.start(timeout, "rank " + std::to_string(rank) + " stuck in ", "startup");
  Checker ck(rank, watchdog);
  if (expectInitFailure) {
    checkInitFailure(ck, mustName, rank == 0);
  } else if (groupEndWithoutStart) {
    checkGroupEndWithoutStart(ck);
  } else if (abortIsLocal) {
    checkAbortIsLocal(ck, rank, size);
  } else {
    checkStatics(ck);
    checkInitArguments(ck);
    ck.step("strataCommInitMPI(MPI_COMM_WORLD)");
    strataComm_t comm = nullptr;
    const strataResult_t rc = strataCommInitMPI(&comm, MPI_COMM_WORLD);
    if (ck.expect(rc == strataSuccess, "strataCommInitMPI returned " + codeName(rc) + ": " +
                                           strataGetLastError(nullptr))) {
      checkQueries(ck, comm);
      expectCommWorks(ck, comm, size, "init");
      checkArgumentErrors(ck, comm, size);
      checkCallErrors(ck, comm, size);
      checkLifecycle(ck, comm, size);
      ck.step("strataCommDestroy");
      const strataResult_t drc = strataCommDestroy(comm);
      ck.expect(drc == strataSuccess, "strataCommDestroy returned " + codeName(drc));
    }
  }

  ck.step("collecting the results");
  int totals[2] = {ck.checks(), ck.failures()};
  MPI_Allreduce(MPI_IN_PLACE, totals, 2, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    std::printf("%d passed, %d failed (checks summed over %d ranks)\n", totals[0] - totals[1],
                totals[1], size);
    std::fflush(stdout);
  }
  ck.step("MPI_Finalize");
  MPI_Finalize();
  return totals[1] == 0 ? 0 : 1;
}
