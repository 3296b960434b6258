// Recovery from a lost rank (strataCommRevoke, strataCommShrink; issue 45), tested as a user's
// job meets it: ranks of a unique-id communicator (no MPI) run a loop of mixed, checked calls
// until one of them is lost; every survivor must see a call fail soon, naming the lost rank,
// then revoke, shrink without it, destroy the old communicator and run checked calls of every
// kind on the new one; at the end nothing of strata's may be left in the process.
//
//   kill           rank V (--victims) is killed by SIGKILL while a call is in flight (a thread
//                  of its own raises it --kill-delay-us after it issued call --at); every
//                  survivor's failing call must come within --max-detect seconds (1) of the kill
//                  and name rank V; STRATA_TIMEOUT must be longer, so a timeout cannot pass
//   stall          rank V stops calling (it sleeps until the survivors are done, then kills
//                  itself); the survivors' failing call ends after STRATA_TIMEOUT, not before
//   two            two ranks are killed at once; each survivor lists only the rank its error
//                  names, the agreement must add the other
//   root           rank V dies just before the call in which it is the root (a broadcast, or
//                  a reduce with --op reduce); every survivor's broadcast must fail (a
//                  reduce's senders may finish theirs, their next call fails)
//   none           a control: no victim, the same calls, destroy, the leak check
//   during-shrink  rank V is killed as in kill; rank W (the second victim) sees the failure,
//                  waits --second-delay seconds and is killed while the others wait in
//                  strataCommShrink's agreement; the shrink must succeed without both
//
// Each survivor prints its measured times (kill-to-error, the shrink, the parent's destroy);
// rank 0 of the new communicator prints "recovery: kill-to-first-correct-collective <ms> ms"
// and the largest kill-to-error of all survivors. Victims write their time of death
// (CLOCK_REALTIME) to --work DIR before they die; ranks must share that directory and the clock
// (one machine). Start with tools/strata-run --survive-loss (tests/recovery/CMakeLists.txt).
//
//   recover_program SCENARIO --work DIR [--victims V[,W]] [--at N] [--rounds N]
//                   [--comm-id] [--partial-lists] [--op broadcast|reduce] [--timeout S]
#include <signal.h>
#include <sys/stat.h>
#include <unistd.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <string>
#include <thread>
#include <vector>

#include "common/watchdog.h"
#include "recovery/recover_calls.h"
#include "recovery/recover_clock.h"
#include "recovery/recover_usage.h"
#include "strata/strata.h"

namespace {

using namespace strata::recovery;

struct Options {
  std::string scenario, work, op = "broadcast";
  std::vector<int> victims;
  int at = 23;  // the call before which the (first) victim strikes
  int rounds = 100;
  int killDelayUs = 500;
  double maxDetect = 1.0, secondDelay = 1.5, timeout = 90;
  bool commId = false, partialLists = false;
};

class Rank {
 public:
  Rank(const Options& o, int rank, int size) : o_(o), rank_(rank), size_(size) {}
  int run();

 private:
  bool expect(bool ok, const std::string& what) {
    if (!ok) {
      ++failures_;
      std::printf("rank %d: FAILED: %s\n", rank_, what.c_str());
      std::fflush(stdout);
    }
    return ok;
  }
  void say(const std::string& what) {
    std::printf("rank %d: %s\n", rank_, what.c_str());
    std::fflush(stdout);
  }
  void step(const std::string& s) { watchdog_.setStep(s); }
  std::string diedPath(int r) const { return o_.work + "/died." + std::to_string(r); }
  bool isVictim(int r) const {
    return std::find(o_.victims.begin(), o_.victims.end(), r) != o_.victims.end();
  }
  int strikeAt() const;
  strataResult_t initComm(const std::string& idName, bool commId, strataComm_t* comm);
  bool warmUp();
  [[noreturn]] void die(const char* how);
  [[noreturn]] void stall();
  bool loopUntilFailure();
  void checkFailure();
  void recover();
  void checkNewComm();
  void checkControl();
  void checkNoLeaks();

  const Options& o_;
  const int rank_, size_;
  strata::test::Watchdog watchdog_;
  Usage before_;
  strataComm_t comm_ = nullptr, newComm_ = nullptr;
  int failures_ = 0;
  // The first failure this rank saw: which call, when it was issued and when it returned.
  uint64_t failedCall_ = 0;
  double failedIssue_ = 0, failedAt_ = 0, firstDeath_ = NAN;
  std::string failedMessage_;
  std::vector<int> named_;  // victims its error names
  int newRank_ = -1, newSize_ = 0;
  std::vector<int> survivors_;  // parent ranks of the new communicator, in order
};

// The call before which the first victim strikes: --at, or with the root scenario the first
// call from --at on that is a broadcast (reduce) rooted at it.
int Rank::strikeAt() const {
  if (o_.scenario != "root") return o_.at;
  const Kind want = o_.op == "reduce" ? Kind::kReduce : Kind::kBroadcast;
  for (int i = o_.at;; ++i) {
    const Call c = callAt(static_cast<uint64_t>(i), size_);
    if (c.kind == want && c.root == o_.victims[0]) return i;
  }
}

// A communicator over every rank, its unique id from STRATA_COMM_ID (commId) or through the file
// DIR/idName, which rank 0 writes.
strataResult_t Rank::initComm(const std::string& idName, bool commId, strataComm_t* comm) {
  strataUniqueId id;
  const std::string idPath = o_.work + "/" + idName;
  if (commId) {
    const strataResult_t rc = strataGetUniqueId(&id);
    if (rc != strataSuccess) return rc;
  } else if (rank_ == 0) {
    const strataResult_t rc = strataGetUniqueId(&id);
    if (rc != strataSuccess) return rc;
    const std::string tmp = idPath + ".tmp";
    FILE* f = std::fopen(tmp.c_str(), "wb");
    if (f == nullptr || std::fwrite(&id, sizeof id, 1, f) != 1 || std::fclose(f) != 0 ||
        std::rename(tmp.c_str(), idPath.c_str()) != 0) {
      say("cannot write " + idPath);
      return strataSystemError;
    }
  } else {
    bool got = false;
    for (int tries = 0; tries < 3000 && !got; ++tries) {
      if (FILE* f = std::fopen(idPath.c_str(), "rb")) {
        got = std::fread(&id, sizeof id, 1, f) == 1;
        std::fclose(f);
      }
      if (!got) usleep(10000);
    }
    if (!got) {
      say("no unique id in " + idPath + " after 30 s");
      return strataSystemError;
    }
  }
  return strataCommInitRank(comm, size_, id, rank_);
}

// One life before the measured one: a communicator, a call of every kind, destroy. What stays
// after it is the process's, not a communicator's: UCX's context, which strata keeps for the
// process (fabrics/ucx/ucx_context.h), with UCX's "async" thread and its descriptors. The leak
// check's baseline is taken after it.
bool Rank::warmUp() {
  step("the warm-up communicator");
  strataComm_t warm = nullptr;
  const strataResult_t rc = initComm("id.warm", false, &warm);
  if (!expect(rc == strataSuccess, std::string("the warm-up's init: ") + strataGetErrorString(rc) +
                                       ": " + strataGetLastError(nullptr))) {
    return false;
  }
  for (uint64_t i = 0; i < kKinds; ++i) {
    const Call c = callAt(i, size_);
    const Outcome out = runCall(c, rank_, size_, warm);
    if (!expect(out.rc == strataSuccess && out.wrong == 0,
                "the warm-up's " + describeCall(c) + ": " + strataGetErrorString(out.rc) + ", " +
                    std::to_string(out.wrong) + " wrong elements: " + strataGetLastError(warm))) {
      strataCommAbort(warm);
      return false;
    }
  }
  return expect(strataCommDestroy(warm) == strataSuccess,
                std::string("the warm-up's destroy: ") + strataGetLastError(nullptr));
}

// A victim's end: its time of death first, then SIGKILL (nothing of strata's runs after).
void Rank::die(const char* how) {
  writeTime(diedPath(rank_), now());
  std::printf("rank %d: killing itself (%s)\n", rank_, how);
  std::fflush(stdout);
  raise(SIGKILL);
  _exit(99);  // not reached
}

// The stalled rank: alive, never calling again, until the survivors are done (or the job's
// time is nearly up); then it dies, as a stuck process would be killed.
void Rank::stall() {
  watchdog_.stop();  // its own bounded wait below
  writeTime(diedPath(rank_), now());
  say("stalls (stops calling)");
  const std::string done = o_.work + "/done";
  for (double end = now() + o_.timeout - 10; now() < end && access(done.c_str(), F_OK) != 0;) {
    usleep(50000);
  }
  die("the stalled rank, at the end");
}

// The mixed loop: every call checked. Returns false when this rank's part ended otherwise
// than by a failed call (a result was wrong, or nothing failed).
bool Rank::loopUntilFailure() {
  const int strike = strikeAt();
  const bool first = rank_ == o_.victims[0];
  const bool both = o_.scenario == "two" && isVictim(rank_);
  for (int i = 0; i < strike + 3 * kKinds; ++i) {
    const Call c = callAt(static_cast<uint64_t>(i), size_);
    if (i == strike && (first || both)) {
      if (o_.scenario == "stall") stall();
      if (o_.scenario == "root") die("before the call it is the root of");
      // Killed while a call is in flight: a thread of its own strikes during the next call.
      std::thread([this] {
        usleep(static_cast<useconds_t>(o_.killDelayUs));
        die("while a call is in flight");
      }).detach();
    }
    step("call " + describeCall(c));
    const double issued = now();
    const Outcome out = runCall(c, rank_, size_, comm_);
    if (out.rc != strataSuccess) {
      failedCall_ = static_cast<uint64_t>(i);
      failedIssue_ = issued;
      failedAt_ = now();
      failedMessage_ = strataGetLastError(comm_);
      if (!expect(out.rc == strataRemoteError,
                  describeCall(c) + " failed with " + strataGetErrorString(out.rc) +
                      ", expected strataRemoteError: " + failedMessage_)) {
        return false;
      }
      return true;
    }
    if (!expect(out.wrong == 0, describeCall(c) + " before the loss: " + std::to_string(out.wrong) +
                                    " wrong elements, the first [" + std::to_string(out.firstBad) +
                                    "] = " + std::to_string(out.got) + ", expected " +
                                    std::to_string(out.want))) {
      return false;
    }
    // A broadcast's receivers need the dead root's data; a reduce's senders may finish.
    if (i >= strike && o_.scenario == "root" && o_.op == "broadcast") {
      expect(false, describeCall(c) + " succeeded although its root (rank " +
                        std::to_string(o_.victims[0]) + ") was dead");
      return false;
    }
  }
  expect(false, "no call failed in the " + std::to_string(3 * kKinds) +
                    " calls after the victim struck (call " + std::to_string(strike) + ")");
  return false;
}


// The failure: in time, and naming the victim (kill scenarios), or after STRATA_TIMEOUT and
// not before (stall).
void Rank::checkFailure() {
  const double limit = strataTimeout();
  const std::string call = describeCall(callAt(failedCall_, size_));
  // The victims that had died (or stalled) by the failure: the first, and with two both.
  std::vector<int> struck = {o_.victims[0]};
  if (o_.scenario == "two") struck = o_.victims;
  for (int v : struck) {
    const double t = readTime(diedPath(v), 10);
    expect(!std::isnan(t),
           "rank " + std::to_string(v) + " wrote no time of death in " + diedPath(v));
    if (!std::isnan(t)) firstDeath_ = std::isnan(firstDeath_) ? t : std::min(firstDeath_, t);
  }
  if (std::isnan(firstDeath_)) return;
  const double ms = (failedAt_ - firstDeath_) * 1e3;
  char line[512];
  if (o_.scenario == "stall") {
    const double inCall = failedAt_ - failedIssue_;
    std::snprintf(line, sizeof line,
                  "stall-to-error %.1f ms, the failing call (%s) lasted %.1f ms (STRATA_TIMEOUT "
                  "%g s): %s",
                  ms, call.c_str(), inCall * 1e3, limit, failedMessage_.c_str());
    say(line);
    expect(inCall >= limit - 0.05,
           "the call failed before STRATA_TIMEOUT (" + std::to_string(limit) + " s) had passed");
    expect(ms <= (limit + 1.5) * 1e3, "the failure came more than 1.5 s after STRATA_TIMEOUT");
    return;
  }
  std::snprintf(line, sizeof line, "kill-to-error %.1f ms in %s: %s", ms, call.c_str(),
                failedMessage_.c_str());
  say(line);
  expect(limit > o_.maxDetect + 1, "STRATA_TIMEOUT (" + std::to_string(limit) +
                                       " s) must be longer than the detection limit plus 1 s, "
                                       "or a timeout could pass for a detection");
  expect(ms <= o_.maxDetect * 1e3, "the failure came " + std::to_string(ms) +
                                       " ms after the kill, more than " +
                                       std::to_string(o_.maxDetect * 1e3) + " ms");
  for (int v : struck) {
    if (names(failedMessage_, v)) named_.push_back(v);
  }
  expect(!named_.empty(), "the error does not name the lost rank(s): " + failedMessage_);
  if (o_.scenario == "root" && o_.op == "broadcast") {
    expect(static_cast<int>(failedCall_) == strikeAt(),
           "the failing call is " + call + ", not the one rooted at the dead rank");
  }
}

void Rank::recover() {
  step("strataCommRevoke");
  expect(strataCommRevoke(comm_, STRATA_REVOKE_DEFAULT) == strataSuccess,
         std::string("strataCommRevoke: ") + strataGetLastError(comm_));
  int one = 1, sum = 0;
  const strataResult_t after =
      strataAllReduce(&one, &sum, 1, strataInt32, strataSum, comm_, nullptr);
  expect(after == strataInvalidUsage, std::string("an allreduce on the revoked communicator "
                                                  "returned ") +
                                          strataGetErrorString(after) +
                                          ", expected "
                                          "strataInvalidUsage");

  // strataCommGetLostRanks lists the killed victims (all of them within a second), and never
  // a stalled rank, which is alive.
  std::vector<int> killed = o_.victims;
  if (o_.scenario == "stall") killed.clear();
  if (o_.scenario == "during-shrink") killed.resize(1);
  std::vector<int> lost;
  for (double until = now() + 1.0;;) {
    int count = -1;
    lost.assign(static_cast<size_t>(size_), -1);
    expect(strataCommGetLostRanks(comm_, lost.data(), size_, &count) == strataSuccess,
           std::string("strataCommGetLostRanks: ") + strataGetLastError(comm_));
    lost.resize(static_cast<size_t>(std::max(count, 0)));
    if (lost.size() >= killed.size() || now() > until) break;
    usleep(10000);
  }
  std::vector<int> sortedKilled = killed;
  std::sort(sortedKilled.begin(), sortedKilled.end());
  std::string got;
  for (int r : lost) got += (got.empty() ? "" : ",") + std::to_string(r);
  expect(lost == sortedKilled, "strataCommGetLostRanks lists {" + got + "}");

  // during-shrink: the second victim is alive until the others are in the shrink.
  if (o_.scenario == "during-shrink" && rank_ == o_.victims[1]) {
    usleep(static_cast<useconds_t>(o_.secondDelay * 1e6));
    die("during the others' strataCommShrink");
  }
  // Each survivor lists what it knows: the stalled rank, or the victims its error named (with
  // two, maybe only one of them); with --partial-lists the odd ranks list nothing. The
  // agreement must make the union with the ranks known lost.
  std::vector<int> exclude = o_.scenario == "stall" ? o_.victims : named_;
  if (o_.partialLists && rank_ % 2 == 1) exclude.clear();
  std::string listed;
  for (int r : exclude) listed += (listed.empty() ? "" : ",") + std::to_string(r);
  step("strataCommShrink excluding {" + listed + "}");
  const double start = now();
  const strataResult_t rc =
      strataCommShrink(comm_, exclude.data(), static_cast<int>(exclude.size()), &newComm_, nullptr,
                       STRATA_SHRINK_ABORT);
  const double end = now();
  char line[256];
  std::snprintf(line, sizeof line, "strataCommShrink (listing {%s}) took %.1f ms", listed.c_str(),
                (end - start) * 1e3);
  say(line);
  expect(rc == strataSuccess && newComm_ != nullptr, std::string("strataCommShrink: ") +
                                                         strataGetErrorString(rc) + ": " +
                                                         strataGetLastError(comm_));
  if (o_.scenario == "during-shrink") {
    const double second = readTime(diedPath(o_.victims[1]), 5);
    expect(!std::isnan(second), "the second victim wrote no time of death");
    if (!std::isnan(second)) {
      std::snprintf(line, sizeof line,
                    "the second victim died %.1f ms after this rank entered the shrink, which "
                    "ended %.1f ms after that death",
                    (second - start) * 1e3, (end - second) * 1e3);
      say(line);
      expect(start < second,
             "the second victim died before this rank entered the shrink: "
             "lengthen --second-delay");
      expect(end - second <= o_.maxDetect + 0.5, "the shrink ended more than " +
                                                     std::to_string(o_.maxDetect + 0.5) +
                                                     " s after the second victim died");
    }
  }
  step("strataCommDestroy of the parent");
  const double d0 = now();
  expect(strataCommDestroy(comm_) == strataSuccess,
         std::string("strataCommDestroy of the parent: ") + strataGetLastError(nullptr));
  std::snprintf(line, sizeof line, "strataCommDestroy of the parent took %.1f ms",
                (now() - d0) * 1e3);
  say(line);
  comm_ = nullptr;
}

// The new communicator: its size and this rank's place, then --rounds rounds of every kind,
// every element checked.
void Rank::checkNewComm() {
  for (int r = 0; r < size_; ++r) {
    if (!isVictim(r)) survivors_.push_back(r);
  }
  const int wantRank =
      static_cast<int>(std::find(survivors_.begin(), survivors_.end(), rank_) - survivors_.begin());
  const int wantSize = static_cast<int>(survivors_.size());
  strataResult_t rc = strataCommCount(newComm_, &newSize_);
  if (expect(rc == strataSuccess, std::string("strataCommCount on the new communicator: ") +
                                      strataGetErrorString(rc) + ": " +
                                      strataGetLastError(newComm_))) {
    expect(newSize_ == wantSize, "the new communicator has " + std::to_string(newSize_) +
                                     " ranks, expected " + std::to_string(wantSize));
  }
  rc = strataCommUserRank(newComm_, &newRank_);
  if (expect(rc == strataSuccess, std::string("strataCommUserRank on the new communicator: ") +
                                      strataGetErrorString(rc) + ": " +
                                      strataGetLastError(newComm_))) {
    expect(newRank_ == wantRank, "rank " + std::to_string(newRank_) +
                                     " in the new communicator, expected " +
                                     std::to_string(wantRank));
  }
  if (newSize_ != wantSize || newRank_ != wantRank) return;
  const uint64_t calls = static_cast<uint64_t>(o_.rounds) * kKinds;
  size_t wrongCalls = 0;
  for (uint64_t i = 0; i < calls; ++i) {
    const Call c = callAt(i, newSize_);
    step("on the new communicator: " + describeCall(c));
    const Outcome out = runCall(c, newRank_, newSize_, newComm_);
    if (i == 0 && out.rc == strataSuccess && out.wrong == 0 && newRank_ == 0) {
      std::printf("recovery: %s-to-first-correct-collective %.1f ms (%s, %d ranks)\n",
                  o_.scenario == "stall" ? "stall" : "kill", (now() - firstDeath_) * 1e3,
                  o_.scenario.c_str(), newSize_);
      std::fflush(stdout);
    }
    if (out.rc != strataSuccess) {
      expect(false, "on the new communicator, " + describeCall(c) + ": " +
                        strataGetErrorString(out.rc) + ": " + strataGetLastError(newComm_));
      return;
    }
    if (out.wrong != 0 && wrongCalls++ < 5) {
      expect(false, "on the new communicator, " + describeCall(c) + ": " +
                        std::to_string(out.wrong) + " wrong elements, the first [" +
                        std::to_string(out.firstBad) + "] = " + std::to_string(out.got) +
                        ", expected " + std::to_string(out.want));
    }
  }
  expect(wrongCalls == 0, std::to_string(wrongCalls) + " calls with wrong results");
  // Every survivor's kill-to-error, the largest on new rank 0.
  const int mine = static_cast<int>((failedAt_ - firstDeath_) * 1e6), guard = -7;
  int largest = guard;
  expect(strataAllReduce(&mine, &largest, 1, strataInt32, strataMax, newComm_, nullptr) ==
                 strataSuccess &&
             largest >= mine,
         "the allreduce of the detection times");
  if (newRank_ == 0) {
    std::printf("recovery: %s-to-error, the largest of %d survivors: %.1f ms\n",
                o_.scenario == "stall" ? "stall" : "kill", newSize_, largest / 1e3);
  }
  say("checked " + std::to_string(calls) + " calls on the new communicator (rank " +
      std::to_string(newRank_) + " of " + std::to_string(newSize_) + ")");
}

// The control (no victim): the same calls on the communicator as made, then destroy; the leak
// check after it tells a leak of recovery from one of every communicator.
void Rank::checkControl() {
  const uint64_t calls = static_cast<uint64_t>(o_.rounds) * kKinds;
  for (uint64_t i = 0; i < calls; ++i) {
    const Call c = callAt(i, size_);
    step("call " + describeCall(c));
    const Outcome out = runCall(c, rank_, size_, comm_);
    if (!expect(out.rc == strataSuccess && out.wrong == 0,
                describeCall(c) + ": " + strataGetErrorString(out.rc) + ", " +
                    std::to_string(out.wrong) + " wrong elements: " + strataGetLastError(comm_))) {
      return;
    }
  }
  say("checked " + std::to_string(calls) + " calls");
  step("strataCommDestroy");
  expect(strataCommDestroy(comm_) == strataSuccess,
         std::string("strataCommDestroy: ") + strataGetLastError(nullptr));
  comm_ = nullptr;
  newRank_ = rank_;
}

void Rank::checkNoLeaks() {
  // Threads and sockets end asynchronously (the rendezvous root, UCX): allow them a moment.
  const Usage after = waitForUsage(before_, 5);
  say("before init: " + before_.text() + "; after destroy: " + after.text());
  if (!(after.threads <= before_.threads && after.fds <= before_.fds &&
        after.shmMaps <= before_.shmMaps)) {
    say("held after destroy: " + listHeld());
  }
  expect(after.threads <= before_.threads, "threads leaked");
  expect(after.sockets <= before_.sockets, "sockets leaked");
  expect(after.fds <= before_.fds, "file descriptors leaked");
  expect(after.shmMaps <= before_.shmMaps, "mappings of /dev/shm leaked");
  expect(after.shmEntries == 0, "/dev/shm entries of this process's segments left behind");
}

int Rank::run() {
  watchdog_.start(o_.timeout - 5, "rank " + std::to_string(rank_) + " (" + o_.scenario + "): ");
  const Usage cold = measureUsage();  // the watchdog's thread counts in every measurement
  if (!warmUp()) return 1;
  usleep(200000);  // the warm-up's threads end (the rendezvous root's, its control plane's)
  before_ = measureUsage();
  if (before_.threads > cold.threads + 1 || before_.sockets > cold.sockets) {
    expect(false,
           "the warm-up communicator left more than UCX's thread, or sockets: " + cold.text() +
               " before it, " + before_.text() + " after (" + listHeld() + ")");
  }
  step("strataCommInitRank");
  const strataResult_t rc = initComm("id", o_.commId, &comm_);
  if (!expect(rc == strataSuccess, std::string("init: ") + strataGetErrorString(rc) + ": " +
                                       strataGetLastError(nullptr))) {
    return 1;
  }
  if (o_.scenario == "none") {
    checkControl();
  } else if (loopUntilFailure()) {
    checkFailure();
    recover();
    if (newComm_ != nullptr) {
      checkNewComm();
      step("strataCommDestroy of the new communicator");
      expect(
          strataCommDestroy(newComm_) == strataSuccess,
          std::string("strataCommDestroy of the new communicator: ") + strataGetLastError(nullptr));
      newComm_ = nullptr;
    }
  }
  if (comm_ != nullptr) strataCommAbort(comm_);  // only after a failure above
  step("the leak check");
  checkNoLeaks();
  if (newRank_ == 0) writeTime(o_.work + "/done", now());  // the stalled rank may go
  watchdog_.stop();
  say(failures_ == 0 ? "PASSED" : "FAILED (" + std::to_string(failures_) + " checks)");
  return failures_ == 0 ? 0 : 1;
}

int envInt(const char* name) {
  const char* v = std::getenv(name);
  if (v == nullptr) {
    std::fprintf(stderr, "recover_program: %s is not set: start it with tools/strata-run\n", name);
    std::exit(2);
  }
  return std::atoi(v);
}

}  // namespace

int main(int argc, char** argv) {
  Options o;
  CLI::App app{"recovery from a lost rank: strataCommRevoke and strataCommShrink"};
  app.add_option("scenario", o.scenario,
                 "kill, stall, two, root, during-shrink, or none (a control)")
      ->required()
      ->check(CLI::IsMember({"kill", "stall", "two", "root", "during-shrink", "none"}));
  app.add_option("--work", o.work, "a directory every rank shares (unique id, times of death)")
      ->required();
  app.add_option("--victims", o.victims,
                 "the ranks lost (default: size/2; two and "
                 "during-shrink: size/2 and 1)")
      ->delimiter(',');
  app.add_option("--at", o.at, "the call before which the (first) victim strikes");
  app.add_option("--rounds", o.rounds, "rounds of every kind of call on the new communicator");
  app.add_option("--kill-delay-us", o.killDelayUs, "kill: microseconds into the call");
  app.add_option("--max-detect", o.maxDetect, "seconds from a kill to every survivor's error");
  app.add_option("--second-delay", o.secondDelay,
                 "during-shrink: seconds from its failure to the second victim's death");
  app.add_option("--op", o.op, "root: the rooted call")
      ->check(CLI::IsMember({"broadcast", "reduce"}));
  app.add_option("--timeout", o.timeout, "seconds before the watchdog ends a rank");
  app.add_flag("--comm-id", o.commId, "the unique id from STRATA_COMM_ID (strata-run --comm-id)");
  app.add_flag("--partial-lists", o.partialLists,
               "survivors of odd rank pass an empty excludeRanksList");
  CLI11_PARSE(app, argc, argv);

  const int rank = envInt("RANK"), size = envInt("WORLD_SIZE");
  const int half = size / 2;
  if (o.victims.empty()) {
    o.victims = {half};
    if (o.scenario == "two" || o.scenario == "during-shrink")
      o.victims.push_back(half == 1 ? 2 : 1);
  }
  const size_t want = o.scenario == "two" || o.scenario == "during-shrink" ? 2 : 1;
  bool ok = o.victims.size() == want && size - static_cast<int>(want) >= 2;
  for (int v : o.victims) ok = ok && v >= 0 && v < size;
  if (!ok || (want == 2 && o.victims[0] == o.victims[1])) {
    std::fprintf(stderr,
                 "recover_program: %s needs %zu distinct victim(s) in [0, %d) and at "
                 "least 2 survivors\n",
                 o.scenario.c_str(), want, size);
    return 2;
  }
  mkdir(o.work.c_str(), 0700);  // every rank may: the first makes it
  return Rank(o, rank, size).run();
}
