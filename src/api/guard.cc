#include "api/guard.h"

#include <cstdint>

#include "common/datatype.h"

namespace strata::api {

thread_local std::string tLastError;  // errors with no live communicator to hold them

strataResult_t fail(strataComm* comm, const char* fn, const Status& st, bool log) {
  std::string msg = std::string(fn) + ": " + st.message();
  if (log) STRATA_WARN(kSubsysColl, "%s", msg.c_str());
  if (comm != nullptr && isLive(comm)) {
    comm->lastError = msg;
  } else {
    tLastError = msg;
  }
  return st.result();
}

const char* threadLastError() { return tLastError.c_str(); }

Status checkComm(const strataComm* comm) {
  if (comm == nullptr) return invalidArgument("comm is NULL");
  if (!isLive(comm)) {
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
