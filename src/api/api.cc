// The C boundary: validates arguments, calls into the library, and turns Status into
// strataResult_t. Nothing throws across it: every entry point catches everything.
#include <cstdint>
#include <cstring>
#include <new>
#include <string>

#include "common/datatype.h"
#include "common/env.h"
#include "common/log.h"
#include "core/describe.h"
#include "core/device_path.h"
#include "core/dispatch.h"
#include "core/init.h"
#include "core/registry.h"
#include "strata/strata_mpi.h"

namespace strata {
namespace {

thread_local std::string tLastError;  // errors with no live communicator to hold them

// Records a failure of `fn` (logging it once, here, where it reaches the user) and returns its
// code. Errors from deeper layers were already logged where they were detected.
strataResult_t fail(strataComm* comm, const char* fn, const Status& st, bool log) {
  std::string msg = std::string(fn) + ": " + st.message();
  if (log) STRATA_WARN(kSubsysColl, "%s", msg.c_str());
  if (comm != nullptr && core::isLive(comm)) {
    comm->lastError = msg;
  } else {
    tLastError = msg;
  }
  return st.result();
}

// Runs `body`, mapping exceptions to codes, so no exception crosses extern "C".
template <typename Body>
strataResult_t guarded(strataComm* comm, const char* fn, Body body) {
  try {
    Status st = body();
    if (st.isOk()) return strataSuccess;
    // Argument errors are detected here, so they are logged here; others were logged below.
    const bool here = st.code() == Code::kInvalidArgument || st.code() == Code::kInvalidUsage;
    return fail(comm, fn, st, here);
  } catch (const std::bad_alloc&) {
    return fail(comm, fn, systemError("out of memory"), true);
  } catch (const std::exception& e) {
    return fail(comm, fn, internalError(std::string("unexpected exception: ") + e.what()), true);
  } catch (...) {
    return fail(comm, fn, internalError("unexpected exception"), true);
  }
}

Status checkComm(const strataComm* comm) {
  if (comm == nullptr) return invalidArgument("comm is NULL");
  if (!core::isLive(comm)) {
    return invalidArgument("comm is not a live communicator (destroyed or never created)");
  }
  return Status::ok();
}

Status checkTypeOp(strataDataType_t type, strataRedOp_t op, bool hasOp) {
  if (!validDataType(type)) {
    return invalidArgument("invalid datatype " + std::to_string(static_cast<int>(type)));
  }
  if (hasOp && !validRedOp(op)) {
    return invalidArgument("invalid reduction op " + std::to_string(static_cast<int>(op)));
  }
  return Status::ok();
}

// elements * typesize * factor in bytes, refusing overflow.
Status byteSize(size_t elements, size_t factor, strataDataType_t type, const char* what,
                size_t* bytes) {
  const size_t ts = dataTypeSize(type);
  if (factor != 0 && elements > SIZE_MAX / factor / ts) {
    return invalidArgument(std::string(what) + " " + std::to_string(elements) +
                           " overflows the byte size");
  }
  *bytes = elements * factor * ts;
  return Status::ok();
}

// Buffers may be identical (or in the documented in-place arrangement) or disjoint; any other
// overlap would silently corrupt the result.
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
  if (send == nullptr) return invalidArgument("sendbuff is NULL with count " + std::to_string(count));
  if (recv == nullptr) return invalidArgument("recvbuff is NULL with count " + std::to_string(count));
  return Status::ok();
}

// Runs a validated collective where its buffers live: on the GPU path (ordered on `stream`)
// or, after the device calls queued before it, on the host.
template <typename HostCall>
Status runCollective(strataComm& c, const core::DeviceCall& call, strataStream_t stream,
                     HostCall host) {
  STRATA_ASSIGN_OR_RETURN(core::Place place, core::placeOf(c, call.send, call.recv));
  if (place == core::Place::kDevice) return core::submitDevice(c, stream, call);
  STRATA_RETURN_IF_ERROR(core::drainDevice(c));
  return host();
}

}  // namespace
}  // namespace strata

using namespace strata;  // NOLINT: the C entry points below are thin wrappers

extern "C" {

strataResult_t strataGetVersion(int* version) {
  return guarded(nullptr, "strataGetVersion", [&] {
    if (version == nullptr) return invalidArgument("version is NULL");
    *version = STRATA_VERSION_CODE;
    return Status::ok();
  });
}

const char* strataGetErrorString(strataResult_t result) {
  switch (result) {
    case strataSuccess: return "no error";
    case strataUnhandledCudaError: return "unhandled cuda error (run with STRATA_DEBUG=INFO for details)";
    case strataSystemError: return "unhandled system error (run with STRATA_DEBUG=INFO for details)";
    case strataInternalError: return "internal error - please report this issue to the strata developers";
    case strataInvalidArgument: return "invalid argument (run with STRATA_DEBUG=WARN for details)";
    case strataInvalidUsage: return "invalid usage (run with STRATA_DEBUG=WARN for details)";
    case strataRemoteError: return "remote process exited or there was a network error";
    case strataInProgress: return "strata operation in progress";
    default: return "unknown result code";
  }
}

const char* strataGetLastError(strataComm_t comm) {
  if (comm != nullptr && core::isLive(comm)) return comm->lastError.c_str();
  return tLastError.c_str();
}

strataResult_t strataCommInitMPI(strataComm_t* comm, MPI_Comm mpicomm) {
  return guarded(nullptr, "strataCommInitMPI", [&]() -> Status {
    if (comm == nullptr) return invalidArgument("comm is NULL");
    int initialized = 0, finalized = 0;
    MPI_Initialized(&initialized);
    MPI_Finalized(&finalized);
    if (!initialized || finalized) return invalidUsage("MPI is not initialised (or already finalised)");
    if (mpicomm == MPI_COMM_NULL) return invalidArgument("mpicomm is MPI_COMM_NULL");
    int inter = 0;
    if (MPI_Comm_test_inter(mpicomm, &inter) != MPI_SUCCESS) {
      return invalidArgument("mpicomm is not a valid communicator");
    }
    if (inter) return invalidArgument("mpicomm is an intercommunicator");
    env::logUserSettings();
    STRATA_ASSIGN_OR_RETURN(std::unique_ptr<strataComm> c, core::initComm(mpicomm));
    if (c->rank == 0) logVersionOnce();
    core::registerComm(c.get());
    *comm = c.release();
    return Status::ok();
  });
}

strataResult_t strataCommDestroy(strataComm_t comm) {
  return guarded(nullptr, "strataCommDestroy", [&]() -> Status {
    STRATA_RETURN_IF_ERROR(checkComm(comm));
    core::unregisterComm(comm);
    core::freeComm(*comm, /*collective=*/true);
    delete comm;
    return Status::ok();
  });
}

strataResult_t strataCommAbort(strataComm_t comm) {
  return guarded(nullptr, "strataCommAbort", [&]() -> Status {
    STRATA_RETURN_IF_ERROR(checkComm(comm));
    core::unregisterComm(comm);
    core::freeComm(*comm, /*collective=*/false);
    delete comm;
    return Status::ok();
  });
}

strataResult_t strataCommGetAsyncError(strataComm_t comm, strataResult_t* asyncError) {
  return guarded(comm, "strataCommGetAsyncError", [&]() -> Status {
    STRATA_RETURN_IF_ERROR(checkComm(comm));
    if (asyncError == nullptr) return invalidArgument("asyncError is NULL");
    const Status st = core::asyncError(*comm);
    *asyncError = st.result();
    if (!st.isOk()) comm->lastError = st.message();
    return Status::ok();
  });
}

strataResult_t strataCommCount(const strataComm_t comm, int* count) {
  return guarded(comm, "strataCommCount", [&]() -> Status {
    STRATA_RETURN_IF_ERROR(checkComm(comm));
    if (count == nullptr) return invalidArgument("count is NULL");
    *count = comm->size;
    return Status::ok();
  });
}

strataResult_t strataCommUserRank(const strataComm_t comm, int* rank) {
  return guarded(comm, "strataCommUserRank", [&]() -> Status {
    STRATA_RETURN_IF_ERROR(checkComm(comm));
    if (rank == nullptr) return invalidArgument("rank is NULL");
    *rank = comm->rank;
    return Status::ok();
  });
}

strataResult_t strataCommDescribe(const strataComm_t comm, char* buf, size_t len) {
  return guarded(comm, "strataCommDescribe", [&]() -> Status {
    STRATA_RETURN_IF_ERROR(checkComm(comm));
    if (buf == nullptr || len == 0) return invalidArgument("buf is NULL or len is 0");
    const std::string text = core::describeComm(*comm);
    const size_t n = text.size() < len - 1 ? text.size() : len - 1;
    std::memcpy(buf, text.data(), n);
    buf[n] = '\0';
    return Status::ok();
  });
}

strataResult_t strataAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                               strataDataType_t datatype, strataRedOp_t op, strataComm_t comm,
                               strataStream_t stream) {
  return guarded(comm, "strataAllReduce", [&]() -> Status {
    STRATA_RETURN_IF_ERROR(checkComm(comm));
    STRATA_RETURN_IF_ERROR(checkTypeOp(datatype, op, true));
    size_t bytes = 0;
    STRATA_RETURN_IF_ERROR(byteSize(count, 1, datatype, "count", &bytes));
    STRATA_RETURN_IF_ERROR(checkBuffers(sendbuff, recvbuff, count));
    STRATA_RETURN_IF_ERROR(checkOverlap(sendbuff, bytes, recvbuff, bytes, recvbuff));
    const core::DeviceCall call{core::CollKind::kAllReduce, sendbuff, recvbuff, count, datatype, op};
    return runCollective(*comm, call, stream, [&] {
      return core::allReduce(*comm, sendbuff, recvbuff, count, datatype, op);
    });
  });
}

strataResult_t strataReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                   strataDataType_t datatype, strataRedOp_t op,
                                   strataComm_t comm, strataStream_t stream) {
  return guarded(comm, "strataReduceScatter", [&]() -> Status {
    STRATA_RETURN_IF_ERROR(checkComm(comm));
    STRATA_RETURN_IF_ERROR(checkTypeOp(datatype, op, true));
    size_t sendBytes = 0, recvBytes = 0;
    STRATA_RETURN_IF_ERROR(byteSize(recvcount, comm->size, datatype, "recvcount", &sendBytes));
    STRATA_RETURN_IF_ERROR(byteSize(recvcount, 1, datatype, "recvcount", &recvBytes));
    STRATA_RETURN_IF_ERROR(checkBuffers(sendbuff, recvbuff, recvcount));
    const void* inPlaceRecv = static_cast<const char*>(sendbuff) + comm->rank * recvBytes;
    if (recvbuff != inPlaceRecv) {
      STRATA_RETURN_IF_ERROR(checkOverlap(sendbuff, sendBytes, recvbuff, recvBytes, nullptr));
    }
    const core::DeviceCall call{core::CollKind::kReduceScatter, sendbuff, recvbuff, recvcount,
                                datatype, op};
    return runCollective(*comm, call, stream, [&] {
      return core::reduceScatter(*comm, sendbuff, recvbuff, recvcount, datatype, op);
    });
  });
}

strataResult_t strataAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                               strataDataType_t datatype, strataComm_t comm,
                               strataStream_t stream) {
  return guarded(comm, "strataAllGather", [&]() -> Status {
    STRATA_RETURN_IF_ERROR(checkComm(comm));
    STRATA_RETURN_IF_ERROR(checkTypeOp(datatype, strataSum, false));
    size_t sendBytes = 0, recvBytes = 0;
    STRATA_RETURN_IF_ERROR(byteSize(sendcount, 1, datatype, "sendcount", &sendBytes));
    STRATA_RETURN_IF_ERROR(byteSize(sendcount, comm->size, datatype, "sendcount", &recvBytes));
    STRATA_RETURN_IF_ERROR(checkBuffers(sendbuff, recvbuff, sendcount));
    const void* inPlaceSend = static_cast<const char*>(recvbuff) + comm->rank * sendBytes;
    STRATA_RETURN_IF_ERROR(checkOverlap(sendbuff, sendBytes, recvbuff, recvBytes, inPlaceSend));
    const core::DeviceCall call{core::CollKind::kAllGather, sendbuff, recvbuff, sendcount,
                                datatype, strataSum};
    return runCollective(*comm, call, stream, [&] {
      return core::allGather(*comm, sendbuff, recvbuff, sendcount, datatype);
    });
  });
}

}  // extern "C"
