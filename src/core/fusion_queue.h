// Lazy allreduce for nonblocking calls outside groups (STRATA_FUSION_WAIT_US): a queued
// allreduce waits a moment for company, then runs in one pack with the allreduces of its type
// and op queued right behind it, up to STRATA_FUSION_BYTES (core/fusion.h's rule).
//
// Why an agreement: inside a group the call sequence alone cuts the packs (fusion.h). Outside
// one, where a pack ends is a matter of time (how many calls a rank had issued when its pack
// was due), and timing differs between ranks. So the ranks agree: before running a pack, each
// rank proposes how many calls it could put in it (its run of fusable calls queued so far, from
// the pack's first call), and one small allreduce takes the minimum. Every rank's run is a
// prefix of the same call sequence, so the minimum is a pack every rank can form, and every rank
// forms exactly that one. This is Horovod's negotiation, done once per pack. Timing decides how
// large packs are, never whether ranks agree on them.
//
// Invariants:
// - Which calls take part is a property of the sequence: a nonblocking host allreduce of
//   count > 0 and fewer than STRATA_FUSION_BYTES bytes, on a communicator of more than one rank,
//   with STRATA_FUSION_WAIT_US > 0. Each such call runs the agreement when it heads a pack; the
//   calls already taken into an earlier pack do nothing. So every rank runs the same agreements
//   in the same order.
// - A run (the calls that may share a pack) holds consecutive fusable calls of one type and op;
//   any other call issued on the communicator ends it (cut()), so packs never reorder calls.
// - A pack waits for company only while nobody waits for one of its calls (strataWait,
//   strataTest, a blocking call or destroy: Engine::urgentUpTo) and no more calls can join.
#pragma once

#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>

#include "common/status.h"
#include "core/engine.h"
#include "core/lower.h"
#include "core/run.h"

namespace strata::core {

class PlanBook;

// What a pack's run reads besides its RunContext: the limits, whether anyone waits for a call
// (Engine::urgentUpTo), and what lowering a pack agreed at run time needs (core/prepare.h:
// fusionPackProgram): the fusion plans made beforehand and the lowering context.
struct PackContext {
  size_t fusionBytes = 0;  // STRATA_FUSION_BYTES
  int fusionWaitUs = 0;    // STRATA_FUSION_WAIT_US
  const Engine* engine = nullptr;
  const PlanBook* plans = nullptr;
  LowerContext lower;
};

class FusionQueue {
 public:
  // Issuing thread. Adds a fusable call (prepared alone, for a pack of one) queued as engine
  // ticket `ticket`; returns its id for run().
  uint64_t add(Prepared alone, uint64_t ticket);
  // Issuing thread: a call that is not fusable was issued: no later call joins an earlier one.
  void cut();
  // The runner, under the call's deadline: runs call `id` and the calls agreed to share its
  // pack, unless an earlier pack already ran it.
  Status run(RunContext& rc, const PackContext& pc, uint64_t id);

 private:
  using Clock = std::chrono::steady_clock;
  struct Entry {
    Prepared alone;
    uint64_t ticket = 0;
    uint64_t run = 0;  // which run it belongs to (cut() starts a new one)
    Clock::time_point issued;
    bool done = false;
  };
  // With mutex_ held: the calls from `id` this rank could pack now, and whether more could
  // still join (false: the run is cut, or the next call does not fit).
  size_t proposal(uint64_t id, size_t thetaBytes, bool* open) const;
  Entry& at(uint64_t id) { return entries_[id - first_]; }
  // Calls id .. id+n-1 ran (or failed) in one pack: none runs again.
  void markDone(uint64_t id, uint64_t n);

  mutable std::mutex mutex_;
  std::condition_variable added_;  // a call was added or the run cut
  std::deque<Entry> entries_;      // ids first_, first_ + 1, ...
  uint64_t first_ = 1, run_ = 0;
};

}  // namespace strata::core
