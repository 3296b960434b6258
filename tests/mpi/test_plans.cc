// Every candidate plan the planner could choose, run under mpiexec and checked against an exact
// local reference: a plan that is chosen must never be wrong. Internal test: it links
// strata_core to force each plan (core::allReduceWithPlan).
//
//   strata_mpi_plans [--timeout S]
//   STRATA_TIMEOUT=2 strata_mpi_plans --stall   a forced plan is bounded as every call is: the
//       last rank sleeps 2 * STRATA_TIMEOUT + 1 s in user code before the allreduce; the others
//       fail within STRATA_TIMEOUT with strataRemoteError and the communicator stays failed.
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "api/handle.h"
#include "common/watchdog.h"
#include "core/calls.h"
#include "decompose/planner.h"
#include "strata/strata_mpi.h"

namespace {

// Inputs whose sums, maxima and averages are exact in every type used here.
int64_t inputOf(int rank, size_t i) { return static_cast<int64_t>((rank * 7 + i * 3) % 11); }

template <typename T>
int checkPlan(strataComm_t comm, const strata::plan::Plan& plan, strataDataType_t type,
              strataRedOp_t op, size_t count, bool inPlace, int rank, int size) {
  std::vector<T> send(count), recv(count + 4, static_cast<T>(-99));
  for (size_t i = 0; i < count; ++i) send[i] = static_cast<T>(inputOf(rank, i));
  if (inPlace) std::copy(send.begin(), send.end(), recv.begin());
  const void* src = inPlace ? static_cast<const void*>(recv.data()) : send.data();
  strata::core::Comm& impl = *strata::api::lookupComm(comm)->impl;
  strata::Status st =
      strata::core::allReduceWithPlan(impl, plan, src, recv.data(), count, type, op);
  if (!st.isOk()) {
    std::fprintf(stderr, "FAIL rank %d: %s: %s\n", rank, plan.name.c_str(), st.message().c_str());
    return 1;
  }
  for (size_t i = 0; i < count; ++i) {
    int64_t expect = op == strataMax ? INT64_MIN : 0;
    for (int r = 0; r < size; ++r) {
      expect = op == strataMax ? std::max(expect, inputOf(r, i)) : expect + inputOf(r, i);
    }
    if (op == strataAvg) expect /= size;  // exact for integer types (truncation as NCCL)
    if (static_cast<int64_t>(recv[i]) != expect) {
      std::fprintf(stderr,
                   "FAIL rank %d: plan %s (%s) type %d op %d count %zu %s: element %zu got %lld "
                   "expected %lld\n",
                   rank, plan.name.c_str(),
                   strata::plan::describePlan(impl.hierarchy(), plan).c_str(), type, op,
                   count, inPlace ? "in-place" : "out-of-place", i, static_cast<long long>(recv[i]),
                   static_cast<long long>(expect));
      return 1;
    }
  }
  for (size_t i = count; i < count + 4; ++i) {
    if (recv[i] != static_cast<T>(-99)) {
      std::fprintf(stderr, "FAIL rank %d: plan %s wrote past the end\n", rank, plan.name.c_str());
      return 1;
    }
  }
  return 0;
}

// The --stall mode (see the top); returns the failures on this rank.
int stalledPlan(strataComm_t comm, const strata::plan::Plan& plan, int rank, int size) {
  const char* env = std::getenv("STRATA_TIMEOUT");
  const double T = env != nullptr ? std::atof(env) : 0;
  if (T <= 0 || T > 30) {
    std::fprintf(stderr, "FAIL rank %d: --stall needs STRATA_TIMEOUT between 0 and 30 s\n", rank);
    return 1;
  }
  using Clock = std::chrono::steady_clock;
  const bool sleeper = rank == size - 1;
  if (sleeper) std::this_thread::sleep_for(std::chrono::duration<double>(2 * T + 1));
  // A failed call's buffers stay allocated until MPI_Finalize (docs/errors.md, "The error state"):
  // the sleeper's late sends still reach the requests its peers abandoned.
  static std::vector<float> buf(1 << 16, 1.0f);
  strata::core::Comm& impl = *strata::api::lookupComm(comm)->impl;
  const auto t0 = Clock::now();
  const strata::Status st = strata::core::allReduceWithPlan(
      impl, plan, buf.data(), buf.data(), buf.size(), strataFloat32, strataSum);
  const double t = std::chrono::duration<double>(Clock::now() - t0).count();
  int failures = 0;
  auto expect = [&](bool ok, const std::string& what) {
    if (!ok) std::fprintf(stderr, "FAIL rank %d: %s\n", rank, what.c_str());
    failures += ok ? 0 : 1;
  };
  expect(!st.isOk(), "the allreduce under plan " + plan.name + " succeeded with a peer asleep");
  if (!sleeper) {
    expect(st.code() == strata::Code::kRemoteError,
           "expected strataRemoteError, got: " + st.message());
    expect(st.message().find("timed out after") != std::string::npos,
           "the error does not say it timed out: " + st.message());
    expect(t >= 0.9 * T && t <= T + 3.0, "returned after " + std::to_string(t) + " s, expected " +
                                             "STRATA_TIMEOUT (" + std::to_string(T) + " s)");
    // The error state: the next call fails at once with the same error.
    const auto t1 = Clock::now();
    const strata::Status again = strata::core::allReduceWithPlan(
        impl, plan, buf.data(), buf.data(), buf.size(), strataFloat32, strataSum);
    const double t2 = std::chrono::duration<double>(Clock::now() - t1).count();
    expect(again.code() == st.code() && again.message() == st.message() && t2 < 0.5,
           "the next call did not fail fast with the same error: " + again.message());
    if (rank == 0) std::printf("rank 0: %s\n", st.message().c_str());
  }
  return failures;
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  CLI::App app{"runs every candidate allreduce plan and checks it"};
  int timeout = 120;
  app.add_option("--timeout", timeout, "seconds before the watchdog fails the run");
  bool stall = false;
  app.add_flag("--stall", stall, "the last rank sleeps before a forced-plan allreduce");
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = app.exit(e);
    MPI_Finalize();
    return rc;
  }
  strata::test::Watchdog watchdog;
  watchdog.start(timeout, "strata_mpi_plans stuck after " + std::to_string(timeout) + " s");
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  strataComm_t comm = nullptr;
  if (strataCommInitMPI(&comm, MPI_COMM_WORLD) != strataSuccess) {
    std::fprintf(stderr, "FAIL rank %d: init: %s\n", rank, strataGetLastError(nullptr));
    std::_Exit(1);
  }
  const strata::core::Comm& impl = *strata::api::lookupComm(comm)->impl;
  const std::vector<strata::plan::Plan> plans =
      strata::plan::candidatePlans(impl.hierarchy(), impl.costParams());
  if (stall) {
    int failures = plans.empty() ? 1 : stalledPlan(comm, plans.front(), rank, size);
    strataCommAbort(comm);  // local: the peers left the call at different points
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) std::printf("--stall: %s\n", total == 0 ? "passed" : "FAILED");
    watchdog.stop();
    MPI_Finalize();
    return total == 0 ? 0 : 1;
  }
  int failures = 0, cases = 0;
  const size_t counts[] = {0, 1, 2, 7, static_cast<size_t>(size) + 1, 1021, 65537};
  for (const auto& plan : plans) {
    for (size_t count : counts) {
      for (bool inPlace : {false, true}) {
        failures +=
            checkPlan<float>(comm, plan, strataFloat32, strataSum, count, inPlace, rank, size);
        failures +=
            checkPlan<int32_t>(comm, plan, strataInt32, strataAvg, count, inPlace, rank, size);
        failures +=
            checkPlan<int64_t>(comm, plan, strataInt64, strataMax, count, inPlace, rank, size);
        cases += 3;
      }
    }
  }
  int total = 0;
  MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) {
    std::printf("%zu plans on %s\n", plans.size(), impl.hierarchy().describe().c_str());
    std::printf("%d passed, %d failed\n", std::max(0, cases - total), total);
  }
  strataCommDestroy(comm);
  watchdog.stop();
  MPI_Finalize();
  return total == 0 ? 0 : 1;
}
