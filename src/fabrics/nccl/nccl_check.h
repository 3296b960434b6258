// STRATA_NCCL_CHECK: turns a failed NCCL call into a Status where it happens (the
// STRATA_MPI_CHECK of the nccl fabric). Only built with CUDA and NCCL.
#pragma once

#include <nccl.h>

#include <string>

#include "common/log.h"
#include "common/status.h"
#include "fabrics/nccl/nccl_lib.h"

namespace strata::fabric {

// The code a failed NCCL call maps to. strata validates every argument before a fabric sees
// it, so NCCL refusing an argument or a usage is a strata bug (kInternal), not the caller's.
inline Code ncclCode(ncclResult_t rc) {
  switch (rc) {
    case ncclSuccess:
      return Code::kOk;
    case ncclUnhandledCudaError:
      return Code::kCudaError;
    case ncclSystemError:
      return Code::kSystemError;
    case ncclRemoteError:
      return Code::kRemoteError;
    default:
      return Code::kInternal;  // ncclInvalidArgument, ncclInvalidUsage, ncclInternalError
  }
}

// Logs the failure once and returns its Status. `comm` may be null (before a communicator
// exists); NCCL's last-error text then is that of the calling thread.
inline Status ncclFailure(const char* call, ncclResult_t rc, ncclComm_t comm, const char* file,
                          int line) {
  const nccl_lib::Api* nccl = nccl_lib::loaded();  // loaded: a call to it failed
  const char* last = nccl != nullptr ? nccl->ncclGetLastError(comm) : nullptr;
  const char* text = nccl != nullptr ? nccl->ncclGetErrorString(rc) : "NCCL error";
  const std::string detail =
      last != nullptr && last[0] != '\0' ? std::string(" (") + last + ")" : std::string();
  STRATA_WARN(kSubsysFabric, "%s failed at %s:%d: %s%s", call, file, line, text, detail.c_str());
  return Status(ncclCode(rc), std::string(call) + " failed: " + text + detail);
}

// Ok for ncclSuccess; otherwise ncclFailure's Status.
inline Status ncclStatus(ncclResult_t rc, const char* call, ncclComm_t comm, const char* file,
                         int line) {
  return rc == ncclSuccess ? Status::ok() : ncclFailure(call, rc, comm, file, line);
}

}  // namespace strata::fabric

// The Status of an NCCL call, for code that must go on after a failure (to agree with peers).
#define STRATA_NCCL_STATUS(call, comm) \
  ::strata::fabric::ncclStatus((call), #call, (comm), __FILE__, __LINE__)

// Returns the Status of a failed NCCL call from the enclosing function.
#define STRATA_NCCL_CHECK(call, comm)                                                           \
  do {                                                                                          \
    ncclResult_t strata_nccl_rc_ = (call);                                                      \
    if (strata_nccl_rc_ != ncclSuccess)                                                         \
      return ::strata::fabric::ncclFailure(#call, strata_nccl_rc_, (comm), __FILE__, __LINE__); \
  } while (0)
