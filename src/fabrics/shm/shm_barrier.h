// A barrier for the ranks of one host, in memory they share (the shm fabric's only
// synchronisation; MPI is not called on the fast path).
//
// Protocol (an arrival epoch per member): each member counts its barriers; at its k-th it
// publishes k in its own line (release) and waits until every member's epoch is at least k
// (acquire). Epochs only grow (64 bits never wrap), so a member that already left barrier k
// and arrived at k+1 still counts as arrived at k. Everything a member wrote before arriving is
// visible to every member after it leaves. Because each member owns its line, a waiter that
// runs out of time knows exactly which members had not arrived: those whose epoch is below k.
//
// With its epoch, a member publishes the call it is in (ShmCall), in one of two entries chosen
// by the epoch's parity: entry k % 2 is rewritten only at barrier k + 2, which no member
// reaches before every member has left barrier k + 1, i.e. finished reading entry k % 2 after
// barrier k. So after a barrier every member can compare every member's call with its own and
// all of them see the same mismatch at the same barrier: a mismatch fails every member, never
// gives a silent wrong answer.
//
// Waiting spins briefly and then yields the core, and yields at once where the ranks outnumber
// the cores (oversubscribed test machines; common/spin.h): a spinning waiter would steal the
// time the rank it waits for needs. IdleHook::idle() runs while waiting (the dispatcher's pipeline
// progresses the inter-host allreduce in flight there). The wait ends at the thread's deadline
// (common/deadline.h).
#pragma once

#include <sched.h>

#include <atomic>
#include <cstdint>
#include <string>

#include "common/deadline.h"
#include "common/spin.h"
#include "fabrics/fabric.h"

namespace strata::fabric {

// What a member is doing at a barrier: enough to tell two members' calls apart.
struct ShmCall {
  uint32_t kind = 0;   // the fabric operation (ShmFabric's numbering)
  uint32_t type = 0;   // strataDataType_t
  uint32_t op = 0;     // strataRedOp_t (0 when none)
  int32_t root = -1;   // rooted operations; -1 when none
  uint64_t count = 0;  // elements of the whole call (or of the member's range)
  uint64_t shape = 0;  // a hash of the per-member counts (reduce-scatter, all-gather)
  bool operator==(const ShmCall& o) const {
    return kind == o.kind && type == o.type && op == o.op && root == o.root && count == o.count &&
           shape == o.shape;
  }
  bool operator!=(const ShmCall& o) const { return !(*this == o); }
};

// One member's part of the shared header: its epoch alone on one cache line (the others poll
// it), its calls on the next. Two lines, so no two members ever write one line.
struct alignas(64) ShmMemberLine {
  std::atomic<uint64_t> epoch{0};
  char pad[64 - sizeof(std::atomic<uint64_t>)];
  ShmCall call[2];
};
static_assert(sizeof(ShmMemberLine) == 128, "one line for the epoch, one for the calls");
static_assert(sizeof(ShmCall) * 2 <= 64, "a member's calls fit one line");

// Arrives at barrier `epoch` (1, 2, ...) as member `me` of `members`, publishing `call`, and
// waits for every member. On expiry of the thread's deadline returns strataRemoteError naming
// the members that had not arrived. `lines` is the shared array of every member's line.
inline Status shmBarrier(ShmMemberLine* lines, int members, int me, uint64_t epoch,
                         const ShmCall& call) {
  lines[me].call[epoch & 1] = call;
  lines[me].epoch.store(epoch, std::memory_order_release);
  deadline::Poll poll;
  const unsigned spinLimit = spin::pollsBeforeYield(64);
  for (int j = 0; j < members; ++j) {
    for (unsigned spins = 0; lines[j].epoch.load(std::memory_order_acquire) < epoch; ++spins) {
      IdleHook::idle();
      if (spins < spinLimit) {
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
        if (!poll.expired()) continue;
      } else {
        sched_yield();
        if (!poll.expiredNow()) continue;
      }
      std::string missing;
      int n = 0;
      for (int m = 0; m < members; ++m) {
        if (lines[m].epoch.load(std::memory_order_acquire) >= epoch) continue;
        missing += (n++ == 0 ? "" : ", ") + std::to_string(m);
      }
      return deadline::expiredError("waiting in the shm fabric's barrier " + std::to_string(epoch) +
                                    " (member " + std::to_string(me) + " of " +
                                    std::to_string(members) + "): member" + (n == 1 ? " " : "s ") +
                                    missing + (n == 1 ? " has" : " have") + " not arrived");
    }
  }
  return Status::ok();
}

// After barrier `epoch`: the first member whose call differs from `mine`, or -1.
inline int shmFirstDiffering(const ShmMemberLine* lines, int members, uint64_t epoch,
                             const ShmCall& mine) {
  for (int j = 0; j < members; ++j) {
    if (lines[j].call[epoch & 1] != mine) return j;
  }
  return -1;
}

}  // namespace strata::fabric
