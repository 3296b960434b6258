// Every candidate plan the planner could choose, run under mpiexec and checked against an exact
// local reference: a plan that is chosen must never be wrong. Internal test: it links
// strata_core to force each plan (core::allReduceWithPlan).
//
//   strata_mpi_plans [--timeout S]
//   STRATA_TIMEOUT=2 strata_mpi_plans --stall   a forced plan is bounded as every call is: the
//       last rank sleeps 2 * STRATA_TIMEOUT + 1 s in user code before the allreduce; the others
//       fail within STRATA_TIMEOUT with strataRemoteError and the communicator stays failed.
//   STRATA_PLAN_FILE=tests/data/plans/pinned_blocks_2x2x2.yaml strata_mpi_plans --pinned-blocks
//       reduce-scatters and all-gathers on both sides of the file's 64 KiB boundary run in the
//       form it pins (seen in the flight recorder's steps: the flat group, or every level) and
//       equal an exact reference and MPI's own.
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
#include "core/comm.h"
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
                   strata::plan::describePlan(impl.hierarchy(), plan).c_str(), type, op, count,
                   inPlace ? "in-place" : "out-of-place", i, static_cast<long long>(recv[i]),
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
  const strata::Status st = strata::core::allReduceWithPlan(impl, plan, buf.data(), buf.data(),
                                                            buf.size(), strataFloat32, strataSum);
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

// --pinned-blocks: the forms tests/data/plans/pinned_blocks_2x2x2.yaml pins, written here again
// so that the test does not take them from the code under test: reduce-scatter flat below 64 KiB
// in all and hierarchical from there, all-gather the other way round.
bool pinnedHierarchical(strata::Collective coll, size_t bytes) {
  const bool large = bytes >= (size_t{64} << 10);
  return coll == strata::Collective::kReduceScatter ? large : !large;
}

// The form the last call of `coll` ran in, from its flight record: the flat form runs one step
// on the flat group (or, straight between the user's buffers, a fabric call without steps); the
// hierarchical one a step per level, ending at the top level (reduce-scatter) or level 0
// (all-gather).
std::string formRun(const strata::core::Comm& impl, strata::Collective coll) {
  const std::vector<strata::core::FlightRecord> records = impl.flightRecorder().snapshot();
  for (auto it = records.rbegin(); it != records.rend(); ++it) {
    if (it->coll != coll) continue;
    if (it->steps == 0 || it->stepLevel == strata::plan::kFlatLevel) return "flat";
    const int levels = impl.hierarchy().numLevels();
    const int last = coll == strata::Collective::kReduceScatter ? levels - 1 : 0;
    if (it->steps == levels && it->stepLevel == last) return "hierarchical";
    return "steps " + std::to_string(it->steps) + ", last at level " +
           std::to_string(it->stepLevel);
  }
  return "no flight record (STRATA_FLIGHT_RECORDER_SIZE=0?)";
}

// One reduce-scatter (int32 sum, out of place or in place) or all-gather of `count` elements a
// block; returns the failures on this rank.
int checkPinned(strataComm_t comm, strata::Collective coll, size_t count, bool inPlace, int rank,
                int size) {
  strata::core::Comm& impl = *strata::api::lookupComm(comm)->impl;
  const bool rs = coll == strata::Collective::kReduceScatter;
  const size_t total = count * static_cast<size_t>(size);
  std::vector<int32_t> send(rs ? total : count), recv(rs ? count : total, -99);
  for (size_t i = 0; i < send.size(); ++i) send[i] = static_cast<int32_t>(inputOf(rank, i));
  std::vector<int32_t> mpi(recv.size(), -98);
  std::vector<int32_t> work = rs ? send : recv;  // in place: the whole vector in one buffer
  if (!rs) std::copy(send.begin(), send.end(), work.begin() + rank * count);
  int32_t* out = rs ? (inPlace ? work.data() + rank * count : recv.data())
                    : (inPlace ? work.data() : recv.data());
  const int32_t* in = rs ? (inPlace ? work.data() : send.data())
                         : (inPlace ? work.data() + rank * count : send.data());
  const strataResult_t r =
      rs ? strataReduceScatter(in, out, count, strataInt32, strataSum, comm, nullptr)
         : strataAllGather(in, out, count, strataInt32, comm, nullptr);
  const char* name = rs ? "reduce-scatter" : "all-gather";
  const size_t bytes = total * sizeof(int32_t);
  const std::string what = std::string(name) + " of " + std::to_string(count) + " a block (" +
                           std::to_string(bytes) + " bytes in all" +
                           (inPlace ? ", in place)" : ")");
  if (r != strataSuccess) {
    std::fprintf(stderr, "FAIL rank %d: %s: %s\n", rank, what.c_str(), strataGetLastError(nullptr));
    return 1;
  }
  if (rs) {
    MPI_Reduce_scatter_block(send.data(), mpi.data(), static_cast<int>(count), MPI_INT32_T, MPI_SUM,
                             MPI_COMM_WORLD);
  } else {
    MPI_Allgather(send.data(), static_cast<int>(count), MPI_INT32_T, mpi.data(),
                  static_cast<int>(count), MPI_INT32_T, MPI_COMM_WORLD);
  }
  int failures = 0;
  const std::string expectForm = pinnedHierarchical(coll, bytes) ? "hierarchical" : "flat";
  const std::string ran = formRun(impl, coll);
  if (ran != expectForm) {
    std::fprintf(stderr, "FAIL rank %d: %s ran %s, the plan file pins %s\n", rank, what.c_str(),
                 ran.c_str(), expectForm.c_str());
    ++failures;
  }
  for (size_t i = 0; i < mpi.size(); ++i) {
    int64_t expect = 0;
    if (rs) {
      for (int q = 0; q < size; ++q) expect += inputOf(q, static_cast<size_t>(rank) * count + i);
    } else {
      expect = inputOf(static_cast<int>(i / count), i % count);
    }
    const int32_t got = out[i];
    if (got != expect || mpi[i] != expect) {
      std::fprintf(stderr, "FAIL rank %d: %s: element %zu got %d, MPI %d, expected %lld\n", rank,
                   what.c_str(), i, got, mpi[i], static_cast<long long>(expect));
      return failures + 1;
    }
  }
  return failures;
}

// The --pinned-blocks mode (see the top); returns the failures on this rank and counts cases.
int pinnedBlocks(strataComm_t comm, int rank, int size, int* cases) {
  const strata::core::Comm& impl = *strata::api::lookupComm(comm)->impl;
  if (impl.plans().blockRules().empty()) {
    std::fprintf(stderr, "FAIL rank %d: STRATA_PLAN_FILE pins no form (%s)\n", rank,
                 impl.plans().source().c_str());
    return 1;
  }
  int failures = 0, differs = 0;
  // 4 bytes an element on 8 ranks: 32 bytes in all a count; 2047 is the last below 64 KiB.
  for (size_t count : {size_t{1}, size_t{100}, size_t{2047}, size_t{2048}, size_t{5000}}) {
    for (strata::Collective coll :
         {strata::Collective::kReduceScatter, strata::Collective::kAllGather}) {
      const size_t bytes = count * static_cast<size_t>(size) * sizeof(int32_t);
      const strata::plan::BlockForm chosen = strata::plan::chooseBlocks(
          impl.hierarchy(), coll, strata::plan::bucketBytes(strata::plan::sizeBucket(bytes)),
          impl.costParams());
      differs +=
          (chosen == strata::plan::BlockForm::kHierarchical) != pinnedHierarchical(coll, bytes);
      for (bool inPlace : {false, true}) {
        failures += checkPinned(comm, coll, count, inPlace, rank, size);
        ++*cases;
      }
    }
  }
  // Pins that only repeat the cost model's choice would prove nothing about pinning.
  if (differs == 0) {
    std::fprintf(stderr, "FAIL rank %d: the cost model chooses every pinned form itself\n", rank);
    ++failures;
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
  bool pinned = false;
  app.add_flag("--pinned-blocks", pinned,
               "reduce-scatters and all-gathers run in the forms STRATA_PLAN_FILE pins "
               "(tests/data/plans/pinned_blocks_2x2x2.yaml)");
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
  if (pinned) {
    failures = pinnedBlocks(comm, rank, size, &cases);
    int total = 0;
    MPI_Allreduce(&failures, &total, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    if (rank == 0) std::printf("--pinned-blocks: %d cases, %d failed\n", cases, total);
    strataCommDestroy(comm);
    watchdog.stop();
    MPI_Finalize();
    return total == 0 ? 0 : 1;
  }
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
