// Dumping every communicator's flight recorder on a signal (STRATA_FLIGHT_RECORDER_SIGNAL), for
// a job that hangs with no timeout to end its calls: `kill -USR1 <pid>` on each rank, then
// `strata-trace hang` over the dumps.
//
// Protocol: the first communicator made with the setting installs the handler (sigaction,
// SA_RESTART) and starts one dumping thread for the process. The handler only writes one byte
// to a pipe (write(2) is async-signal-safe); the thread reads the pipe and, for each byte, dumps
// every registered communicator (core/flight_dump.h). Communicators register at init and
// unregister first thing in their destructor; the thread dumps under the registry's lock, so a
// communicator is never destroyed while it is being dumped. The handler and the thread stay for
// the life of the process.
//
// A requested dump is never lost to a prompt exit: the handler counts requests; a
// communicator destroyed while one is pending dumps itself first, and an atexit handler
// answers a pending request (waiting up to 10 s for a dump in progress) before the process
// ends. Like any handled signal, it interrupts a blocking system call of the thread it lands
// on: C's sleep() returns early (Python's time.sleep resumes by itself); SA_RESTART restarts
// reads and writes.
#pragma once

#include <string>

#include "common/status.h"
#include "core/settings.h"

namespace strata::core {

class Comm;

// Registers `c` to be dumped on `signo` (installing the handler and starting the thread on the
// first call). A process takes one signal: a second, different one is refused.
Status watchDumpSignal(Comm& c, int signo);
// Unregisters `c`; returns once no dump of it is running. Safe for a communicator never
// registered.
void unwatchDumpSignal(Comm& c);

}  // namespace strata::core
