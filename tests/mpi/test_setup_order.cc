// Ranks that wait for their nonblocking calls at different points must not deadlock when a
// later call needs a collective setup (a new stage group). Without a progress thread, queued
// calls run only when waited for: rank 0 waits for its first allreduce at once, while the
// others issue a second, larger one first, whose plan needs a group nobody made yet. Making
// that group is collective; if it ran before the queued first call, rank 0 would sit in the
// first allreduce waiting for peers that sit in the group's setup waiting for rank 0.
//
//   STRATA_TOPO_FILE=configs/topologies/2x2.yaml
//   STRATA_PLAN_FILE=tests/data/plans/new_group_for_large.yaml
//   mpiexec -n 4 strata_mpi_setup_order [--threads] [--timeout S]
#include <mpi.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "common/watchdog.h"
#include "strata/strata_mpi.h"

namespace {

bool checkSum(const std::vector<float>& v, int nranks, const char* what, int rank) {
  const float want = static_cast<float>(nranks * (nranks + 1) / 2);
  for (size_t i = 0; i < v.size(); ++i) {
    if (v[i] != want) {
      std::fprintf(stderr, "FAIL rank %d: %s: element %zu is %g, expected %g\n", rank, what, i,
                   v[i], want);
      return false;
    }
  }
  return true;
}

}  // namespace

int main(int argc, char** argv) {
  bool threads = false;
  double timeout = 60;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--threads") == 0) threads = true;
    if (std::strcmp(argv[i], "--timeout") == 0 && i + 1 < argc) timeout = std::atof(argv[++i]);
  }
  int provided = 0;
  if (threads) {
    MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  } else {
    MPI_Init(&argc, &argv);
  }
  int rank = 0, nranks = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &nranks);
  strata::test::Watchdog watchdog;
  watchdog.start(timeout, "rank " + std::to_string(rank) + " stuck in ", "init");
  strataComm_t comm = nullptr;
  if (strataCommInitMPI(&comm, MPI_COMM_WORLD) != strataSuccess) {
    std::fprintf(stderr, "FAIL rank %d: init: %s\n", rank, strataGetLastError(nullptr));
    MPI_Abort(MPI_COMM_WORLD, 1);
  }
  bool ok = true;
  for (int round = 0; round < 3; ++round) {
    // Each round a size never used before, so every round's large call needs setup (round 0:
    // the flat-ring group; later rounds: new size buckets of the same plan, no new group).
    std::vector<float> small(16, static_cast<float>(rank + 1));
    std::vector<float> large((size_t{1} << 16) << round, static_cast<float>(rank + 1));
    strataRequest_t a = nullptr, b = nullptr;
    watchdog.setStep("round " + std::to_string(round) + ": small");
    strataResult_t rc = strataIAllReduce(small.data(), small.data(), small.size(), strataFloat32,
                                         strataSum, comm, &a);
    if (rank == 0 && rc == strataSuccess) rc = strataWait(&a);  // rank 0 waits at once
    watchdog.setStep("round " + std::to_string(round) + ": large");
    if (rc == strataSuccess) {
      rc = strataIAllReduce(large.data(), large.data(), large.size(), strataFloat32, strataSum,
                            comm, &b);
    }
    if (rc == strataSuccess && a != nullptr) rc = strataWait(&a);  // the others wait here
    if (rc == strataSuccess) rc = strataWait(&b);
    if (rc != strataSuccess) {
      std::fprintf(stderr, "FAIL rank %d: round %d: %s: %s\n", rank, round,
                   strataGetErrorString(rc), strataGetLastError(nullptr));
      ok = false;
      break;
    }
    ok = checkSum(small, nranks, "small allreduce", rank) && ok;
    ok = checkSum(large, nranks, "large allreduce", rank) && ok;
  }
  watchdog.setStep("strataCommDestroy");
  strataCommDestroy(comm);
  int all = ok ? 1 : 0, every = 0;
  MPI_Allreduce(&all, &every, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (rank == 0)
    std::printf("%s (%d ranks%s)\n", every ? "PASSED" : "FAILED", nranks,
                threads ? ", progress thread" : "");
  watchdog.stop();
  MPI_Finalize();
  return every ? 0 : 1;
}
