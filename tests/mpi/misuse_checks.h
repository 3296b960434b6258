// Threads that break the one-thread rules, caught instead of corrupting (issue 28): a second
// thread issuing on a communicator while a first is inside a call, and a second thread
// completing a request a first is waiting on. Both get strataInvalidUsage naming the problem;
// the first thread's call completes with the right result and the communicator stays usable.
//
// Deterministic: rank 0's first thread enters a call that cannot finish until the other ranks
// join it, which they do only after kLateSeconds; rank 0's second thread acts while the first
// is surely inside (it waits for the first to announce itself, then kInsideSeconds).
// Used by test_nonblocking.cc in its --threads entries.
#pragma once

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

#include "mpi/collective_reference.h"
#include "mpi/mpi_harness.h"

namespace strata_test {

constexpr double kLateSeconds = 1.5;
constexpr double kInsideSeconds = 0.3;

inline void sleepFor(double seconds) {
  std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
}

inline bool mentionsAll(const std::string& text, const std::vector<const char*>& words) {
  for (const char* w : words) {
    if (text.find(w) == std::string::npos) return false;
  }
  return true;
}

// `first` on a thread of its own (rank 0) or after kLateSeconds (the others); on rank 0 the
// calling thread runs `second` while `first` is inside. Then every rank checks the sum of
// (rank + 1) that `first` computed into `out`, and one more allreduce on the communicator.
template <typename First, typename Second>
void runWhileInside(Harness& h, const Comm& cm, Verdict& v, First first, Second second,
                    std::vector<float>& out) {
  std::atomic<bool> entered{false};
  strataResult_t firstRc = strataSuccess;
  if (cm.rank == 0) {
    std::thread t([&] {
      entered.store(true);
      firstRc = first();
    });
    while (!entered.load()) std::this_thread::yield();
    sleepFor(kInsideSeconds);
    second();
    t.join();
  } else {
    sleepFor(kLateSeconds);
    firstRc = first();
  }
  checkResult(v, firstRc, cm.comm);
  const float want = static_cast<float>(cm.size) * static_cast<float>(cm.size + 1) / 2;
  for (float x : out) {
    if (x != want) {
      v.fail("the first thread's allreduce gave " + std::to_string(x) + ", expected " +
             std::to_string(want));
      break;
    }
  }
  float one = 1, all = 0;
  if (checkResult(v, strataAllReduce(&one, &all, 1, strataFloat32, strataSum, cm.comm, nullptr),
                  cm.comm) &&
      all != static_cast<float>(cm.size)) {
    v.fail("the communicator's next allreduce gave " + std::to_string(all));
  }
  (void)h;
}

inline void runTwoIssuers(Harness& h, const Comm& cm) {
  const std::string what = "a second thread issuing while the first is inside a call";
  h.step(what);
  MPI_Barrier(MPI_COMM_WORLD);  // the other ranks' kLateSeconds count from here
  Verdict v = h.verdict(what);
  constexpr size_t kCount = 1031;
  std::vector<float> in(kCount, static_cast<float>(cm.rank + 1)), out(kCount, -1);
  std::vector<float> other(kCount, -7);
  runWhileInside(
      h, cm, v,
      [&] {
        return strataAllReduce(in.data(), out.data(), kCount, strataFloat32, strataSum, cm.comm,
                               nullptr);
      },
      [&] {
        const strataResult_t rc =
            strataBroadcast(in.data(), other.data(), kCount, strataFloat32, 0, cm.comm, nullptr);
        const std::string msg = strataGetLastError(cm.comm);
        if (rc != strataInvalidUsage) {
          v.fail("the second thread's broadcast returned " + std::to_string(rc) +
                 ", expected strataInvalidUsage: " + msg);
        } else if (!mentionsAll(msg, {"broadcast", "allreduce", "thread", "one thread"})) {
          v.fail("the refusal does not name both calls and the rule: " + msg);
        }
        for (float x : other) {
          if (x != -7) {
            v.fail("the refused broadcast wrote recvbuff");
            break;
          }
        }
      },
      out);
  h.record(v);
}

inline void runTwoWaiters(Harness& h, const Comm& cm) {
  // Under STRATA_CHECK=1 a nonblocking call compares itself with the other ranks as it is
  // issued, so rank 0's strataIAllReduce returns only once the late ranks issue theirs: its
  // request may be complete before a second thread could wait on it. Nothing to test there.
  const char* check = std::getenv("STRATA_CHECK");
  if (check != nullptr && std::string(check) != "0") return;
  const std::string what = "a second thread waiting on a request the first waits on";
  h.step(what);
  Verdict v = h.verdict(what);
  constexpr size_t kCount = 769;
  std::vector<float> in(kCount, static_cast<float>(cm.rank + 1)), out(kCount, -1);
  // The first nonblocking call sets up plans and groups (the fusion packs' plans for every
  // size: core/fusion_queue.h), collectively, while it is issued: rank 0's strataIAllReduce
  // would then return only once the late ranks issue theirs, its request complete. One
  // nonblocking call of the same size, waited for, makes the setup first.
  strataRequest_t warm = nullptr;
  if (!checkResult(
          v,
          strataIAllReduce(in.data(), out.data(), kCount, strataFloat32, strataSum, cm.comm, &warm),
          cm.comm) ||
      !checkResult(v, strataWait(&warm), cm.comm)) {
    h.record(v);
    return;
  }
  std::fill(out.begin(), out.end(), -1.0f);
  MPI_Barrier(MPI_COMM_WORLD);  // the other ranks' kLateSeconds count from here
  // Rank 0 issues at once; the others only after kLateSeconds, so rank 0's request cannot
  // complete before its second thread acts.
  strataRequest_t req = nullptr;
  auto issue = [&] {
    return strataIAllReduce(in.data(), out.data(), kCount, strataFloat32, strataSum, cm.comm, &req);
  };
  if (cm.rank == 0 && !checkResult(v, issue(), cm.comm)) {
    h.record(v);
    return;
  }
  strataRequest_t firstCopy = req, secondCopy = req;  // the same handle, one variable each
  runWhileInside(
      h, cm, v,
      [&] {
        if (cm.rank != 0) {
          const strataResult_t rc = issue();
          if (rc != strataSuccess) return rc;
          firstCopy = req;
        }
        return strataWait(&firstCopy);
      },
      [&] {
        const strataResult_t rc = strataWait(&secondCopy);
        const std::string msg = strataGetLastError(nullptr);
        if (rc != strataInvalidUsage) {
          v.fail("the second thread's strataWait returned " + std::to_string(rc) +
                 ", expected strataInvalidUsage: " + msg);
        } else if (!mentionsAll(msg, {"another thread", "request"})) {
          v.fail("the refusal does not say another thread completes the request: " + msg);
        }
      },
      out);
  if (firstCopy != nullptr) v.fail("strataWait left *request set");
  h.record(v);
}

}  // namespace strata_test
