// How long a waiter spins before it yields its core: the one policy of every wait that polls
// shared memory or a network engine (the shm fabric's barrier, the ucx link's waits).
//
// Spinning keeps a small call's latency when every rank has a core of its own: the peer's write
// lands within a few polls. When the ranks of a machine outnumber its cores (oversubscribed, as
// Open MPI's "yield when idle"), every spin steals the time of the rank being waited for: on 2
// cores with 8 ranks, 64 pauses per wake-up cost 5 us of a 19 us shm allreduce. So a waiter on
// an oversubscribed machine yields at once.
//
// Oversubscribed means: the ranks of one communicator on this machine (same kernel boot id, so
// ranks in other network namespaces of one machine count together) exceed the machine's
// online CPUs, or exceed the CPUs this process may run on when that set holds more than one
// (a cpuset shared by the job's ranks; a rank bound to one core is assumed to have it alone).
// A CPU quota (cgroup cpu.max) is not seen. Process-wide and sticky: set by the first
// communicator that finds it (core/init.cc), since every communicator of a process shares the
// same cores.
#pragma once

namespace strata::spin {

// Polls (or pauses) before the first yield: `normal`, or 0 on an oversubscribed machine.
unsigned pollsBeforeYield(unsigned normal);

// Whether `ranksOnMachine` ranks of one communicator oversubscribe this machine (see above).
bool oversubscribes(int ranksOnMachine);

// Records that a communicator has `ranksOnMachine` ranks here; returns whether waits now yield
// at once.
bool noteRanksOnMachine(int ranksOnMachine);

// Forgets the record (unit tests only).
void resetForTesting();

}  // namespace strata::spin
