// MPI fault test: ranks that disagree. The last rank issues a different call from the others
// (count, type, op, root, collective, a skipped call; blocking, nonblocking and in a group).
//
//   STRATA_CHECK=1 mpiexec -n 4 strata_mpi_mismatch
//       every rank must return strataInvalidUsage, with a message naming rank 0's call and the
//       last rank's (the first that differs from rank 0's); a case where all ranks agree must
//       succeed with the right result (the check must not cry wolf);
//   STRATA_TIMEOUT=2 mpiexec -n 4 strata_mpi_mismatch --no-check
//       the same cases without STRATA_CHECK: every rank must return an error (strataRemoteError
//       or strataInvalidUsage) within STRATA_TIMEOUT plus a slack, except where strata cannot
//       tell (ranks that pass different reduction ops to an MPI reduction compute garbage
//       without any sign of it: only STRATA_CHECK catches that); those must still return.
//       Needs STRATA_TIMEOUT (else a hang would be the expected outcome): it refuses to run
//       without it;
//   STRATA_CHECK=2 mpiexec -n 4 strata_mpi_mismatch
//       the same, with call sites compared too, plus one case only they catch: every rank makes
//       two allreduces of the same shape from two places in the program, and the last rank
//       skips the first (with STRATA_CHECK=1 its second pairs silently with the others' first);
//   mpiexec ... strata_mpi_mismatch --expect-init-failure TEXT
//       strataCommInitMPI must fail on every rank with strataInvalidUsage and a message holding
//       TEXT (a setting or topology file that differs between ranks, set per rank by the
//       launcher: env_on_rank.sh);
//   mpiexec ... strata_mpi_mismatch --expect-init-success
//       init succeeds and an allreduce is right (identical content at different paths).
//
// Each case runs on a fresh communicator: made, used for the case, then destroyed (with
// STRATA_CHECK every rank failed at the same comparison and nothing moved, so the communicator
// is still usable: an agreeing allreduce must then succeed, and the collective destroy is safe)
// or aborted (--no-check: ranks may have failed at different points).
#include <mpi.h>

#include <cstdlib>
#include <cstring>
#include <functional>
#include <string>
#include <vector>

#include "mpi/mpi_harness.h"
#include "strata/strata_mpi.h"

namespace {

using strata_test::Harness;
using strata_test::initComm;

// Room for the largest case: a reduce-scatter of 200 float64 per rank on up to 16 ranks.
constexpr size_t kElems = 200 * 16;

struct Buffers {
  std::vector<double> send = std::vector<double>(kElems, 1.0);
  std::vector<double> recv = std::vector<double>(kElems, 0.0);
};

// One case: what rank 0 and the odd rank (the last) call, and how each issues its calls.
struct Case {
  std::string name;
  std::string rank0Call;  // as the message must show it
  std::string oddCall;
  // Issues this rank's calls; returns the first error.
  std::function<strataResult_t(strataComm_t, bool odd, Buffers&)> issue;
  bool detectableWithoutCheck = true;
};

strataResult_t allReduce(strataComm_t c, Buffers& b, size_t n, strataDataType_t t,
                         strataRedOp_t op) {
  return strataAllReduce(b.send.data(), b.recv.data(), n, t, op, c, nullptr);
}

// Two places in the program that make the same call. The site is the direct caller of
// strataAllReduce (so not allReduce() above, which both would share). noipa: GCC would merge
// the two identical functions into one (identical code folding); the empty asm after the call
// keeps it a call, not a tail jump whose return address would be our caller's.
__attribute__((noipa)) strataResult_t firstAllReduce(strataComm_t c, Buffers& b) {
  const strataResult_t rc =
      strataAllReduce(b.send.data(), b.recv.data(), 64, strataFloat32, strataSum, c, nullptr);
  asm volatile("" ::: "memory");
  return rc;
}
__attribute__((noipa)) strataResult_t secondAllReduce(strataComm_t c, Buffers& b) {
  const strataResult_t rc =
      strataAllReduce(b.send.data(), b.recv.data(), 64, strataFloat32, strataSum, c, nullptr);
  asm volatile("" ::: "memory");
  return rc;
}

std::vector<Case> cases(int nranks, bool sites) {
  const std::string last = std::to_string(nranks - 1);
  std::vector<Case> out;
  out.push_back({"count", "allreduce #1 count 100 float32 sum",
                 "allreduce #1 count 200 float32 sum", [](strataComm_t c, bool odd, Buffers& b) {
                   return allReduce(c, b, odd ? 200 : 100, strataFloat32, strataSum);
                 }});
  out.push_back({"type", "allreduce #1 count 300 float32 sum", "allreduce #1 count 300 float64 sum",
                 [](strataComm_t c, bool odd, Buffers& b) {
                   return allReduce(c, b, 300, odd ? strataFloat64 : strataFloat32, strataSum);
                 }});
  out.push_back({"op", "allreduce #1 count 64 int32 sum", "allreduce #1 count 64 int32 max",
                 [](strataComm_t c, bool odd, Buffers& b) {
                   return allReduce(c, b, 64, strataInt32, odd ? strataMax : strataSum);
                 },
                 false});
  out.push_back({"root", "broadcast #1 count 64 float32 root 0",
                 "broadcast #1 count 64 float32 root " + last,
                 [nranks](strataComm_t c, bool odd, Buffers& b) {
                   return strataBroadcast(b.send.data(), b.recv.data(), 64, strataFloat32,
                                          odd ? nranks - 1 : 0, c, nullptr);
                 },
                 // Detected by the shm fabric among ranks of one host; across hosts a rank
                 // whose host took root 0 gets root 0's data, as its own call asked.
                 false});
  out.push_back({"collective", "allreduce #1 count 64 float32 sum",
                 "broadcast #1 count 64 float32 root 0", [](strataComm_t c, bool odd, Buffers& b) {
                   if (!odd) return allReduce(c, b, 64, strataFloat32, strataSum);
                   return strataBroadcast(b.send.data(), b.recv.data(), 64, strataFloat32, 0, c,
                                          nullptr);
                 }});
  // The last rank skips the allreduce the others make first: its broadcast meets their
  // allreduce as the communicator's first collective.
  out.push_back({"skipped-call", "allreduce #1 count 64 float32 sum",
                 "broadcast #1 count 64 float32 root 0", [](strataComm_t c, bool odd, Buffers& b) {
                   if (!odd) {
                     const strataResult_t rc = allReduce(c, b, 64, strataFloat32, strataSum);
                     if (rc != strataSuccess) return rc;
                   }
                   return strataBroadcast(b.send.data(), b.recv.data(), 64, strataFloat32, 0, c,
                                          nullptr);
                 }});
  out.push_back({"reducescatter-count", "reducescatter #1 count 100 float64 sum",
                 "reducescatter #1 count 200 float64 sum",
                 [](strataComm_t c, bool odd, Buffers& b) {
                   return strataReduceScatter(b.send.data(), b.recv.data(), odd ? 200 : 100,
                                              strataFloat64, strataSum, c, nullptr);
                 }});
  out.push_back({"allgather-type", "allgather #1 count 50 int32", "allgather #1 count 50 int64",
                 [](strataComm_t c, bool odd, Buffers& b) {
                   return strataAllGather(b.send.data(), b.recv.data(), 50,
                                          odd ? strataInt64 : strataInt32, c, nullptr);
                 },
                 // Over MPI (MPI_Iallgatherv) the int64 rank receives shorter messages than it
                 // posted, which MPI does not report: only STRATA_CHECK catches it
                 // (docs/errors.md).
                 false});
  out.push_back({"reduce-root", "reduce #1 count 10 float32 sum root 0",
                 "reduce #1 count 10 float32 sum root " + last,
                 [nranks](strataComm_t c, bool odd, Buffers& b) {
                   return strataReduce(b.send.data(), b.recv.data(), 10, strataFloat32, strataSum,
                                       odd ? nranks - 1 : 0, c, nullptr);
                 },
                 // A rank that is the root in neither call only sends and has no result; the
                 // two roots fail (invalid usage or the timeout).
                 false});
  out.push_back({"nonblocking-count", "allreduce #1 count 100 float32 sum",
                 "allreduce #1 count 200 float32 sum", [](strataComm_t c, bool odd, Buffers& b) {
                   strataRequest_t req = nullptr;
                   strataResult_t rc =
                       strataIAllReduce(b.send.data(), b.recv.data(), odd ? 200 : 100,
                                        strataFloat32, strataSum, c, &req);
                   if (rc != strataSuccess) return rc;
                   return strataWait(&req);
                 }});
  out.push_back({"group-count", "allreduce #1 count 100 float32 sum",
                 "allreduce #1 count 200 float32 sum", [](strataComm_t c, bool odd, Buffers& b) {
                   strataGroupStart();
                   (void)allReduce(c, b, odd ? 200 : 100, strataFloat32, strataSum);
                   return strataGroupEnd();
                 }});
  if (sites) {
    // Same shape, different places: only the call site tells them apart.
    out.push_back({"skipped-same-shape", "allreduce #1 count 64 float32 sum called from 0x",
                   "allreduce #1 count 64 float32 sum called from 0x",
                   [](strataComm_t c, bool odd, Buffers& b) {
                     if (!odd) {
                       const strataResult_t rc = firstAllReduce(c, b);
                       if (rc != strataSuccess) return rc;
                     }
                     return secondAllReduce(c, b);
                   }});
  }
  return out;
}

bool contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The error text a failed call left: on the communicator, or the thread's.
std::string lastError(strataComm_t comm) {
  return std::string(strataGetLastError(comm)) + " | " + strataGetLastError(nullptr);
}

double envSeconds(const char* name) {
  const char* v = std::getenv(name);
  return v != nullptr && *v != '\0' ? std::atof(v) : -1;
}

void runCase(Harness& h, const Case& k, bool check, double timeout) {
  const bool odd = h.rank() == h.size() - 1;
  h.step("case " + k.name);
  Buffers b;
  strataComm_t comm = nullptr;
  if (!h.expectSuccess(initComm(&comm, MPI_COMM_WORLD), k.name + ": init")) return;
  const double start = MPI_Wtime();
  const strataResult_t rc = k.issue(comm, odd, b);
  const double elapsed = MPI_Wtime() - start;
  const std::string msg = lastError(comm);
  const std::string what = k.name + (check ? "" : " (no check)");
  if (check) {
    h.expect(rc == strataInvalidUsage, what + ": expected strataInvalidUsage, got " +
                                           std::to_string(rc) + " (" + strataGetErrorString(rc) +
                                           "): " + msg);
    h.expect(contains(msg, "rank 0: " + k.rank0Call) &&
                 contains(msg, "rank " + std::to_string(h.size() - 1) + ": " + k.oddCall),
             what + ": the message must name 'rank 0: " + k.rank0Call + "' and 'rank " +
                 std::to_string(h.size() - 1) + ": " + k.oddCall + "'; it is: " + msg);
    // Nothing moved: the communicator is still usable, and its next call (the same on every
    // rank) is right.
    h.step("case " + k.name + ": an agreeing call after the mismatch");
    std::vector<int> in(17, h.rank() + 1), out(17, 0);
    const strataResult_t after =
        strataAllReduce(in.data(), out.data(), in.size(), strataInt32, strataSum, comm, nullptr);
    h.expect(after == strataSuccess && out[0] == h.size() * (h.size() + 1) / 2 && out[16] == out[0],
             what + ": an agreeing allreduce after the mismatch returned " + std::to_string(after) +
                 " (" + strataGetErrorString(after) + "): " + strataGetLastError(comm));
    h.step("case " + k.name + ": destroy");
    h.expectSuccess(strataCommDestroy(comm), what + ": destroy");
    return;
  }
  if (k.detectableWithoutCheck || rc != strataSuccess) {
    h.expect(rc == strataRemoteError || rc == strataInvalidUsage,
             what + ": expected strataRemoteError or strataInvalidUsage, got " +
                 std::to_string(rc) + " (" + strataGetErrorString(rc) + "): " + msg);
  }
  const double slack = 3.0;
  h.expect(elapsed <= timeout + slack, what + ": returned after " + std::to_string(elapsed) +
                                           " s; STRATA_TIMEOUT is " + std::to_string(timeout) +
                                           " s");
  h.step("case " + k.name + ": abort");
  h.expectSuccess(strataCommAbort(comm), what + ": abort");
  // The ranks that saw the disagreement return at once, the others only at their timeout:
  // meet before the next case's init, or its setup would wait on ranks still in this case.
  h.step("case " + k.name + ": barrier");
  MPI_Barrier(MPI_COMM_WORLD);
}

// Every rank must fail init with strataInvalidUsage naming `text`; *comm stays null.
void expectInitFailure(Harness& h, const std::string& text) {
  h.step("init expected to fail");
  strataComm_t comm = nullptr;
  const strataResult_t rc = initComm(&comm, MPI_COMM_WORLD);
  const std::string msg = strataGetLastError(nullptr);
  h.expect(rc == strataInvalidUsage, "init: expected strataInvalidUsage, got " +
                                         std::to_string(rc) + " (" + strataGetErrorString(rc) +
                                         "): " + msg);
  h.expect(contains(msg, text), "init: the message must name '" + text + "'; it is: " + msg);
  h.expect(comm == nullptr, "init: *comm must stay unchanged on failure");
  // Every rank got the same code.
  int codes[2] = {static_cast<int>(rc), -static_cast<int>(rc)};
  MPI_Allreduce(MPI_IN_PLACE, codes, 2, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  h.expect(codes[0] == -codes[1], "init: every rank must return the same code");
  if (comm != nullptr) (void)strataCommAbort(comm);
}

void expectInitSuccess(Harness& h) {
  h.step("init expected to succeed");
  strataComm_t comm = nullptr;
  if (!h.expectSuccess(initComm(&comm, MPI_COMM_WORLD), "init")) return;
  std::vector<int> in(33, h.rank() + 1), out(33, 0);
  h.step("allreduce");
  h.expectSuccess(
      strataAllReduce(in.data(), out.data(), in.size(), strataInt32, strataSum, comm, nullptr),
      "allreduce", comm);
  const int want = h.size() * (h.size() + 1) / 2;
  bool right = true;
  for (int v : out) right = right && v == want;
  h.expect(right, "allreduce: every element must be " + std::to_string(want));
  h.expectSuccess(strataCommDestroy(comm), "destroy");
}

// With STRATA_CHECK, calls that agree pass the comparison and compute the right result, over
// several collectives in a row (the sequence numbers advance alike on every rank).
void agreeingCalls(Harness& h) {
  h.step("agreeing calls");
  strataComm_t comm = nullptr;
  if (!h.expectSuccess(initComm(&comm, MPI_COMM_WORLD), "agreeing calls: init")) return;
  const int n = h.size();
  std::vector<int> in(257, h.rank() + 1), out(257 * n, 0);
  for (int i = 0; i < 5; ++i) {
    h.expectSuccess(
        strataAllReduce(in.data(), out.data(), 257, strataInt32, strataSum, comm, nullptr),
        "agreeing allreduce", comm);
    h.expect(out[0] == n * (n + 1) / 2 && out[256] == n * (n + 1) / 2,
             "agreeing allreduce: wrong sum");
    h.expectSuccess(strataBroadcast(in.data(), out.data(), 257, strataInt32, n - 1, comm, nullptr),
                    "agreeing broadcast", comm);
    h.expect(out[0] == n && out[256] == n, "agreeing broadcast: wrong value");
    h.expectSuccess(strataAllGather(in.data(), out.data(), 257, strataInt32, comm, nullptr),
                    "agreeing allgather", comm);
    h.expect(out[0] == 1 && out[257 * n - 1] == n, "agreeing allgather: wrong blocks");
  }
  h.expectSuccess(strataCommDestroy(comm), "agreeing calls: destroy");
}

}  // namespace

int main(int argc, char** argv) {
  Harness h(argc, argv, "strata MPI test: ranks that disagree, with and without STRATA_CHECK");
  bool noCheck = false, initSuccess = false;
  std::string initFailure;
  h.app().add_flag("--no-check", noCheck,
                   "run the cases without STRATA_CHECK (needs STRATA_TIMEOUT): every rank must "
                   "still end in an error within the timeout");
  h.app().add_option("--expect-init-failure", initFailure,
                     "init must fail with strataInvalidUsage naming this text");
  h.app().add_flag("--expect-init-success", initSuccess, "init and one allreduce must succeed");
  if (!h.start(argc, argv)) return h.exitCode();

  if (!initFailure.empty()) {
    expectInitFailure(h, initFailure);
  } else if (initSuccess) {
    expectInitSuccess(h);
  } else if (h.size() < 2) {
    h.expect(false, "the mismatch cases need at least 2 ranks");
  } else if (noCheck) {
    const double timeout = envSeconds("STRATA_TIMEOUT");
    const double check = envSeconds("STRATA_CHECK");
    if (h.expect(timeout > 0 && check <= 0,
                 "--no-check needs STRATA_TIMEOUT > 0 and STRATA_CHECK unset or 0")) {
      for (const Case& k : cases(h.size(), false)) runCase(h, k, false, timeout);
    }
  } else {
    const double level = envSeconds("STRATA_CHECK");
    if (h.expect(level == 1 || level == 2, "run with STRATA_CHECK=1 or 2 (or --no-check)")) {
      agreeingCalls(h);
      for (const Case& k : cases(h.size(), level == 2)) runCase(h, k, true, 0);
    }
  }
  return h.finish();
}
