// STRATA_CHECK: before each collective the ranks compare what they are about to call, so that
// ranks that disagree (count, type, op, root, collective, or one rank skipping a call) fail
// with strataInvalidUsage instead of hanging or computing garbage. PyTorch's
// TORCH_DISTRIBUTED_DEBUG=DETAIL does the same.
//
// Protocol, per collective, on every rank (the communicator's setting is agreed at init, so
// every rank runs it or none does):
//   1. drain the engine: the calls queued before run first, so the comparison never runs beside
//      them on the data plane, and no rank enters a setup collective that a peer skips;
//   2. one allreduce (max) of the pair (h, -h) of the call's 62-bit fingerprint h over the flat
//      group's host fabric: every rank then holds max(h) and -min(h), and the calls agree
//      exactly when max(h) == min(h);
//   3. only when they differ, an all-gather of every rank's full descriptor, so that every rank
//      builds the same message naming rank 0's call and the first rank whose call differs.
// The comparison happens before the call's setup (plans, groups), since a setup that one rank
// needs and another does not would itself hang.
//
// Point-to-point calls are not compared: only the two peers take part, so there is no
// communicator-wide point at which to compare them.
#pragma once

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "common/collective.h"
#include "common/status.h"

namespace strata::fabric {
class Fabric;
}

namespace strata::core {


// What a rank compares: the collective's number on the communicator and what it asks for. Op
// and root are -1 where the collective has none, so that an unused field never differs.
struct CallDescriptor {
  static constexpr int kNumFields = 7;

  int64_t seq = 0;  // 1 for the communicator's first collective
  int64_t coll = 0;
  int64_t count = 0;
  int64_t type = 0;
  int64_t op = -1;
  int64_t root = -1;
  // STRATA_CHECK=2: the call site, as the offset of the caller's return address in its module
  // (the same in every rank's copy of the same binary, whatever its load address); -1 unknown
  // or not compared.
  int64_t site = -1;

  static CallDescriptor of(const Call& call, uint64_t seq, bool withSite = false);
  // FNV-1a over the fields, cut to 62 bits so that its negation is a valid int64.
  int64_t fingerprint() const;
  // "allreduce #12 count 100 float32 sum", "broadcast #3 count 8 int32 root 1".
  std::string describe() const;

  bool operator==(const CallDescriptor& o) const;
  bool operator!=(const CallDescriptor& o) const { return !(*this == o); }
};

// The message of a mismatch, from every rank's descriptor in rank order: rank 0's call and the
// first rank's whose call differs. Empty when all agree.
std::string mismatchMessage(const std::vector<CallDescriptor>& all);

// The one numbering of a communicator's calls, on the issuing thread in issue order (which is
// the order calls run in). Every rank numbers its n-th collective n, so "allreduce #12" names
// the same call on every rank; sends and receives, which only two ranks take part in, are
// numbered apart, per rank ("send #3"), so that they never shift the collectives' numbers.
class CallSequence {
 public:
  uint64_t next() { return ++last_; }
  uint64_t last() const { return last_.load(); }
  // Gives `call` its number (Call::seq).
  void number(Call& call) { call.seq = pointToPoint(call.coll) ? ++pointToPoint_ : next(); }

 private:
  std::atomic<uint64_t> last_{0};
  uint64_t pointToPoint_ = 0;
};

// Step 2 and 3 above over `flat` (every rank of the communicator): ok when every rank passed
// an equal descriptor, else invalidUsage with mismatchMessage() on every rank. Collective.
Status compareCalls(fabric::Fabric& flat, const CallDescriptor& mine);


}  // namespace strata::core
