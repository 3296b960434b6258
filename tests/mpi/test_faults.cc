// MPI fault tests: a peer that stalls, ranks that disagree, an abort with calls queued. Run
// with a short STRATA_TIMEOUT (the entries use 2 s); every bound below is derived from it.
//
//   --scenario stall      every rank runs a loop of large allreduces; rank --stall-rank sleeps
//                         in user code at iteration --stall-at for 2 * STRATA_TIMEOUT + 1 s.
//                         Every other rank's allreduce must return strataRemoteError after
//                         [0.9 T, T + slack]; strataGetLastError must name what timed out (the
//                         collective and its sequence number, the step, level and fabric); a
//                         later call must fail fast with the same error;
//                         strataCommGetAsyncError must report it; strataCommAbort must return
//                         in under a second; /dev/shm must hold no segment of this process.
//                         The sleeper, when it wakes, must end in an error within T + slack too.
//   --scenario count-mismatch  rank 1 passes half the count of the others (a silent wrong
//                         answer before): every rank must return an error within T + slack,
//                         none success; then strataCommDestroy after the error returns promptly.
//   --scenario skip       every rank runs --stall-at + 2 allreduces of the same shape; rank
//                         --stall-rank never issues the one at iteration --stall-at (a
//                         skipped call). Without STRATA_CHECK nothing can tell: its calls pair
//                         with the others' earlier ones and succeed; the others' last one
//                         times out (strataRemoteError within T + slack). The skipper then
//                         dumps on demand, as an operator would on a hung job: with
//                         STRATA_FLIGHT_RECORDER_SIGNAL=USR1 it raises SIGUSR1 and its dump
//                         must appear within 5 s, else it calls strataCommDump; so that
//                         strata-trace hang can name it from the dumps (tests/tools).
//   --scenario abort-queued  every rank queues nonblocking allreduces; rank --stall-rank
//                         aborts at once (it must return promptly, and its requests must then
//                         complete with an error at once); the others' requests complete (with
//                         an error within T + slack, or successfully when the calls ran before
//                         the abort); each then destroys or aborts promptly.
//   --scenario init-loop  strataCommInitMPI, an allreduce and strataCommDestroy --loops times
//                         (after 10 warm-up rounds): no growth in file descriptors or /dev/shm
//                         entries, and resident memory grows by less than 8 MiB.
//
// The program ends with MPI_Finalize after strata abandoned requests on its own communicators
// (Open MPI 4.1 finalises regardless: strata never waits on or frees an abandoned request).
//
//   STRATA_TIMEOUT=2 mpiexec -n 4 strata_mpi_faults --scenario stall [--threads]

#include <dirent.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "mpi/mpi_harness.h"
#include "strata/strata_mpi.h"

namespace {

using namespace strata_test;
using Clock = std::chrono::steady_clock;

double since(Clock::time_point t0) {
  return std::chrono::duration<double>(Clock::now() - t0).count();
}

double timeoutSeconds() {
  const char* s = std::getenv("STRATA_TIMEOUT");
  return s != nullptr && *s != '\0' ? std::atof(s) : 600;
}

// Slack over STRATA_TIMEOUT: a waiter checks the clock at least every few hundred polls, but
// on an oversubscribed machine a rank may not run for a while.
constexpr double kSlack = 3.0;

// The shared-memory segments this process made that are still named in /dev/shm.
std::vector<std::string> ownShmEntries() {
  std::vector<std::string> out;
  const std::string prefix = "strata-" + std::to_string(getpid()) + "-";
  DIR* d = opendir("/dev/shm");
  if (d == nullptr) return out;
  while (dirent* e = readdir(d)) {
    if (std::string(e->d_name).rfind(prefix, 0) == 0) out.push_back(e->d_name);
  }
  closedir(d);
  return out;
}

bool contains(const std::string& s, const std::string& part) {
  return s.find(part) != std::string::npos;
}

// STRATA_FLIGHT_RECORDER_FILE for this rank (%r expanded; the entries use no other escape), or
// "" when it is not set.
std::string flightFile(int rank) {
  const char* s = std::getenv("STRATA_FLIGHT_RECORDER_FILE");
  std::string path = s != nullptr ? s : "";
  const size_t at = path.find("%r");
  if (at != std::string::npos) path.replace(at, 2, std::to_string(rank));
  return path;
}

// The flight recorder's dump after the stall: strata wrote one JSON line at the failure (the
// abort that follows does not dump again); in it, the allreduces before the stall are done and
// the one at the stall failed at a step of its program, with its error.
void checkFlightDump(Harness& h, int stallAt) {
  const std::string path = flightFile(h.rank());
  if (path.empty()) return;
  std::ifstream in(path);
  std::vector<std::string> lines;
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  if (!h.expect(lines.size() == 1, "the flight recorder file " + path + " holds " +
                                       std::to_string(lines.size()) + " dumps, expected 1")) {
    return;
  }
  const nlohmann::json dump = nlohmann::json::parse(lines[0], nullptr, false);
  if (!h.expect(!dump.is_discarded() && dump.contains("calls"),
                "the dump is not JSON: " + lines[0]))
    return;
  h.expect(dump.value("rank", -1) == h.rank(), "the dump names another rank");
  h.expect(dump.value("reason", std::string()).size() > 0, "the dump gives no reason");
  int done = 0;
  bool failedAtStall = false;
  for (const nlohmann::json& call : dump["calls"]) {
    const std::string state = call.value("state", std::string());
    const int seq = call.value("seq", 0);
    h.expect(call.value("collective", std::string()) == "allreduce",
             "the dump records a " + call.value("collective", std::string()));
    if (seq <= stallAt) done += state == "done" ? 1 : 0;
    if (seq == stallAt + 1) {
      failedAtStall = state == "failed" && call.value("steps", 0) > 0 &&
                      call.value("step", 0) >= 1 && !call.value("error", std::string()).empty();
    }
  }
  h.expect(done == stallAt, "the dump has " + std::to_string(done) + " allreduces done, expected " +
                                std::to_string(stallAt) + ": " + lines[0]);
  h.expect(failedAtStall, "the dump does not show allreduce #" + std::to_string(stallAt + 1) +
                              " failed at a step, with its error: " + lines[0]);
}

strataComm_t init(Harness& h) {
  h.step("strataCommInitMPI");
  strataComm_t comm = nullptr;
  const strataResult_t rc = initComm(&comm, MPI_COMM_WORLD);
  h.expectSuccess(rc, "strataCommInitMPI");
  h.expect(ownShmEntries().empty(), "/dev/shm still names a segment of this process after init");
  return rc == strataSuccess ? comm : nullptr;
}

// The checks on a communicator whose call just failed with `rc` and `message`.
void checkErrorState(Harness& h, strataComm_t comm, strataResult_t rc, const std::string& message,
                     std::vector<float>& buf) {
  // A later call fails fast, with the same error.
  const auto t0 = Clock::now();
  const strataResult_t again =
      strataAllReduce(buf.data(), buf.data(), buf.size(), strataFloat32, strataSum, comm, nullptr);
  const double t = since(t0);
  h.expect(again == rc,
           "a call after the error returned " + codeName(again) + ", expected " + codeName(rc));
  h.expect(t < 0.5, "a call after the error took " + std::to_string(t) + " s, expected < 0.5");
  const std::string second = strataGetLastError(comm);
  h.expect(contains(second, message),
           "the later call's error does not carry the first one: '" + second + "'");
  strataResult_t async = strataSuccess;
  h.expectSuccess(strataCommGetAsyncError(comm, &async), "strataCommGetAsyncError", comm);
  h.expect(async == rc,
           "strataCommGetAsyncError reported " + codeName(async) + ", expected " + codeName(rc));
}

void abortPromptly(Harness& h, strataComm_t comm, const char* how) {
  h.step(how);
  const auto t0 = Clock::now();
  const strataResult_t rc =
      std::string(how) == "strataCommAbort" ? strataCommAbort(comm) : strataCommDestroy(comm);
  const double t = since(t0);
  h.expectSuccess(rc, how);
  h.expect(t < 1.0, std::string(how) + " took " + std::to_string(t) + " s, expected < 1 s");
  h.expect(ownShmEntries().empty(),
           std::string("/dev/shm names a segment of this process after ") + how);
}

// A failed call's buffers stay allocated until the process ends, as docs/errors.md ("The error
// state") asks of every caller: MPI may still read or write them when a late peer arrives (a
// pipelined allreduce's abandoned sends name the caller's buffer), and freeing them made the
// harness's own MPI_Allreduce crash at the end of the stall scenario.
void keepUntilExit(std::vector<float>&& buf) {
  static std::vector<std::vector<float>> kept;
  kept.push_back(std::move(buf));
}

void stall(Harness& h, int stallRank, int stallAt, size_t count) {
  const double T = timeoutSeconds();
  if (!flightFile(h.rank()).empty()) std::remove(flightFile(h.rank()).c_str());  // an earlier run's
  strataComm_t comm = init(h);
  if (comm == nullptr) return;
  std::vector<float> buf(count, 1.0f);
  const bool sleeper = h.rank() == stallRank;
  bool failed = false;
  for (int i = 0; i < stallAt + 20 && !failed; ++i) {
    if (sleeper && i == stallAt) {
      h.step("sleeping in user code");
      std::this_thread::sleep_for(std::chrono::duration<double>(2 * T + 1));
    }
    h.step("allreduce " + std::to_string(i));
    const auto t0 = Clock::now();
    const strataResult_t rc =
        strataAllReduce(buf.data(), buf.data(), count, strataFloat32, strataSum, comm, nullptr);
    const double t = since(t0);
    if (rc == strataSuccess) {
      h.expect(i < stallAt, "allreduce " + std::to_string(i) + " succeeded after the stall");
      continue;
    }
    failed = true;
    const std::string msg = strataGetLastError(comm);
    if (h.verbose() || h.rank() == 0) std::printf("rank %d: %s\n", h.rank(), msg.c_str());
    h.expect(i == stallAt, "allreduce " + std::to_string(i) + " failed, expected the one at " +
                               std::to_string(stallAt) + ": " + msg);
    h.expect(t <= T + kSlack, "the failing allreduce took " + std::to_string(t) +
                                  " s, more than STRATA_TIMEOUT + " + std::to_string(kSlack));
    if (sleeper) {
      // Its peers are gone: it must end in an error too, whichever.
      h.expect(rc != strataSuccess, "the sleeper's allreduce succeeded");
    } else {
      h.expect(rc == strataRemoteError, "the failing allreduce returned " + codeName(rc) +
                                            ", expected strataRemoteError: " + msg);
      h.expect(t >= 0.9 * T, "the failing allreduce returned after " + std::to_string(t) +
                                 " s, before STRATA_TIMEOUT");
      const std::string seq = "allreduce #" + std::to_string(stallAt + 1);
      for (const std::string& part :
           {std::string("timed out after"), seq, std::string("STRATA_TIMEOUT"),
            std::string("fabric "), std::string("step ")}) {
        h.expect(contains(msg, part), "strataGetLastError lacks '" + part + "': " + msg);
      }
    }
    checkErrorState(h, comm, rc, msg, buf);
  }
  h.expect(failed, "no allreduce failed although rank " + std::to_string(stallRank) + " stalled");
  abortPromptly(h, comm, "strataCommAbort");
  keepUntilExit(std::move(buf));
  checkFlightDump(h, stallAt);
}

void skipOne(Harness& h, int skipRank, int skipAt, size_t count) {
  const double T = timeoutSeconds();
  if (!flightFile(h.rank()).empty()) std::remove(flightFile(h.rank()).c_str());  // an earlier run's
  strataComm_t comm = init(h);
  if (comm == nullptr) return;
  std::vector<float> buf(count, 1.0f);
  const bool skipper = h.rank() == skipRank;
  const int calls = skipAt + 2;
  for (int i = 0; i < calls; ++i) {
    if (skipper && i == skipAt) continue;
    h.step("allreduce " + std::to_string(i));
    const auto t0 = Clock::now();
    const strataResult_t rc =
        strataAllReduce(buf.data(), buf.data(), count, strataFloat32, strataSum, comm, nullptr);
    const double t = since(t0);
    const std::string msg = rc == strataSuccess ? "" : strataGetLastError(comm);
    if (skipper || i + 1 < calls) {
      // Paired with a peer's call of the same shape: nothing fails (the silent wrong answer
      // docs/errors.md lists).
      h.expectSuccess(rc, "allreduce " + std::to_string(i), comm);
      continue;
    }
    h.expect(rc == strataRemoteError, "the last allreduce returned " + codeName(rc) +
                                          ", expected strataRemoteError: " + msg);
    h.expect(t <= T + kSlack, "the last allreduce took " + std::to_string(t) + " s");
  }
  if (skipper && std::getenv("STRATA_FLIGHT_RECORDER_SIGNAL") != nullptr) {
    h.step("raise(SIGUSR1)");
    const std::string path = flightFile(h.rank());
    h.expect(!path.empty(), "the signal case needs STRATA_FLIGHT_RECORDER_FILE");
    std::raise(SIGUSR1);
    bool dumped = false;
    for (int i = 0; i < 500 && !dumped && !path.empty(); ++i) {
      std::ifstream in(path);
      std::string line;
      dumped = static_cast<bool>(std::getline(in, line));
      if (!dumped) std::this_thread::sleep_for(std::chrono::milliseconds(10));
    }
    h.expect(dumped, "no dump in " + path + " within 5 s of SIGUSR1");
  } else if (skipper) {
    h.step("strataCommDump");
    h.expectSuccess(strataCommDump(comm), "strataCommDump", comm);
  }
  abortPromptly(h, comm, "strataCommAbort");
  keepUntilExit(std::move(buf));
}

void countMismatch(Harness& h, size_t count) {
  const double T = timeoutSeconds();
  strataComm_t comm = init(h);
  if (comm == nullptr) return;
  const size_t mine = h.rank() == 1 ? count / 2 : count;
  std::vector<float> send(count, 1.0f), recv(count, 0.0f);
  h.step("mismatched allreduce");
  const auto t0 = Clock::now();
  const strataResult_t rc =
      strataAllReduce(send.data(), recv.data(), mine, strataFloat32, strataSum, comm, nullptr);
  const double t = since(t0);
  const std::string msg = strataGetLastError(comm);
  if (h.rank() <= 1) std::printf("rank %d: %s: %s\n", h.rank(), codeName(rc).c_str(), msg.c_str());
  h.expect(rc != strataSuccess, "an allreduce of " + std::to_string(mine) +
                                    " elements against others' " + std::to_string(count) +
                                    " returned strataSuccess");
  h.expect(t <= T + kSlack, "the mismatched allreduce took " + std::to_string(t) + " s");
  if (rc != strataSuccess) checkErrorState(h, comm, rc, msg, send);
  // Destroy after an error: local, like an abort.
  abortPromptly(h, comm, "strataCommDestroy");
  keepUntilExit(std::move(send));
  keepUntilExit(std::move(recv));
}

void abortQueued(Harness& h, int abortRank, size_t count) {
  const double T = timeoutSeconds();
  strataComm_t comm = init(h);
  if (comm == nullptr) return;
  constexpr int kCalls = 6;
  std::vector<std::vector<float>> bufs(kCalls, std::vector<float>(count, 1.0f));
  std::vector<strataRequest_t> reqs(kCalls, nullptr);
  h.step("queueing nonblocking allreduces");
  for (int i = 0; i < kCalls; ++i) {
    h.expectSuccess(strataIAllReduce(bufs[i].data(), bufs[i].data(), count, strataFloat32,
                                     strataSum, comm, &reqs[i]),
                    "strataIAllReduce", comm);
  }
  if (h.rank() == abortRank) {
    h.step("strataCommAbort with calls queued");
    const auto t0 = Clock::now();
    h.expectSuccess(strataCommAbort(comm), "strataCommAbort");
    const double t = since(t0);
    h.expect(t < 1.0, "strataCommAbort with calls queued took " + std::to_string(t) + " s");
    // The requests outlive the communicator; their calls failed or finished.
    for (int i = 0; i < kCalls; ++i) {
      const auto w0 = Clock::now();
      const strataResult_t rc = strataWait(&reqs[i]);
      h.expect(since(w0) < 1.0, "strataWait after the abort took " + std::to_string(since(w0)));
      h.expect(reqs[i] == nullptr, "*request is not NULL after strataWait");
      (void)rc;
    }
    h.expect(ownShmEntries().empty(), "/dev/shm names a segment of this process after abort");
    // The aborted calls' sends may still be in flight inside MPI and name these buffers.
    for (std::vector<float>& b : bufs) keepUntilExit(std::move(b));
    return;
  }
  h.step("waiting on the requests");
  bool anyFailed = false;
  for (int i = 0; i < kCalls; ++i) {
    const auto t0 = Clock::now();
    const strataResult_t rc = strataWait(&reqs[i]);
    const double t = since(t0);
    // The first failed call took up to the timeout; the later ones fail fast.
    h.expect(t <= T + kSlack, "strataWait took " + std::to_string(t) + " s");
    h.expect(reqs[i] == nullptr, "*request is not NULL after strataWait");
    if (rc != strataSuccess) {
      // The failed wait's message is the communicator's last error too, not only the thread's.
      const std::string onComm = strataGetLastError(comm);
      h.expect(onComm.rfind("strataWait: ", 0) == 0 && onComm == strataGetLastError(nullptr),
               "after a failed strataWait, strataGetLastError(comm) is '" + onComm +
                   "' and strataGetLastError(NULL) '" + strataGetLastError(nullptr) + "'");
    }
    anyFailed = anyFailed || rc != strataSuccess;
  }
  abortPromptly(h, comm, anyFailed ? "strataCommDestroy" : "strataCommAbort");
  for (std::vector<float>& b : bufs) keepUntilExit(std::move(b));
}

int openFds() {
  int n = 0;
  DIR* d = opendir("/proc/self/fd");
  if (d == nullptr) return -1;
  while (readdir(d) != nullptr) ++n;
  closedir(d);
  return n;
}

long residentKiB() {
  FILE* f = std::fopen("/proc/self/status", "r");
  if (f == nullptr) return -1;
  char line[256];
  long kib = -1;
  while (std::fgets(line, sizeof(line), f) != nullptr) {
    if (std::sscanf(line, "VmRSS: %ld kB", &kib) == 1) break;
  }
  std::fclose(f);
  return kib;
}

void initLoop(Harness& h, int loops) {
  std::vector<float> buf(1024, 1.0f);
  int fds0 = 0;
  long rss0 = 0;
  for (int i = 0; i < loops + 10; ++i) {
    if (i == 10) {
      fds0 = openFds();
      rss0 = residentKiB();
    }
    h.step("init/destroy round " + std::to_string(i));
    strataComm_t comm = nullptr;
    if (initComm(&comm, MPI_COMM_WORLD) != strataSuccess) {
      h.expect(false, std::string("strataCommInitMPI failed: ") + strataGetLastError(nullptr));
      return;
    }
    const strataResult_t rc = strataAllReduce(buf.data(), buf.data(), buf.size(), strataFloat32,
                                              strataSum, comm, nullptr);
    if (rc != strataSuccess) h.expectSuccess(rc, "strataAllReduce", comm);
    if (strataCommDestroy(comm) != strataSuccess) {
      h.expect(false, "strataCommDestroy failed");
      return;
    }
  }
  const int fds = openFds();
  const long rss = residentKiB();
  h.expect(fds == fds0, "open file descriptors went from " + std::to_string(fds0) + " to " +
                            std::to_string(fds) + " over " + std::to_string(loops) + " rounds");
  h.expect(rss - rss0 < 8 * 1024, "resident memory grew by " + std::to_string(rss - rss0) +
                                      " KiB over " + std::to_string(loops) + " rounds");
  h.expect(ownShmEntries().empty(), "/dev/shm names a segment of this process");
  if (h.rank() == 0) {
    std::printf("%d rounds: fds %d -> %d, VmRSS %ld -> %ld KiB\n", loops, fds0, fds, rss0, rss);
  }
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(argc, argv, "strata fault tests: stalled peers, disagreeing ranks, aborts");
  std::string scenario = "stall";
  int stallRank = -1, stallAt = 3;
  size_t count = size_t{1} << 20;
  int loops = 200;
  h.app()
      .add_option("--scenario", scenario, "stall, skip, count-mismatch, abort-queued or init-loop")
      ->capture_default_str();
  h.app().add_option("--stall-rank", stallRank,
                     "the rank that stalls, skips or aborts (-1: the last)");
  h.app()
      .add_option("--stall-at", stallAt, "the iteration it stalls at or skips")
      ->capture_default_str();
  h.app().add_option("--count", count, "elements of each allreduce")->capture_default_str();
  h.app().add_option("--loops", loops, "init-loop: rounds")->capture_default_str();
  if (!h.start(argc, argv)) return h.exitCode();
  if (stallRank < 0) stallRank = h.size() - 1;
  if (timeoutSeconds() > 30) {
    h.expect(false, "set STRATA_TIMEOUT to a few seconds for this test");
  } else if (scenario == "stall") {
    stall(h, stallRank, stallAt, count);
  } else if (scenario == "skip") {
    skipOne(h, stallRank, stallAt, count);
  } else if (scenario == "count-mismatch") {
    countMismatch(h, count);
  } else if (scenario == "init-loop") {
    initLoop(h, loops);
  } else if (scenario == "abort-queued") {
    abortQueued(h, stallRank, count);
  } else {
    h.expect(false, "unknown --scenario " + scenario);
  }
  return h.finish();
}
