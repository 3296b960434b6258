// The checks of the API error tests (test_api_errors.cc, api_errors_calls.cc): a Checker that
// counts checks and prints each failed one with its rank, expectFailure (a call must return one
// of the documented codes and leave a message naming the problem), and expectCommWorks (a
// communicator still gives the right answer after an error).
#pragma once

#include <mpi.h>

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdio>
#include <functional>
#include <initializer_list>
#include <string>
#include <vector>

#include "common/watchdog.h"
#include "mpi/collective_types.h"
#include "strata/strata_mpi.h"

namespace strata_test {

inline std::string lower(std::string s) {
  std::transform(s.begin(), s.end(), s.begin(),
                 [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return s;
}

// Counts checks and prints each failed one with this rank's number.
class Checker {
 public:
  Checker(int rank, strata::test::Watchdog& watchdog) : rank_(rank), watchdog_(watchdog) {}

  void step(const std::string& what) { watchdog_.setStep(what); }

  bool expect(bool ok, const std::string& what) {
    ++checks_;
    if (!ok) {
      ++failures_;
      std::fprintf(stderr, "FAIL rank %d: %s\n", rank_, what.c_str());
    }
    return ok;
  }

  // Runs `call`, which must return one of `allowed`. Then the last error must be non-empty and
  // contain one of `words` (case-insensitive): that of `comm` (kComm), the thread's (kThread, for
  // a NULL comm), or, for a stale handle the library no longer knows, either (kCommOrThread).
  // The message is read only after the call and copied at once: a strata call may reuse it.
  enum class From { kComm, kThread, kCommOrThread };
  void expectFailure(const std::string& what, const std::function<strataResult_t()>& call,
                     std::initializer_list<strataResult_t> allowed, strataComm_t comm, From from,
                     const std::vector<const char*>& words) {
    step(what);
    const strataResult_t rc = call();
    std::string message;
    if (from != From::kThread) {
      const char* m = strataGetLastError(comm);  // for a stale handle: must not crash either
      if (m != nullptr) message = m;
    }
    if (message.empty() && from != From::kComm) {
      const char* m = strataGetLastError(nullptr);
      if (m != nullptr) message = m;
    }
    std::string names;
    for (strataResult_t a : allowed) names += (names.empty() ? "" : " or ") + codeName(a);
    expect(std::find(allowed.begin(), allowed.end(), rc) != allowed.end(),
           what + ": returned " + codeName(rc) + ", expected " + names);
    if (!expect(!message.empty(), what + ": strataGetLastError is empty after the error")) return;
    const std::string text = lower(message);
    std::string list;
    bool found = false;
    for (const char* w : words) {
      found = found || text.find(lower(w)) != std::string::npos;
      list += std::string(list.empty() ? "" : ", ") + "'" + w + "'";
    }
    expect(found, what + ": message \"" + message + "\" mentions none of " + list);
  }

  int checks() const { return checks_; }
  int failures() const { return failures_; }

 private:
  int rank_;
  strata::test::Watchdog& watchdog_;
  int checks_ = 0, failures_ = 0;
};

// A correct int32 sum all-reduce on `comm` succeeds with the right result.
inline void expectCommWorks(Checker& ck, strataComm_t comm, int nranks, const std::string& after) {
  ck.step("a correct allreduce after " + after);
  int32_t send[5], recv[5] = {};
  for (int i = 0; i < 5; ++i) send[i] = i + 1;
  const strataResult_t rc = strataAllReduce(send, recv, 5, strataInt32, strataSum, comm, nullptr);
  bool right = rc == strataSuccess;
  for (int i = 0; i < 5 && right; ++i) right = recv[i] == (i + 1) * nranks;
  ck.expect(right, "a correct allreduce after " + after + " returned " + codeName(rc) +
                       " with recv[0] = " + std::to_string(recv[0]) + " (expected " +
                       std::to_string(nranks) + "): " + strataGetLastError(comm));
}

// The checks of the calls added with groups, point-to-point, split and requests
// (api_errors_calls.cc): roots and peers out of range, request handles, split colors and
// configs, groups, on `comm` (which works afterwards).
void checkCallErrors(Checker& ck, strataComm_t comm, int nranks);

// Calls that take a communicator, on one that was destroyed or aborted (`stale`): broadcast,
// reduce, send, recv, a nonblocking call, split and describe.
void checkStaleCalls(Checker& ck, strataComm_t stale, const std::string& how);

// strataCommAbort on one rank returns while the others have not called it, even with a call
// queued on it that its peers never issue.
void checkAbortIsLocal(Checker& ck, int rank, int nranks);

// strataGroupEnd without strataGroupStart (and one End too many after a group).
void checkGroupEndWithoutStart(Checker& ck);

}  // namespace strata_test
