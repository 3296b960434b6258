#include <sched.h>
#include <unistd.h>

#include <catch2/catch.hpp>

#include "common/spin.h"

using strata::spin::noteRanksOnMachine;
using strata::spin::oversubscribes;
using strata::spin::pollsBeforeYield;
using strata::spin::resetForTesting;

namespace {

int affinityCpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  REQUIRE(sched_getaffinity(0, sizeof(set), &set) == 0);
  return CPU_COUNT(&set);
}

}  // namespace

TEST_CASE("spin: more ranks on the machine than its online CPUs oversubscribe it", "[spin]") {
  const int online = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  REQUIRE(online > 0);
  CHECK(oversubscribes(online + 1));
  CHECK(oversubscribes(4 * online));
  CHECK_FALSE(oversubscribes(1));
  // As many ranks as the CPUs this process may use fit, whatever that set is.
  CHECK_FALSE(oversubscribes(affinityCpus()));
}

TEST_CASE("spin: a process bound to one CPU is not taken as oversubscribed by its peers",
          "[spin]") {
  const int online = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  if (online < 2) {
    WARN("one online CPU: a rank bound to it cannot be told apart; nothing to check");
    return;
  }
  cpu_set_t saved;
  CPU_ZERO(&saved);
  REQUIRE(sched_getaffinity(0, sizeof(saved), &saved) == 0);
  cpu_set_t one;
  CPU_ZERO(&one);
  int first = 0;
  while (!CPU_ISSET(first, &saved)) ++first;
  CPU_SET(first, &one);
  REQUIRE(sched_setaffinity(0, sizeof(one), &one) == 0);
  // mpirun --bind-to core: each of `online` ranks has one CPU of its own.
  const bool bound = oversubscribes(online);
  const bool over = oversubscribes(online + 1);
  REQUIRE(sched_setaffinity(0, sizeof(saved), &saved) == 0);
  CHECK_FALSE(bound);
  CHECK(over);
}

TEST_CASE("spin: waits yield at once once a communicator found the machine oversubscribed",
          "[spin]") {
  resetForTesting();
  CHECK(pollsBeforeYield(64) == 64);
  CHECK_FALSE(noteRanksOnMachine(1));
  CHECK(pollsBeforeYield(256) == 256);
  const int online = static_cast<int>(sysconf(_SC_NPROCESSORS_ONLN));
  CHECK(noteRanksOnMachine(online + 1));
  CHECK(pollsBeforeYield(64) == 0);
  // Sticky: a later communicator with few ranks here does not undo it.
  CHECK(noteRanksOnMachine(1));
  CHECK(pollsBeforeYield(64) == 0);
  resetForTesting();
  CHECK(pollsBeforeYield(64) == 64);
}
