// The handles behind strataComm_t. A handle is not the address of anything: it encodes a slot of
// a process-wide table and the slot's generation, so a handle kept after strataCommDestroy (or
// strataCommAbort) is refused even when the next communicator reuses the slot, or the memory,
// of the destroyed one (an address-based check accepted such a stale handle as live).
//
// Invariants: a handle value is odd, so it never equals a real object's address, and never
// NULL; a slot's generation changes every time its communicator is released, so each value
// names at most one communicator over the life of the process (until a slot's 32-bit
// generation wraps: after 2^32 releases of that one slot).
#pragma once

#include <atomic>
#include <memory>
#include <mutex>
#include <thread>
#include <string>

#include "common/deadline.h"
#include "core/comm.h"
#include "strata/strata.h"

namespace strata::api {

// A nonblocking init (strataCommInitRankConfig with config->blocking = 0) while its thread
// runs. The thread writes `done`, `status` and `comm` under `mu`; the user's thread reads them
// under `mu` and joins the thread once `done` (liveComm, strataCommDestroy/Abort).
struct PendingInit {
  std::mutex mu;
  bool done = false;
  Status status;
  std::unique_ptr<core::Comm> comm;
  deadline::Cancel cancel;  // strataCommAbort/Destroy: the init's waits end at once
  std::thread thread;
};

// What the C API keeps per communicator.
struct CommEntry {
  std::unique_ptr<core::Comm> impl;  // null while a nonblocking init runs or after it failed
  std::string lastError;             // strataGetLastError(comm)
  bool usesMpi = true;  // made from MPI: its calls need MPI to be active (not finalised)
  std::unique_ptr<PendingInit> pending;  // a nonblocking init not yet taken over
  Status initError;  // why the nonblocking init failed (then impl stays null)
  // Ends a nonblocking init (cancelling it when `cancel`) and joins its thread: after this
  // `pending` is null, and `impl` holds the communicator when the init succeeded, else the
  // failure is returned.
  Status finishInit(bool cancel);
};

// Takes ownership of `entry` and returns its new handle.
strataComm_t registerComm(std::unique_ptr<CommEntry> entry);
// Removes `handle` from the table and returns its entry (null when it was not live): the caller
// destroys it outside the table's lock.
std::unique_ptr<CommEntry> unregisterComm(strataComm_t handle);
// The entry behind a live handle; null for NULL, stale and made-up handles. The entry stays
// valid until the handle is unregistered (by strataCommDestroy/strataCommAbort, which the
// application must not call concurrently with other calls on the same communicator).
CommEntry* lookupComm(strataComm_t handle);

}  // namespace strata::api
