#include "common/spin.h"

#include <sched.h>
#include <unistd.h>

#include <atomic>

namespace strata::spin {
namespace {

std::atomic<bool> gOversubscribed{false};

int affinityCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (sched_getaffinity(0, sizeof(set), &set) != 0) return 0;
  return CPU_COUNT(&set);
}

}  // namespace

unsigned pollsBeforeYield(unsigned normal) {
  return gOversubscribed.load(std::memory_order_relaxed) ? 0 : normal;
}

bool oversubscribes(int ranksOnMachine) {
  const long online = sysconf(_SC_NPROCESSORS_ONLN);
  if (online > 0 && ranksOnMachine > online) return true;
  const int mine = affinityCpus();
  return mine > 1 && ranksOnMachine > mine;
}

bool noteRanksOnMachine(int ranksOnMachine) {
  if (oversubscribes(ranksOnMachine)) gOversubscribed.store(true, std::memory_order_relaxed);
  return gOversubscribed.load(std::memory_order_relaxed);
}

void resetForTesting() { gOversubscribed.store(false, std::memory_order_relaxed); }

}  // namespace strata::spin
