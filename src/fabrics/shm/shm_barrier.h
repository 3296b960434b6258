// A barrier for the ranks of one host, in memory they share (the shm fabric's only
// synchronisation; MPI is not called on the fast path).
//
// Protocol (sense by generation): a rank reads the generation, then counts itself in. The last
// to arrive resets the count and then advances the generation (release); the others wait for
// the generation to change (acquire). Because the count is reset before the generation moves,
// a rank that leaves early and arrives at the next barrier counts from zero. Everything a rank
// wrote before arriving is visible to every rank after it leaves (release/acquire on the
// generation, and on the count for the last arriver).
//
// Waiting spins briefly and then yields the core: the ranks of a job often outnumber the cores
// (oversubscribed test machines), and a spinning waiter would steal the time the rank it waits
// for needs. IdleHook::idle() runs while waiting (the dispatcher's pipeline progresses the
// inter-host allreduce in flight there).
#pragma once

#include <sched.h>

#include <atomic>
#include <cstdint>

#include "fabrics/fabric.h"

namespace strata::fabric {

struct alignas(64) ShmBarrierState {
  std::atomic<uint32_t> arrived{0};
  char pad[60];
  std::atomic<uint32_t> generation{0};
};

inline void shmBarrier(ShmBarrierState& s, int members) {
  const uint32_t gen = s.generation.load(std::memory_order_acquire);
  if (s.arrived.fetch_add(1, std::memory_order_acq_rel) == static_cast<uint32_t>(members) - 1) {
    s.arrived.store(0, std::memory_order_relaxed);
    s.generation.store(gen + 1, std::memory_order_release);
    return;
  }
  for (unsigned spins = 0; s.generation.load(std::memory_order_acquire) == gen; ++spins) {
    IdleHook::idle();
    if (spins < 64) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#endif
    } else {
      sched_yield();
    }
  }
}

}  // namespace strata::fabric
