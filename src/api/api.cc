// The C boundary for communicators: creation, destruction, queries and errors. Every entry
// validates its arguments, calls into the library and turns Status into strataResult_t
// (api/guard.h).
#include <algorithm>
#include <cstddef>
#include <cstring>
#include <string>
#include <vector>

#include "api/group.h"
#include "api/guard.h"
#include "api/handle.h"
#include "bootstrap/mpi_bootstrap.h"
#include "common/env.h"
#include "common/log.h"
#include "common/wire.h"
#include "core/describe.h"
#include "core/flight_dump.h"
#include "strata/strata_mpi.h"

using namespace strata;       // NOLINT: the C entry points below are thin wrappers
using namespace strata::api;  // NOLINT

namespace {

// Whether `config` has the field at `offset` of `size` bytes: a caller built against older
// headers passes a smaller config->size.
bool configHas(const strataConfig_t* config, size_t offset, size_t size) {
  return config != nullptr && config->size >= offset + size;
}

// The split options a config sets (strata's extensions of ncclConfig_t).
StatusOr<core::Comm::SplitOptions> splitOptions(const strataConfig_t* config) {
  core::Comm::SplitOptions opts;
  if (configHas(config, offsetof(strataConfig_t, compress), sizeof(config->compress)) &&
      config->compress != nullptr) {
    WireType wire = WireType::kNone;
    if (!parseWireType(config->compress, &wire)) {
      return invalidArgument(std::string("config->compress \"") + config->compress +
                             "\": expected none, fp16 or bf16");
    }
    opts.compress = wire;
  }
  if (configHas(config, offsetof(strataConfig_t, timeoutMs), sizeof(config->timeoutMs))) {
    if (config->timeoutMs < 0) {
      return invalidArgument("config->timeoutMs " + std::to_string(config->timeoutMs) +
                             " is negative (0 keeps the parent's timeout)");
    }
    if (config->timeoutMs > 0) opts.timeoutSeconds = config->timeoutMs / 1000.0;
  }
  return opts;
}

}  // namespace

extern "C" {

strataResult_t strataGetVersion(int* version) {
  return guarded(nullptr, "strataGetVersion", [&] {
    if (version == nullptr) return invalidArgument("version is NULL");
    *version = STRATA_VERSION_CODE;
    return Status::ok();
  });
}

const char* strataGetErrorString(strataResult_t result) {
  // The message that says what went wrong is strataGetLastError's; it is also logged as a WARN
  // line, which WARN (the default) shows. Suggest STRATA_DEBUG=WARN only where the user set the
  // level below it (NONE, VERSION), so the hint is true either way.
  const bool warnShown = logEnabled(LogLevel::kWarn, kSubsysAll);
  auto hint = [warnShown](const char* shown, const char* hidden) {
    return warnShown ? shown : hidden;
  };
  switch (result) {
    case strataSuccess:
      return "no error";
    case strataUnhandledCudaError:
      return hint("unhandled cuda error (strataGetLastError says which call and why)",
                  "unhandled cuda error (strataGetLastError says which call and why; "
                  "STRATA_DEBUG=WARN logs it)");
    case strataSystemError:
      return hint("unhandled system error (strataGetLastError says which call and why)",
                  "unhandled system error (strataGetLastError says which call and why; "
                  "STRATA_DEBUG=WARN logs it)");
    case strataInternalError:
      return "internal error - please report this issue to the strata developers";
    case strataInvalidArgument:
      return hint("invalid argument (strataGetLastError says which)",
                  "invalid argument (strataGetLastError says which; STRATA_DEBUG=WARN logs it)");
    case strataInvalidUsage:
      return hint("invalid usage (strataGetLastError says why)",
                  "invalid usage (strataGetLastError says why; STRATA_DEBUG=WARN logs it)");
    case strataRemoteError:
      // NCCL's words ("remote process exited or there was a network error") misname the
      // commonest case, a timeout; the drop-in keeps NCCL's.
      return "a peer failed, exited or timed out, or there was a network error "
             "(strataGetLastError says which)";
    case strataInProgress:
      return "strata operation in progress";
    default:
      return "unknown result code";
  }
}

const char* strataGetLastError(strataComm_t comm) {
  if (CommEntry* entry = lookupComm(comm)) return entry->lastError.c_str();
  return threadLastError();
}

strataResult_t strataCommInitMPI(strataComm_t* comm, MPI_Comm mpicomm) {
  return guarded(nullptr, "strataCommInitMPI", [&]() -> Status {
    if (comm == nullptr) return invalidArgument("comm is NULL");
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (!initialized || finalized)
      return invalidUsage("MPI is not initialised (or already finalised)");
    if (mpicomm == MPI_COMM_NULL) return invalidArgument("mpicomm is MPI_COMM_NULL");
    int inter = 0;
    if (MPI_Comm_test_inter(mpicomm, &inter) != MPI_SUCCESS) {
      return invalidArgument("mpicomm is not a valid communicator");
    }
    if (inter) return invalidArgument("mpicomm is an intercommunicator");
    env::logUserSettings();
    int worldRank = 0;
    MPI_Comm_rank(mpicomm, &worldRank);
    if (worldRank == 0) logVersionOnce();  // first, as NCCL's version line is
    int threads = MPI_THREAD_SINGLE;
    MPI_Query_thread(&threads);
    STRATA_ASSIGN_OR_RETURN(std::unique_ptr<boot::MpiBootstrap> boot,
                            boot::MpiBootstrap::duplicate(mpicomm));
    auto entry = std::make_unique<CommEntry>();
    STRATA_ASSIGN_OR_RETURN(entry->impl,
                            core::Comm::create(std::move(boot), threads == MPI_THREAD_MULTIPLE,
                                               core::Comm::CreateOptions()));
    *comm = registerComm(std::move(entry));
    return Status::ok();
  });
}

strataResult_t strataCommSplit(strataComm_t comm, int color, int key, strataComm_t* newcomm,
                               strataConfig_t* config) {
  return guarded(comm, "strataCommSplit", [&]() -> Status {
    STRATA_ASSIGN_OR_RETURN(CommEntry * parent, liveComm(comm));
    if (newcomm == nullptr) return invalidArgument("newcomm is NULL");
    if (color < 0 && color != STRATA_SPLIT_NOCOLOR) {
      return invalidArgument("color " + std::to_string(color) +
                             " is negative; use STRATA_SPLIT_NOCOLOR (-1) for no communicator");
    }
    if (config != nullptr && config->magic != STRATA_CONFIG_MAGIC) {
      return invalidArgument("config was not initialised with STRATA_CONFIG_INITIALIZER");
    }
    if (inGroup()) return invalidUsage("strataCommSplit inside a group (strataGroupStart)");
    STRATA_ASSIGN_OR_RETURN(core::Comm::SplitOptions opts, splitOptions(config));
    STRATA_ASSIGN_OR_RETURN(std::unique_ptr<core::Comm> child,
                            parent->impl->split(color, key, opts));
    if (!child) {
      *newcomm = nullptr;
      return Status::ok();
    }
    auto entry = std::make_unique<CommEntry>();
    entry->impl = std::move(child);
    *newcomm = registerComm(std::move(entry));
    return Status::ok();
  });
}

strataResult_t strataCommRevoke(strataComm_t comm, int revokeFlags) {
  return guarded(comm, "strataCommRevoke", [&]() -> Status {
    STRATA_ASSIGN_OR_RETURN(CommEntry * entry, liveComm(comm, false));  // local: no MPI
    if (revokeFlags != STRATA_REVOKE_DEFAULT) {
      return invalidArgument("revokeFlags " + std::to_string(revokeFlags) +
                             ": must be STRATA_REVOKE_DEFAULT (0)");
    }
    entry->impl->revoke();
    return Status::ok();
  });
}

strataResult_t strataCommGetLostRanks(strataComm_t comm, int* ranks, int capacity, int* count) {
  return guarded(comm, "strataCommGetLostRanks", [&]() -> Status {
    STRATA_ASSIGN_OR_RETURN(CommEntry * entry, liveComm(comm, false));  // local: no MPI
    if (count == nullptr) return invalidArgument("count is NULL");
    if (capacity < 0)
      return invalidArgument("capacity " + std::to_string(capacity) + " is negative");
    if (capacity > 0 && ranks == nullptr) {
      return invalidArgument("ranks is NULL with capacity " + std::to_string(capacity));
    }
    std::vector<int> lost;
    for (const auto& l : entry->impl->lostMembers()) lost.push_back(l.first);
    std::sort(lost.begin(), lost.end());
    *count = static_cast<int>(lost.size());
    for (int i = 0; i < capacity && i < *count; ++i) ranks[i] = lost[i];
    return Status::ok();
  });
}

strataResult_t strataCommShrink(strataComm_t comm, int* excludeRanksList, int excludeRanksCount,
                                strataComm_t* newcomm, strataConfig_t* config, int shrinkFlags) {
  return guarded(comm, "strataCommShrink", [&]() -> Status {
    STRATA_ASSIGN_OR_RETURN(CommEntry * parent, liveComm(comm));
    if (newcomm == nullptr) return invalidArgument("newcomm is NULL");
    if (excludeRanksCount < 0) {
      return invalidArgument("excludeRanksCount " + std::to_string(excludeRanksCount) +
                             " is negative");
    }
    if (excludeRanksCount > 0 && excludeRanksList == nullptr) {
      return invalidArgument("excludeRanksList is NULL with excludeRanksCount " +
                             std::to_string(excludeRanksCount));
    }
    if (shrinkFlags != STRATA_SHRINK_DEFAULT && shrinkFlags != STRATA_SHRINK_ABORT) {
      return invalidArgument("shrinkFlags " + std::to_string(shrinkFlags) +
                             ": expected STRATA_SHRINK_DEFAULT (0) or STRATA_SHRINK_ABORT (1)");
    }
    if (config != nullptr && config->magic != STRATA_CONFIG_MAGIC) {
      return invalidArgument("config was not initialised with STRATA_CONFIG_INITIALIZER");
    }
    if (inGroup()) return invalidUsage("strataCommShrink inside a group (strataGroupStart)");
    const int n = parent->impl->size();
    std::vector<int> exclude;
    for (int i = 0; i < excludeRanksCount; ++i) {
      const int r = excludeRanksList[i];
      if (r < 0 || r >= n) {
        return invalidArgument("excludeRanksList[" + std::to_string(i) + "] = " +
                               std::to_string(r) + " is outside [0, " + std::to_string(n) + ")");
      }
      exclude.push_back(r);
    }
    STRATA_ASSIGN_OR_RETURN(core::Comm::SplitOptions opts, splitOptions(config));
    STRATA_ASSIGN_OR_RETURN(
        std::unique_ptr<core::Comm> child,
        parent->impl->shrink(exclude, opts, shrinkFlags == STRATA_SHRINK_ABORT));
    auto entry = std::make_unique<CommEntry>();
    entry->usesMpi = parent->usesMpi;
    entry->impl = std::move(child);
    *newcomm = registerComm(std::move(entry));
    return Status::ok();
  });
}

namespace {

// The entry of a handle that destroy or abort may take, even while its nonblocking init runs
// (which they cancel) or after that init failed.
StatusOr<std::unique_ptr<CommEntry>> takeEntry(strataComm_t comm) {
  if (comm == nullptr) return invalidArgument("comm is NULL");
  std::unique_ptr<CommEntry> entry = unregisterComm(comm);
  if (entry == nullptr) {
    return invalidArgument(
        "comm is not a live communicator handle (destroyed, aborted or never created)");
  }
  if (entry->pending) (void)entry->finishInit(true);
  return entry;
}

}  // namespace

strataResult_t strataCommDestroy(strataComm_t comm) {
  return guarded(nullptr, "strataCommDestroy", [&]() -> Status {
    STRATA_ASSIGN_OR_RETURN(std::unique_ptr<CommEntry> entry, takeEntry(comm));
    if (entry->impl == nullptr) return Status::ok();  // its nonblocking init failed or was cut
    // After MPI_Finalize no peer can be reached through MPI, so nothing collective may run
    // (the shm fabric's segment is strata's own mapping and is unmapped locally): free only what
    // is local, and say that the destroy came too late.
    const Status mpi = entry->usesMpi ? checkMpiActive() : Status::ok();
    if (!mpi.isOk()) entry->impl->abandon();
    entry.reset();  // collective unless abandoned: the communicator's groups are freed together
    return mpi;
  });
}

strataResult_t strataCommAbort(strataComm_t comm) {
  return guarded(nullptr, "strataCommAbort", [&]() -> Status {
    STRATA_ASSIGN_OR_RETURN(std::unique_ptr<CommEntry> entry, takeEntry(comm));
    if (entry->impl != nullptr) entry->impl->abandon();  // local: works after MPI_Finalize too
    entry.reset();
    return Status::ok();
  });
}

strataResult_t strataCommDump(strataComm_t comm) {
  return guarded(comm, "strataCommDump", [&]() -> Status {
    // Local: no MPI, so it also works to look at a communicator after MPI_Finalize.
    STRATA_ASSIGN_OR_RETURN(CommEntry * entry, liveComm(comm, false));
    return core::dumpFlightRecorder(*entry->impl, "strataCommDump");
  });
}

strataResult_t strataCommNoteNextCall(strataComm_t comm, const char* note) {
  return guarded(comm, "strataCommNoteNextCall", [&]() -> Status {
    STRATA_ASSIGN_OR_RETURN(CommEntry * entry, liveComm(comm, false));
    const std::string text = note != nullptr ? note : "";
    if (text.size() > 200) {
      return invalidArgument("note of " + std::to_string(text.size()) + " characters: at most 200");
    }
    core::Comm& c = *entry->impl;
    core::IssueScope one(c, "strataCommNoteNextCall");
    STRATA_RETURN_IF_ERROR(one.status());
    c.issued(one.thread()).noteNextCall(text);
    return Status::ok();
  });
}

strataResult_t strataCommGetAsyncError(strataComm_t comm, strataResult_t* asyncError) {
  return guarded(comm, "strataCommGetAsyncError", [&]() -> Status {
    if (asyncError == nullptr) return invalidArgument("asyncError is NULL");
    // A nonblocking init: in progress, or its outcome (NCCL's ncclCommGetAsyncError).
    StatusOr<CommEntry*> live = liveComm(comm);
    if (!live.isOk()) {
      const CommEntry* e = lookupComm(comm);
      if (live.status().code() == Code::kInProgress) {
        *asyncError = strataInProgress;
        return Status::ok();
      }
      if (e != nullptr && !e->initError.isOk()) {
        *asyncError = e->initError.result();
        return Status::ok();
      }
      return live.status();  // not live, or MPI finalised: the call itself fails
    }
    STRATA_ASSIGN_OR_RETURN(CommEntry * entry, std::move(live));
    if (entry->impl->revoked()) {
      // NCCL's ncclCommRevoke: in progress until its calls ended, then quiescent.
      *asyncError = entry->impl->engine().idle() ? strataSuccess : strataInProgress;
      return Status::ok();
    }
    Status st = entry->impl->engine().error();
    if (st.isOk()) st = entry->impl->lostError();
    *asyncError = st.result();
    if (!st.isOk()) entry->lastError = st.message();
    return Status::ok();
  });
}

strataResult_t strataCommCount(const strataComm_t comm, int* count) {
  return guarded(comm, "strataCommCount", [&]() -> Status {
    STRATA_ASSIGN_OR_RETURN(CommEntry * entry, liveComm(comm, false));  // local: no MPI
    if (count == nullptr) return invalidArgument("count is NULL");
    *count = entry->impl->size();
    return Status::ok();
  });
}

strataResult_t strataCommUserRank(const strataComm_t comm, int* rank) {
  return guarded(comm, "strataCommUserRank", [&]() -> Status {
    STRATA_ASSIGN_OR_RETURN(CommEntry * entry, liveComm(comm, false));  // local: no MPI
    if (rank == nullptr) return invalidArgument("rank is NULL");
    *rank = entry->impl->rank();
    return Status::ok();
  });
}

strataResult_t strataCommDescribe(const strataComm_t comm, char* buf, size_t len) {
  return guarded(comm, "strataCommDescribe", [&]() -> Status {
    STRATA_ASSIGN_OR_RETURN(CommEntry * entry, liveComm(comm, false));  // local: no MPI
    if (buf == nullptr || len == 0) return invalidArgument("buf is NULL or len is 0");
    const std::string text = core::describeComm(*entry->impl);
    const size_t n = text.size() < len - 1 ? text.size() : len - 1;
    std::memcpy(buf, text.data(), n);
    buf[n] = '\0';
    return Status::ok();
  });
}

}  // extern "C"
