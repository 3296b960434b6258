// strata's drop-in for NCCL (libstrata_nccl.so, soname libnccl.so.2): NCCL's C API served by
// strata's public API, so that a program built against NCCL runs on strata unchanged
// (LD_PRELOAD, or found first as libnccl.so.2). What strata does not do is forwarded to the
// real NCCL (src/fabrics/nccl/nccl_lib.h), and STRATA_NCCL_FALLBACK forwards chosen
// collectives on purpose. README "Drop-in for NCCL" is the user's side of this.
#pragma once

#include <mpi.h>
#include <nccl.h>

#include <atomic>
#include <string>

#include "fabrics/nccl/nccl_lib.h"
#include "strata/strata_mpi.h"

// The communicator behind ncclComm_t.
struct ncclComm {
  strataComm_t strata = nullptr;  // strata's (null when the real NCCL serves it whole)
  ncclComm_t real = nullptr;      // the real NCCL's, when forwarding needs one
  int rank = 0, size = 0;
  std::atomic<bool> revoked{false};  // ncclCommRevoke was called (recovery.cc); any thread
};

namespace strata::nccl_dropin {

// The collectives STRATA_NCCL_FALLBACK names.
enum class Coll { kAllReduce, kReduceScatter, kAllGather, kBroadcast, kReduce, kSendRecv };

// Whether STRATA_NCCL_FALLBACK forwards `c` to the real NCCL ("all", "none" or a list such as
// "allreduce,broadcast"; read once). A malformed value forwards nothing and says so once.
bool fallbackFor(Coll c);
// Whether it forwards anything: communicators then also get a real NCCL communicator.
bool anyFallback();

// The real NCCL, or null (with the reason in *why) when none could be loaded.
const nccl_lib::Api* realNccl(std::string* why = nullptr);
// The real NCCL's function `name` (any of those it exports, nccl_exports.inc), or null with
// the reason in *why: no real NCCL, or it lacks the function (forward.cc).
void* realFunction(const char* name, std::string* why);

// Records `msg` as the calling thread's last error (ncclGetLastError(NULL)), prints it as NCCL
// prints a WARN (unless `print` is false), and returns `code`.
ncclResult_t fail(ncclResult_t code, const std::string& msg, bool print = true);
// strata's result as NCCL's (the values are equal); on failure records strata's message.
ncclResult_t fromStrata(strataResult_t r, strataComm_t comm, const char* fn);
// The calling thread's last drop-in error ("" when none).
const char* lastError();

// Once per process, at the first NCCL call: NCCL_DEBUG and NCCL_DEBUG_SUBSYS become strata's
// STRATA_DEBUG and STRATA_DEBUG_SUBSYS (unless those are set), and the INFO log says that
// strata serves the calls.
void announce();
// Whether NCCL_DEBUG (or STRATA_DEBUG) asks for INFO.
bool infoEnabled();

}  // namespace strata::nccl_dropin
