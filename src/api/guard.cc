#include "api/guard.h"

#include <cstdint>

#include "common/datatype.h"
#include "strata/strata_mpi.h"

namespace strata::api {

thread_local std::string tLastError;  // the calling thread's last error, whatever its communicator

strataResult_t fail(strataComm_t comm, const char* fn, const Status& st, bool log) {
  std::string msg = std::string(fn) + ": " + st.message();
  if (log) STRATA_WARN(kSubsysColl, "%s", msg.c_str());
  // The communicator's, and always the thread's: strataGetLastError(NULL) is this thread's
  // last error, whichever communicator it came from.
  if (CommEntry* entry = lookupComm(comm)) entry->lastError = msg;
  tLastError = msg;
  return st.result();
}

const char* threadLastError() { return tLastError.c_str(); }

Status checkMpiActive() {
  // MPI_Finalized may be called at any time, even after MPI_Finalize, from any thread.
  int finalized = 0;
  MPI_Finalized(&finalized);
  if (finalized) {
    return invalidUsage(
        "MPI was finalised before this call: call strataCommDestroy before MPI_Finalize (after "
        "it, strataCommDestroy and strataCommAbort free only local memory)");
  }
  return Status::ok();
}

StatusOr<CommEntry*> liveComm(strataComm_t comm, bool needsMpi) {
  if (comm == nullptr) return invalidArgument("comm is NULL");
  CommEntry* entry = lookupComm(comm);
  if (entry == nullptr) {
    return invalidArgument(
        "comm is not a live communicator handle (destroyed, aborted or never created)");
  }
  if (entry->pending) {
    {
      std::lock_guard<std::mutex> lock(entry->pending->mu);
      if (!entry->pending->done) {
        return Status(Code::kInProgress,
                      "the communicator is still being initialised (nonblocking init): call "
                      "strataCommGetAsyncError until it reports strataSuccess");
      }
    }
    STRATA_RETURN_IF_ERROR(entry->finishInit(false));
  }
  if (entry->impl == nullptr) {
    return invalidUsage("the communicator's nonblocking init failed: destroy or abort it");
  }
  if (needsMpi && entry->usesMpi) STRATA_RETURN_IF_ERROR(checkMpiActive());
  return entry;
}

Status checkTypeOp(int type, int op, bool hasOp) {
  if (!validDataType(type)) return invalidArgument("invalid datatype " + std::to_string(type));
  if (hasOp && !validRedOp(op)) {
    return invalidArgument("invalid reduction op " + std::to_string(op));
  }
  return Status::ok();
}

Status byteSize(size_t elements, size_t factor, int type, const char* what, size_t* bytes) {
  const size_t ts = dataTypeSize(static_cast<strataDataType_t>(type));
  if (factor != 0 && elements > SIZE_MAX / factor / ts) {
    return invalidArgument(std::string(what) + " " + std::to_string(elements) +
                           " overflows the byte size");
  }
  *bytes = elements * factor * ts;
  // No object is larger than PTRDIFF_MAX bytes (C's pointer difference must hold its size):
  // a larger size names memory no buffer can have, and fabrics would pass it on to MPI and UCX
  // as if it did (a SIZE_MAX broadcast crashed inside MPI_Testall).
  if (*bytes > static_cast<size_t>(PTRDIFF_MAX)) {
    return invalidArgument(std::string(what) + " " + std::to_string(elements) + " is " +
                           std::to_string(*bytes) +
                           " bytes, too large for any buffer (at most 2^63 - 1 bytes)");
  }
  return Status::ok();
}

Status checkOverlap(const void* send, size_t sendBytes, const void* recv, size_t recvBytes,
                    const void* inPlaceSend) {
  if (send == inPlaceSend) return Status::ok();
  const auto s = reinterpret_cast<uintptr_t>(send), r = reinterpret_cast<uintptr_t>(recv);
  if (s < r + recvBytes && r < s + sendBytes) {
    return invalidArgument("sendbuff and recvbuff overlap but are not in place");
  }
  return Status::ok();
}

Status checkBuffers(const void* send, const void* recv, size_t count) {
  if (count == 0) return Status::ok();
  if (send == nullptr)
    return invalidArgument("sendbuff is NULL with count " + std::to_string(count));
  if (recv == nullptr)
    return invalidArgument("recvbuff is NULL with count " + std::to_string(count));
  return Status::ok();
}

}  // namespace strata::api
