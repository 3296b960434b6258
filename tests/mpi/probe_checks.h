// strataIprobe, and a receive from any source built on it the way strata.h says (probe until a
// message waits, then strataRecv from the sender it names): every other rank sends two
// messages of lengths that name their sender, and one sends a large one too (the transports'
// rendezvous path); the receiver takes them in an order nobody fixed and checks each sender,
// length and value, that each sender's messages came in the order they were sent, and that
// nothing is left. A probe for one peer sees only that peer's message. Then the argument errors.
// Used by test_p2p_groups.cc, on a communicator with an MPI twin (for the barriers).
#pragma once

#include <mpi.h>

#include <cstdint>
#include <string>
#include <vector>

#include "mpi/collective_reference.h"
#include "mpi/mpi_harness.h"
#include "strata/strata.h"

namespace strata_test {

namespace probe_detail {

constexpr size_t kLarge = 300000;  // int32s: past every transport's eager limit

// The k-th message rank `from` sends: its length and its i-th value.
inline size_t lengthOf(int from, int k) {
  return k == 0 ? size_t(from + 1) * 7 : k == 1 ? 3 : kLarge;
}
inline int32_t valueOf(int from, int k, size_t i) {
  return from * 1000003 + k * 100000 + static_cast<int32_t>(i % 99991);
}
inline int messagesFrom(int from, int size) { return from == size - 1 ? 3 : 2; }

// Polls until a message from `peer` (or any) waits; false (and a failure) after 20 s.
inline bool waitProbe(Verdict& v, const Comm& cm, int peer, int* source, size_t* bytes) {
  const double until = MPI_Wtime() + 20;
  int flag = 0;
  while (MPI_Wtime() < until) {
    if (!checkResult(v, strataIprobe(peer, cm.comm, &flag, source, bytes), cm.comm)) return false;
    if (flag == 1) return true;
  }
  v.fail("no message arrived within 20 s (peer " + std::to_string(peer) + ")");
  return false;
}

inline void expectNothing(Verdict& v, const Comm& cm, int peer, const std::string& when) {
  int flag = -1, source = 7;
  size_t bytes = 7;
  if (!checkResult(v, strataIprobe(peer, cm.comm, &flag, &source, &bytes), cm.comm)) return;
  if (flag != 0 || source != -1 || bytes != 0) {
    v.fail(when + ": strataIprobe(" + std::to_string(peer) + ") gave flag " + std::to_string(flag) +
           " source " + std::to_string(source) + " bytes " + std::to_string(bytes) +
           ", expected 0, -1, 0");
  }
}

// The receiver's side of checkAnySource.
inline void receiveAny(Verdict& v, const Comm& cm) {
  std::vector<int> taken(cm.size, 0);
  int total = 0;
  for (int j = 0; j < cm.size; ++j) total += j == cm.rank ? 0 : messagesFrom(j, cm.size);
  for (int m = 0; m < total; ++m) {
    int from = -1;
    size_t bytes = 0;
    if (!waitProbe(v, cm, STRATA_ANY_SOURCE, &from, &bytes)) return;
    if (from < 0 || from >= cm.size || from == cm.rank ||
        taken[from] >= messagesFrom(from, cm.size)) {
      v.fail("a probe named source " + std::to_string(from) + ", which has nothing to send");
      return;
    }
    const int k = taken[from]++;
    const size_t n = lengthOf(from, k);
    if (bytes != n * sizeof(int32_t)) {
      v.fail("message " + std::to_string(k) + " of rank " + std::to_string(from) + ": probe says " +
             std::to_string(bytes) + " bytes, it has " + std::to_string(n * sizeof(int32_t)));
    }
    std::vector<int32_t> got(n, -1);
    if (!checkResult(v, strataRecv(got.data(), n, strataInt32, from, cm.comm, nullptr), cm.comm)) {
      return;
    }
    for (size_t i = 0; i < n; ++i) {
      if (got[i] != valueOf(from, k, i)) {
        v.fail("message " + std::to_string(k) + " of rank " + std::to_string(from) +
               " differs at element " + std::to_string(i) + " (out of order, or wrong bytes)");
        break;
      }
    }
  }
  expectNothing(v, cm, STRATA_ANY_SOURCE, "after every message was received");
}

}  // namespace probe_detail

inline void checkAnySource(Harness& h, const Comm& cm, int dst) {
  using namespace probe_detail;
  const std::string name =
      "receive from any source at rank " + std::to_string(dst) + " on " + cm.name;
  h.step(name);
  Verdict v = h.verdict(name);
  // Nothing is sent before this barrier.
  if (cm.rank == dst) expectNothing(v, cm, STRATA_ANY_SOURCE, "before any send");
  MPI_Barrier(cm.mpi);
  if (cm.rank == dst) {
    receiveAny(v, cm);
  } else {
    for (int k = 0; k < messagesFrom(cm.rank, cm.size); ++k) {
      std::vector<int32_t> msg(lengthOf(cm.rank, k));
      for (size_t i = 0; i < msg.size(); ++i) msg[i] = valueOf(cm.rank, k, i);
      checkResult(v, strataSend(msg.data(), msg.size(), strataInt32, dst, cm.comm, nullptr),
                  cm.comm);
    }
  }
  h.record(v);
}

// A probe for one peer: rank 0's message from the last rank waits, and a probe for any other
// rank (or of that rank before it sent) finds nothing.
inline void checkProbePeer(Harness& h, const Comm& cm) {
  using namespace probe_detail;
  const std::string name = "probing one peer on " + cm.name;
  h.step(name);
  Verdict v = h.verdict(name);
  const int last = cm.size - 1;
  if (cm.rank == 0) expectNothing(v, cm, last, "before the send");
  MPI_Barrier(cm.mpi);
  int32_t msg[5] = {1, 2, 3, 4, 5};
  if (cm.rank == last && last != 0) {
    checkResult(v, strataSend(msg, 5, strataInt32, 0, cm.comm, nullptr), cm.comm);
  } else if (cm.rank == 0 && last != 0) {
    int from = -1;
    size_t bytes = 0;
    if (waitProbe(v, cm, last, &from, &bytes)) {
      if (from != last || bytes != sizeof msg) {
        v.fail("probe of rank " + std::to_string(last) + " named rank " + std::to_string(from) +
               " and " + std::to_string(bytes) + " bytes");
      }
      for (int j = 1; j < last; ++j) expectNothing(v, cm, j, "while only the last rank sent");
      int32_t got[5] = {};
      checkResult(v, strataRecv(got, 5, strataInt32, last, cm.comm, nullptr), cm.comm);
      if (got[4] != 5) v.fail("the probed message's bytes differ");
    }
  }
  h.record(v);
}

inline void checkProbeErrors(Harness& h, const Comm& cm) {
  const std::string name = "strataIprobe argument errors on " + cm.name;
  h.step(name);
  Verdict v = h.verdict(name);
  int flag = 0, source = 0;
  size_t bytes = 0;
  auto expect = [&](strataResult_t rc, strataResult_t want, const std::string& what,
                    strataComm_t of) {
    if (rc != want) {
      v.fail(what + " returned " + std::to_string(rc) + ", not " + std::to_string(want));
    } else if (std::string(strataGetLastError(of)).empty()) {
      v.fail(what + ": strataGetLastError is empty");
    }
  };
  expect(strataIprobe(STRATA_ANY_SOURCE, cm.comm, nullptr, &source, &bytes), strataInvalidArgument,
         "flag NULL", cm.comm);
  expect(strataIprobe(cm.size, cm.comm, &flag, &source, &bytes), strataInvalidArgument,
         "peer = nranks", cm.comm);
  expect(strataIprobe(-2, cm.comm, &flag, &source, &bytes), strataInvalidArgument, "peer -2",
         cm.comm);
  expect(strataIprobe(0, nullptr, &flag, &source, &bytes), strataInvalidArgument, "comm NULL",
         nullptr);
  checkResult(v, strataGroupStart(), nullptr);
  expect(strataIprobe(STRATA_ANY_SOURCE, cm.comm, &flag, &source, &bytes), strataInvalidUsage,
         "inside a group", cm.comm);
  checkResult(v, strataGroupEnd(), nullptr);
  h.record(v);
}

inline void runProbes(Harness& h, const Comm& cm) {
  checkAnySource(h, cm, 0);
  checkAnySource(h, cm, cm.size - 1);
  checkProbePeer(h, cm);
  checkProbeErrors(h, cm);
  checkAnySource(h, cm, cm.size / 2);  // the communicator still works
}

}  // namespace strata_test
