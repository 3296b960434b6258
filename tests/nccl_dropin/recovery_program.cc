// Recovery from a lost rank, written against NCCL 2.28's own header and API as a user's program
// would be (no strata names): run under LD_PRELOAD=libstrata_nccl.so, launched without MPI by
// tools/strata-run --survive-loss, the id passed through a file.
//
//   recovery_program --id-file PATH [--victim R] [--kill-at I] [--mixed-lists] [--max-detect S]
//
// Every rank loops over allreduces of integer-valued data. At iteration I (default 20) the
// victim (default rank 1) starts a thread that kills its own process (raise(SIGKILL)) a few
// milliseconds later, in the middle of its next allreduces, after writing the time of the kill
// (CLOCK_MONOTONIC, shared by the processes of one machine) to PATH.killed. The survivors must:
//   - get an error from a call, ncclRemoteError naming the victim, within S seconds (default 1)
//     of the kill;
//   - ncclCommRevoke the communicator, then see ncclCommGetAsyncError go from ncclInProgress to
//     ncclSuccess, a collective on it refused (ncclInvalidUsage) and ncclCommFinalize refused;
//   - ncclCommShrink it without the victim (NCCL_SHRINK_ABORT; with --mixed-lists the odd ranks
//     pass an empty list, leaving it to strata's agreement), and find the ranks renumbered in
//     order;
//   - run allreduces, an all-gather, a reduce-scatter and a broadcast on the new communicator,
//     each result exact;
//   - destroy both communicators and exit 0.
// A watchdog (alarm) turns a hang into a failure. Each survivor prints "detected after X ms".
#include <nccl.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

#include "id_file.h"

namespace {

int gRank = 0, gSize = 1, gFailures = 0, gChecks = 0;

void check(bool ok, const std::string& what) {
  ++gChecks;
  if (!ok && gFailures++ < 20) std::printf("FAIL rank %d: %s\n", gRank, what.c_str());
  std::fflush(stdout);
}

#define NCCL_OR_DIE(call)                                                                      \
  do {                                                                                         \
    ncclResult_t rc_ = (call);                                                                 \
    if (rc_ != ncclSuccess) {                                                                  \
      std::printf("FAIL rank %d: %s failed: %s (%s)\n", gRank, #call, ncclGetErrorString(rc_), \
                  ncclGetLastError(nullptr));                                                  \
      std::exit(1);                                                                            \
    }                                                                                          \
  } while (0)

double monotonicSeconds() {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return double(ts.tv_sec) + double(ts.tv_nsec) * 1e-9;
}

int envInt(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) {
    std::printf("recovery_program: %s is not set (launch with tools/strata-run)\n", name);
    std::exit(2);
  }
  return std::atoi(v);
}

void passThroughFile(const std::string& path, ncclUniqueId* id) {
  if (gRank == 0) unlink((path + ".killed").c_str());  // an earlier run's stamp: before any kill
  const std::string failed = passIdThroughFile(path, gRank, id);
  if (failed.empty()) return;
  std::printf("%s\n", failed.c_str());
  std::exit(1);
}

// The victim's kill: the time first (for the survivors' measure), then the signal.
void killSoon(const std::string& stampPath) {
  std::thread([stampPath] {
    std::this_thread::sleep_for(std::chrono::milliseconds(3));
    const std::string tmp = stampPath + ".tmp";
    if (FILE* f = std::fopen(tmp.c_str(), "w")) {
      std::fprintf(f, "%.9f\n", monotonicSeconds());
      std::fclose(f);
      std::rename(tmp.c_str(), stampPath.c_str());
    }
    std::raise(SIGKILL);
  }).detach();
}

// When the victim died, read from its stamp (it may still be on its way: wait a little).
double killTime(const std::string& stampPath) {
  for (int tries = 0; tries < 500; ++tries) {
    if (FILE* f = std::fopen(stampPath.c_str(), "r")) {
      double t = 0;
      const int got = std::fscanf(f, "%lf", &t);
      std::fclose(f);
      if (got == 1) return t;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  return -1;
}

// One allreduce of `n` int64 elements: rank r contributes (r + 1) * (i % 97 + iter).
ncclResult_t allReduceStep(ncclComm_t comm, int rank, int size, int iter, size_t n) {
  std::vector<int64_t> buf(n);
  for (size_t i = 0; i < n; ++i) buf[i] = int64_t(rank + 1) * int64_t(i % 97 + iter);
  const ncclResult_t rc =
      ncclAllReduce(buf.data(), buf.data(), n, ncclInt64, ncclSum, comm, nullptr);
  if (rc != ncclSuccess) return rc;
  const int64_t factor = int64_t(size) * (size + 1) / 2;
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) bad += buf[i] != factor * int64_t(i % 97 + iter);
  check(bad == 0, "allreduce iteration " + std::to_string(iter) + " of " + std::to_string(size) +
                      " ranks: " + std::to_string(bad) + " wrong");
  return ncclSuccess;
}

// The new communicator's collectives, each result exact.
void collectives(ncclComm_t comm, int rank, int size, const std::vector<int>& survivors) {
  for (int iter = 0; iter < 10; ++iter) {
    NCCL_OR_DIE(allReduceStep(comm, rank, size, iter, 65536 + iter));
  }
  const size_t n = 1021;
  // All-gather of the old rank numbers: the survivors, in order.
  std::vector<int32_t> mine(n, survivors[rank]), all(n * size, -1);
  NCCL_OR_DIE(ncclAllGather(mine.data(), all.data(), n, ncclInt32, comm, nullptr));
  size_t bad = 0;
  for (size_t k = 0; k < all.size(); ++k) bad += all[k] != survivors[k / n];
  check(bad == 0,
        "allgather of old ranks on the shrunk communicator: " + std::to_string(bad) + " wrong");
  // Reduce-scatter: block r of the sum lands on rank r.
  std::vector<int32_t> rsIn(n * size), rsOut(n, -1);
  for (size_t i = 0; i < rsIn.size(); ++i) rsIn[i] = int32_t(rank + i);
  NCCL_OR_DIE(ncclReduceScatter(rsIn.data(), rsOut.data(), n, ncclInt32, ncclSum, comm, nullptr));
  bad = 0;
  for (size_t i = 0; i < n; ++i) {
    bad += rsOut[i] != int32_t(size * (rank * n + i) + size * (size - 1) / 2);
  }
  check(bad == 0, "reducescatter on the shrunk communicator: " + std::to_string(bad) + " wrong");
  // Broadcast from the last rank.
  std::vector<float> b(n, rank == size - 1 ? 7.0f : -1.0f);
  NCCL_OR_DIE(ncclBroadcast(b.data(), b.data(), n, ncclFloat32, size - 1, comm, nullptr));
  bad = 0;
  for (float v : b) bad += v != 7.0f;
  check(bad == 0, "broadcast on the shrunk communicator: " + std::to_string(bad) + " wrong");
}

}  // namespace

int main(int argc, char** argv) {
  std::string idFile;
  int victim = 1, killAt = 20;
  bool mixedLists = false;
  double maxDetect = 1.0;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--id-file" && i + 1 < argc) {
      idFile = argv[++i];
    } else if (a == "--victim" && i + 1 < argc) {
      victim = std::atoi(argv[++i]);
    } else if (a == "--kill-at" && i + 1 < argc) {
      killAt = std::atoi(argv[++i]);
    } else if (a == "--mixed-lists") {
      mixedLists = true;
    } else if (a == "--max-detect" && i + 1 < argc) {
      maxDetect = std::atof(argv[++i]);
    } else {
      idFile.clear();
      break;
    }
  }
  if (idFile.empty()) {
    std::printf(
        "usage: recovery_program --id-file PATH [--victim R] [--kill-at I] "
        "[--mixed-lists] [--max-detect SECONDS]\n");
    return 2;
  }
  gRank = envInt("RANK");
  gSize = envInt("WORLD_SIZE");
  if (gSize < 3 || victim < 0 || victim >= gSize) {
    std::printf("recovery_program: needs 3 or more ranks and a victim among them\n");
    return 2;
  }
  alarm(90);  // watchdog: a hang fails the test (SIGALRM ends the process)
  const std::string stamp = idFile + ".killed";
  ncclUniqueId id;
  passThroughFile(idFile, &id);
  ncclComm_t comm = nullptr;
  NCCL_OR_DIE(ncclCommInitRank(&comm, gSize, id, gRank));

  // The loop: every rank runs it until a call fails; the victim dies during it.
  double failedAt = 0;
  ncclResult_t failure = ncclSuccess;
  int iter = 0;
  for (; iter < 100000; ++iter) {
    if (gRank == victim && iter == killAt) killSoon(stamp);
    failure = allReduceStep(comm, gRank, gSize, iter, 65536);
    if (failure != ncclSuccess) {
      failedAt = monotonicSeconds();
      break;
    }
  }
  check(failure != ncclSuccess, "no call failed after the victim's kill");
  const std::string why = ncclGetLastError(comm);
  std::printf("rank %d: iteration %d failed: %s: %s\n", gRank, iter, ncclGetErrorString(failure),
              why.c_str());
  check(failure == ncclRemoteError, "the failed call returned " +
                                        std::string(ncclGetErrorString(failure)) +
                                        ", expected ncclRemoteError");
  check(why.find("rank " + std::to_string(victim)) != std::string::npos,
        "ncclGetLastError does not name rank " + std::to_string(victim) + ": " + why);
  const double killed = killTime(stamp);
  check(killed > 0, "no kill time in " + stamp);
  const double detect = failedAt - killed;
  std::printf("rank %d: detected after %.0f ms\n", gRank, detect * 1e3);
  check(detect < maxDetect, "the error came " + std::to_string(detect) + " s after the kill (" +
                                std::to_string(maxDetect) + " s allowed)");

  // Revoke: in progress until strata's calls ended, then quiescent; nothing else accepted.
  NCCL_OR_DIE(ncclCommRevoke(comm, NCCL_REVOKE_DEFAULT));
  ncclResult_t state = ncclInProgress;
  for (int tries = 0; tries < 5000 && state == ncclInProgress; ++tries) {
    NCCL_OR_DIE(ncclCommGetAsyncError(comm, &state));
    if (state == ncclInProgress) std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  check(state == ncclSuccess, std::string("after ncclCommRevoke the state is ") +
                                  ncclGetErrorString(state) + ", expected ncclSuccess");
  int64_t one = 1;
  check(ncclAllReduce(&one, &one, 1, ncclInt64, ncclSum, comm, nullptr) == ncclInvalidUsage,
        "an allreduce on the revoked communicator was not refused with ncclInvalidUsage");
  check(ncclCommFinalize(comm) == ncclInvalidUsage,
        "ncclCommFinalize after ncclCommRevoke was not refused with ncclInvalidUsage");

  // Shrink without the victim; with --mixed-lists the odd ranks leave it to the agreement.
  std::vector<int> exclude = {victim};
  if (mixedLists && gRank % 2 == 1) exclude.clear();
  ncclComm_t shrunk = nullptr;
  const double shrinkStart = monotonicSeconds();
  NCCL_OR_DIE(ncclCommShrink(comm, exclude.data(), int(exclude.size()), &shrunk, nullptr,
                             NCCL_SHRINK_ABORT));
  std::printf("rank %d: ncclCommShrink took %.0f ms\n", gRank,
              (monotonicSeconds() - shrinkStart) * 1e3);
  std::vector<int> survivors;
  for (int r = 0; r < gSize; ++r) {
    if (r != victim) survivors.push_back(r);
  }
  int count = -1, rank = -1;
  NCCL_OR_DIE(ncclCommCount(shrunk, &count));
  NCCL_OR_DIE(ncclCommUserRank(shrunk, &rank));
  const int want = gRank - (gRank > victim ? 1 : 0);
  check(count == gSize - 1 && rank == want,
        "the shrunk communicator has rank " + std::to_string(rank) + " of " +
            std::to_string(count) + ", expected " + std::to_string(want) + " of " +
            std::to_string(gSize - 1));
  // The old communicator goes first: locally, its lost member cannot take part.
  NCCL_OR_DIE(ncclCommDestroy(comm));
  collectives(shrunk, rank, count, survivors);
  ncclResult_t async = ncclInternalError;
  NCCL_OR_DIE(ncclCommGetAsyncError(shrunk, &async));
  check(async == ncclSuccess, "ncclCommGetAsyncError on the shrunk communicator");
  NCCL_OR_DIE(ncclCommFinalize(shrunk));
  NCCL_OR_DIE(ncclCommDestroy(shrunk));

  std::printf("recovery_program rank %d: %d passed, %d failed\n", gRank, gChecks - gFailures,
              gFailures);
  if (rank == 0) {  // the first survivor: the files of this run go
    unlink(idFile.c_str());
    unlink(stamp.c_str());
  }
  return gFailures == 0 && gChecks > 0 ? 0 : 1;
}
