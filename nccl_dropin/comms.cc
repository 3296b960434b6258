// The drop-in's communicator queries, lifecycle, errors, versions and memory calls.
#include <cstring>
#include <string>

#include "dropin.h"

using namespace strata::nccl_dropin;  // NOLINT

namespace {

// A communicator argument: non-null, and served by strata or by the real NCCL.
ncclResult_t checkComm(const ncclComm* comm, const char* fn) {
  if (comm == nullptr) return fail(ncclInvalidArgument, std::string(fn) + ": comm is NULL");
  return ncclSuccess;
}

}  // namespace

extern "C" {

// Programs and libraries that load libnccl.so.2 can tell strata's drop-in by this symbol
// (strata's own NCCL loader skips a library that has it).
__attribute__((visibility("default"))) int strataNcclDropIn() { return 1; }

ncclResult_t ncclGetVersion(int* version) {
  announce();
  if (version == nullptr) return fail(ncclInvalidArgument, "ncclGetVersion: version is NULL");
  // The ABI served: programs check it to enable avg and bfloat16, which strata has.
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}

const char* ncclGetErrorString(ncclResult_t result) {
  switch (result) {
    case ncclSuccess:
      return "no error";
    case ncclUnhandledCudaError:
      return "unhandled cuda error (run with NCCL_DEBUG=INFO for details)";
    case ncclSystemError:
      return "unhandled system error (run with NCCL_DEBUG=INFO for details)";
    case ncclInternalError:
      return "internal error - please report this issue to the strata developers";
    case ncclInvalidArgument:
      return "invalid argument (run with NCCL_DEBUG=WARN for details)";
    case ncclInvalidUsage:
      return "invalid usage (run with NCCL_DEBUG=WARN for details)";
    case ncclRemoteError:
      return "remote process exited or there was a network error";
    case ncclInProgress:
      return "NCCL operation in progress";
    default:
      return "unknown result code";
  }
}

const char* ncclGetLastError(ncclComm_t comm) {
  if (comm != nullptr && comm->strata != nullptr) {
    const char* s = strataGetLastError(comm->strata);
    if (s != nullptr && s[0] != '\0') return s;
  }
  return lastError();
}

ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  if (ncclResult_t rc = checkComm(comm, "ncclCommCount"); rc != ncclSuccess) return rc;
  if (count == nullptr) return fail(ncclInvalidArgument, "ncclCommCount: count is NULL");
  *count = comm->size;
  return ncclSuccess;
}

ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  if (ncclResult_t rc = checkComm(comm, "ncclCommUserRank"); rc != ncclSuccess) return rc;
  if (rank == nullptr) return fail(ncclInvalidArgument, "ncclCommUserRank: rank is NULL");
  *rank = comm->rank;
  return ncclSuccess;
}

ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device) {
  if (ncclResult_t rc = checkComm(comm, "ncclCommCuDevice"); rc != ncclSuccess) return rc;
  if (device == nullptr) return fail(ncclInvalidArgument, "ncclCommCuDevice: device is NULL");
  if (comm->real != nullptr) return realNccl()->ncclCommCuDevice(comm->real, device);
  // strata binds a communicator to the GPU current at its first device call; before that
  // (and for host buffers) there is none to report: device 0, as a one-GPU process has.
  *device = 0;
  return ncclSuccess;
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError) {
  if (ncclResult_t rc = checkComm(comm, "ncclCommGetAsyncError"); rc != ncclSuccess) return rc;
  if (asyncError == nullptr) {
    return fail(ncclInvalidArgument, "ncclCommGetAsyncError: asyncError is NULL");
  }
  strataResult_t state = strataSuccess;
  const strataResult_t r = strataCommGetAsyncError(comm->strata, &state);
  if (r != strataSuccess) return fromStrata(r, comm->strata, "ncclCommGetAsyncError");
  *asyncError = static_cast<ncclResult_t>(state);
  if (*asyncError == ncclSuccess && comm->real != nullptr) {
    return realNccl()->ncclCommGetAsyncError(comm->real, asyncError);
  }
  return ncclSuccess;
}

ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  // strata's calls are complete (host) or ordered on their streams (device) when they return;
  // nothing is left to flush before destroy.
  if (ncclResult_t rc = checkComm(comm, "ncclCommFinalize"); rc != ncclSuccess) return rc;
  if (comm->revoked.load()) {
    return fail(ncclInvalidUsage,
                "ncclCommFinalize after ncclCommRevoke is invalid (as in NCCL): destroy or abort "
                "the communicator instead");
  }
  if (comm->real != nullptr) return realNccl()->ncclCommFinalize(comm->real);
  return ncclSuccess;
}

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  if (ncclResult_t rc = checkComm(comm, "ncclCommDestroy"); rc != ncclSuccess) return rc;
  ncclResult_t rc = ncclSuccess;
  if (comm->real != nullptr) rc = realNccl()->ncclCommDestroy(comm->real);
  const ncclResult_t mine = fromStrata(strataCommDestroy(comm->strata), nullptr, "ncclCommDestroy");
  delete comm;
  return rc != ncclSuccess ? rc : mine;
}

ncclResult_t ncclCommAbort(ncclComm_t comm) {
  if (ncclResult_t rc = checkComm(comm, "ncclCommAbort"); rc != ncclSuccess) return rc;
  if (comm->real != nullptr) realNccl()->ncclCommAbort(comm->real);
  const ncclResult_t rc = fromStrata(strataCommAbort(comm->strata), nullptr, "ncclCommAbort");
  delete comm;
  return rc;
}

ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int key, ncclComm_t* newcomm,
                           ncclConfig_t* config) {
  (void)config;
  if (ncclResult_t rc = checkComm(comm, "ncclCommSplit"); rc != ncclSuccess) return rc;
  if (newcomm == nullptr) return fail(ncclInvalidArgument, "ncclCommSplit: newcomm is NULL");
  if (comm->real != nullptr) {
    return fail(ncclInvalidUsage,
                "ncclCommSplit of a communicator with STRATA_NCCL_FALLBACK forwarding is not "
                "supported yet");
  }
  strataComm_t child = nullptr;
  const strataResult_t r = strataCommSplit(comm->strata, color, key, &child, nullptr);
  if (r != strataSuccess) return fromStrata(r, comm->strata, "ncclCommSplit");
  if (child == nullptr) {
    *newcomm = nullptr;  // NCCL_SPLIT_NOCOLOR
    return ncclSuccess;
  }
  auto* made = new ncclComm();
  made->strata = child;
  strataCommUserRank(child, &made->rank);
  strataCommCount(child, &made->size);
  *newcomm = made;
  return ncclSuccess;
}

ncclResult_t ncclCommRegister(const ncclComm_t comm, void* buff, size_t size, void** handle) {
  if (ncclResult_t rc = checkComm(comm, "ncclCommRegister"); rc != ncclSuccess) return rc;
  if (handle == nullptr) return fail(ncclInvalidArgument, "ncclCommRegister: handle is NULL");
  if (comm->real != nullptr) return realNccl()->ncclCommRegister(comm->real, buff, size, handle);
  // strata needs no registration: the handle only has to be non-null and given back.
  *handle = buff != nullptr ? buff : comm;
  return ncclSuccess;
}

ncclResult_t ncclCommDeregister(const ncclComm_t comm, void* handle) {
  if (ncclResult_t rc = checkComm(comm, "ncclCommDeregister"); rc != ncclSuccess) return rc;
  if (comm->real != nullptr) return realNccl()->ncclCommDeregister(comm->real, handle);
  return ncclSuccess;
}

ncclResult_t ncclMemAlloc(void** ptr, size_t size) {
  std::string why;
  const strata::nccl_lib::Api* nccl = realNccl(&why);
  if (nccl == nullptr) return fail(ncclInvalidUsage, "ncclMemAlloc needs the real NCCL: " + why);
  return nccl->ncclMemAlloc(ptr, size);
}

ncclResult_t ncclMemFree(void* ptr) {
  std::string why;
  const strata::nccl_lib::Api* nccl = realNccl(&why);
  if (nccl == nullptr) return fail(ncclInvalidUsage, "ncclMemFree needs the real NCCL: " + why);
  return nccl->ncclMemFree(ptr);
}

ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t* op, void* scalar, ncclDataType_t datatype,
                                      ncclScalarResidence_t residence, ncclComm_t comm) {
  if (ncclResult_t rc = checkComm(comm, "ncclRedOpCreatePreMulSum"); rc != ncclSuccess) return rc;
  if (comm->real == nullptr) {
    return fail(ncclInvalidUsage,
                "ncclRedOpCreatePreMulSum: strata has no pre-multiplied sum; run with "
                "STRATA_NCCL_FALLBACK=all (or the collective's name) to forward it to NCCL");
  }
  return realNccl()->ncclRedOpCreatePreMulSum(op, scalar, datatype, residence, comm->real);
}

ncclResult_t ncclRedOpDestroy(ncclRedOp_t op, ncclComm_t comm) {
  if (ncclResult_t rc = checkComm(comm, "ncclRedOpDestroy"); rc != ncclSuccess) return rc;
  if (comm->real == nullptr) {
    return fail(ncclInvalidArgument, "ncclRedOpDestroy: no such operation on this communicator");
  }
  return realNccl()->ncclRedOpDestroy(op, comm->real);
}

}  // extern "C"
