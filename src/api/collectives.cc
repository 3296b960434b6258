// The C boundary for collectives: each entry validates its arguments against NCCL's rules,
// describes the call once (common/collective.h) and issues it (core/calls.h).
#include <string>

#include "api/guard.h"
#include "api/handle.h"
#include "core/calls.h"
#include "strata/strata.h"

namespace strata::api {
namespace {

Call makeCall(Collective coll, const void* send, void* recv, size_t count, strataDataType_t type,
              strataRedOp_t op, int root) {
  Call c;
  c.coll = coll;
  c.send = send;
  c.recv = recv;
  c.count = count;
  c.type = type;
  c.op = op;
  c.root = root;
  return c;
}

}  // namespace
}  // namespace strata::api

using namespace strata;       // NOLINT: the C entry points below are thin wrappers
using namespace strata::api;  // NOLINT

extern "C" {

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
    return core::issue(*comm->impl,
                       makeCall(Collective::kAllReduce, sendbuff, recvbuff, count, datatype, op, 0),
                       stream);
  });
}

strataResult_t strataReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                   strataDataType_t datatype, strataRedOp_t op, strataComm_t comm,
                                   strataStream_t stream) {
  return guarded(comm, "strataReduceScatter", [&]() -> Status {
    STRATA_RETURN_IF_ERROR(checkComm(comm));
    STRATA_RETURN_IF_ERROR(checkTypeOp(datatype, op, true));
    const int nranks = comm->impl->size(), rank = comm->impl->rank();
    size_t sendBytes = 0, recvBytes = 0;
    STRATA_RETURN_IF_ERROR(byteSize(recvcount, nranks, datatype, "recvcount", &sendBytes));
    STRATA_RETURN_IF_ERROR(byteSize(recvcount, 1, datatype, "recvcount", &recvBytes));
    STRATA_RETURN_IF_ERROR(checkBuffers(sendbuff, recvbuff, recvcount));
    const void* inPlaceRecv = static_cast<const char*>(sendbuff) + rank * recvBytes;
    if (recvbuff != inPlaceRecv) {
      STRATA_RETURN_IF_ERROR(checkOverlap(sendbuff, sendBytes, recvbuff, recvBytes, nullptr));
    }
    return core::issue(
        *comm->impl,
        makeCall(Collective::kReduceScatter, sendbuff, recvbuff, recvcount, datatype, op, 0),
        stream);
  });
}

strataResult_t strataAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                               strataDataType_t datatype, strataComm_t comm,
                               strataStream_t stream) {
  return guarded(comm, "strataAllGather", [&]() -> Status {
    STRATA_RETURN_IF_ERROR(checkComm(comm));
    STRATA_RETURN_IF_ERROR(checkTypeOp(datatype, strataSum, false));
    const int nranks = comm->impl->size(), rank = comm->impl->rank();
    size_t sendBytes = 0, recvBytes = 0;
    STRATA_RETURN_IF_ERROR(byteSize(sendcount, 1, datatype, "sendcount", &sendBytes));
    STRATA_RETURN_IF_ERROR(byteSize(sendcount, nranks, datatype, "sendcount", &recvBytes));
    STRATA_RETURN_IF_ERROR(checkBuffers(sendbuff, recvbuff, sendcount));
    const void* inPlaceSend = static_cast<const char*>(recvbuff) + rank * sendBytes;
    STRATA_RETURN_IF_ERROR(checkOverlap(sendbuff, sendBytes, recvbuff, recvBytes, inPlaceSend));
    return core::issue(
        *comm->impl,
        makeCall(Collective::kAllGather, sendbuff, recvbuff, sendcount, datatype, strataSum, 0),
        stream);
  });
}

}  // extern "C"
