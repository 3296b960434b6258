// strataCommRevoke, strataCommShrink and strataCommGetLostRanks with every rank alive, under
// mpiexec (tests/recovery kills ranks, without MPI): argument errors that change nothing, a
// revoked communicator that refuses calls but still splits and shrinks, and a shrink that
// leaves out the last rank, which does not call it (it aborts its communicator instead), on
// communicators from MPI and, with --uid, from a unique id, where an excluded rank that calls
// anyway is refused.
#include <mpi.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "mpi/mpi_harness.h"
#include "strata/strata.h"

using namespace strata_test;

namespace {

// Every rank's `rank + i` summed, checked element by element.
void checkSum(Verdict& v, strataComm_t comm, const std::string& what) {
  int rank = -1, size = 0;
  strataCommUserRank(comm, &rank);
  strataCommCount(comm, &size);
  std::vector<int32_t> x(1031);
  for (size_t i = 0; i < x.size(); ++i) x[i] = rank + static_cast<int32_t>(i);
  const strataResult_t rc =
      strataAllReduce(x.data(), x.data(), x.size(), strataInt32, strataSum, comm, nullptr);
  if (rc != strataSuccess) {
    v.fail(what + ": allreduce returned " + std::to_string(rc) + ": " + strataGetLastError(comm));
    return;
  }
  for (size_t i = 0; i < x.size(); ++i) {
    const int64_t want = int64_t{size} * (size - 1) / 2 + int64_t{size} * static_cast<int64_t>(i);
    if (x[i] != want) {
      v.fail(what + ": element " + std::to_string(i) + " is " + std::to_string(x[i]) +
             ", expected " + std::to_string(want));
      return;
    }
  }
}

void checkArgumentErrors(Harness& h, strataComm_t comm, int n) {
  const std::string what = "argument errors of revoke, shrink and getLostRanks";
  h.step(what);
  Verdict v = h.verdict(what);
  const strataComm_t sentinel = reinterpret_cast<strataComm_t>(uintptr_t{0xc0ffee});
  strataComm_t out = sentinel;
  int outside = n, negative = -1, count = -5;
  strataConfig_t zero{};
  const std::vector<std::pair<std::string, std::function<strataResult_t()>>> bad = {
      {"revoke with flags 1", [&] { return strataCommRevoke(comm, 1); }},
      {"revoke of NULL", [&] { return strataCommRevoke(nullptr, 0); }},
      {"shrink with flags 2", [&] { return strataCommShrink(comm, nullptr, 0, &out, nullptr, 2); }},
      {"shrink with a negative count",
       [&] { return strataCommShrink(comm, nullptr, -1, &out, nullptr, 0); }},
      {"shrink with a NULL list of 1",
       [&] { return strataCommShrink(comm, nullptr, 1, &out, nullptr, 0); }},
      {"shrink excluding rank n",
       [&] { return strataCommShrink(comm, &outside, 1, &out, nullptr, 0); }},
      {"shrink excluding rank -1",
       [&] { return strataCommShrink(comm, &negative, 1, &out, nullptr, 0); }},
      {"shrink with newcomm NULL",
       [&] { return strataCommShrink(comm, nullptr, 0, nullptr, nullptr, 0); }},
      {"shrink with a zeroed config",
       [&] { return strataCommShrink(comm, nullptr, 0, &out, &zero, 0); }},
      {"getLostRanks with count NULL",
       [&] { return strataCommGetLostRanks(comm, nullptr, 0, nullptr); }},
      {"getLostRanks with capacity -1",
       [&] { return strataCommGetLostRanks(comm, nullptr, -1, &count); }},
      {"getLostRanks with ranks NULL",
       [&] { return strataCommGetLostRanks(comm, nullptr, 2, &count); }},
  };
  for (const auto& [name, call] : bad) {
    const strataResult_t rc = call();
    if (rc != strataInvalidArgument) v.fail(name + " returned " + std::to_string(rc));
    if (out != sentinel) v.fail(name + " wrote *newcomm");
  }
  if (count != -5) v.fail("a failed getLostRanks wrote *count");
  // Nothing changed: no rank lost, not revoked.
  if (strataCommGetLostRanks(comm, nullptr, 0, &count) != strataSuccess || count != 0) {
    v.fail("getLostRanks on a healthy communicator: count " + std::to_string(count));
  }
  checkSum(v, comm, "after the argument errors");
  h.record(v);
}

// Revoked: calls refused with strataInvalidUsage, strataCommGetAsyncError quiescent, and split
// and shrink still work (every rank alive).
void checkRevoke(Harness& h, strataComm_t world) {
  const std::string what = "a revoked communicator";
  h.step(what);
  Verdict v = h.verdict(what);
  strataComm_t c = nullptr;
  if (strataCommSplit(world, 0, h.rank(), &c, nullptr) != strataSuccess) {
    v.fail(std::string("split for the revoke: ") + strataGetLastError(world));
    h.record(v);
    return;
  }
  checkSum(v, c, "before the revoke");
  if (strataCommRevoke(c, STRATA_REVOKE_DEFAULT) != strataSuccess) v.fail("revoke failed");
  if (strataCommRevoke(c, STRATA_REVOKE_DEFAULT) != strataSuccess) v.fail("a second revoke failed");
  int32_t x = 1;
  const strataResult_t after = strataAllReduce(&x, &x, 1, strataInt32, strataSum, c, nullptr);
  if (after != strataInvalidUsage) {
    v.fail("an allreduce on the revoked communicator returned " + std::to_string(after));
  } else if (std::string(strataGetLastError(c)).find("revoked") == std::string::npos) {
    v.fail(std::string("the refusal does not say revoked: ") + strataGetLastError(c));
  }
  strataResult_t state = strataInternalError;
  if (strataCommGetAsyncError(c, &state) != strataSuccess || state != strataSuccess) {
    v.fail("strataCommGetAsyncError of an idle revoked communicator: " + std::to_string(state));
  }
  strataComm_t split = nullptr, shrunk = nullptr;
  if (strataCommSplit(c, 0, 0, &split, nullptr) != strataSuccess || split == nullptr) {
    v.fail(std::string("split of a revoked communicator: ") + strataGetLastError(c));
  } else {
    checkSum(v, split, "a split of a revoked communicator");
    strataCommDestroy(split);
  }
  if (strataCommShrink(c, nullptr, 0, &shrunk, nullptr, STRATA_SHRINK_DEFAULT) != strataSuccess ||
      shrunk == nullptr) {
    v.fail(std::string("shrink of a revoked communicator, excluding nobody: ") +
           strataGetLastError(c));
  } else {
    int size = 0;
    strataCommCount(shrunk, &size);
    if (size != h.size()) v.fail("the shrink excluding nobody has " + std::to_string(size));
    checkSum(v, shrunk, "a shrink excluding nobody");
    strataCommDestroy(shrunk);
  }
  if (strataCommDestroy(c) != strataSuccess) v.fail("destroy of the revoked communicator");
  h.record(v);
}

// The last rank stays out: it does not call (on a communicator from a unique id it calls, and
// is refused), then aborts its communicator; the others shrink, in order, and compute.
void checkShrinkOut(Harness& h, strataComm_t world) {
  const std::string what = "a shrink that leaves out the last rank";
  h.step(what);
  Verdict v = h.verdict(what);
  const int n = h.size(), last = n - 1;
  strataComm_t c = nullptr;
  if (strataCommSplit(world, 0, h.rank(), &c, nullptr) != strataSuccess) {
    v.fail(std::string("split for the shrink: ") + strataGetLastError(world));
    h.record(v);
    return;
  }
  if (h.rank() == last) {
    if (uidInit()) {
      strataComm_t none = reinterpret_cast<strataComm_t>(uintptr_t{0xc0ffee});
      const strataResult_t rc =
          strataCommShrink(c, nullptr, 0, &none, nullptr, STRATA_SHRINK_DEFAULT);
      if (rc != strataInvalidUsage) {
        v.fail("the excluded rank's own shrink returned " + std::to_string(rc));
      } else if (std::string(strataGetLastError(c)).find("excludes this rank") ==
                 std::string::npos) {
        v.fail(std::string("the refusal does not say why: ") + strataGetLastError(c));
      }
    }
    strataCommAbort(c);
  } else {
    strataComm_t shrunk = nullptr;
    int excluded = last;
    const strataResult_t rc =
        strataCommShrink(c, &excluded, 1, &shrunk, nullptr, STRATA_SHRINK_DEFAULT);
    if (rc != strataSuccess || shrunk == nullptr) {
      v.fail("strataCommShrink excluding rank " + std::to_string(last) + ": " +
             strataGetLastError(c));
    } else {
      int rank = -1, size = 0;
      strataCommUserRank(shrunk, &rank);
      strataCommCount(shrunk, &size);
      if (rank != h.rank() || size != n - 1) {
        v.fail("the shrunk communicator: rank " + std::to_string(rank) + " of " +
               std::to_string(size));
      }
      for (int i = 0; i < 3; ++i) checkSum(v, shrunk, "the shrunk communicator");
      strataCommDestroy(shrunk);
    }
    // Replaced by the shrink: its teardown is local (the last rank aborted its own).
    if (strataCommDestroy(c) != strataSuccess) v.fail("destroy of the shrunk-from communicator");
  }
  h.record(v);
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(argc, argv, "strataCommRevoke and strataCommShrink, every rank alive (mpiexec)");
  if (!h.start(argc, argv)) return h.exitCode();
  h.step(uidInit() ? "strataCommInitRank" : "strataCommInitMPI(MPI_COMM_WORLD)");
  strataComm_t world = nullptr;
  if (!h.expectSuccess(initComm(&world, MPI_COMM_WORLD), "init")) return h.finish();
  checkArgumentErrors(h, world, h.size());
  checkRevoke(h, world);
  if (h.size() > 1) checkShrinkOut(h, world);
  h.step("strataCommDestroy(world)");
  h.expectSuccess(strataCommDestroy(world), "strataCommDestroy(world)");
  return h.finish();
}
