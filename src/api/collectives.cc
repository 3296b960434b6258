// The C boundary for collectives: each entry validates its arguments against NCCL's rules,
// describes the call once (common/collective.h) and issues it (core/calls.h), or records it
// when the thread is inside a group (api/group.h).
#include <string>

#include "api/group.h"
#include "api/guard.h"
#include "api/handle.h"
#include "api/request.h"
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

Status checkRank(const strataComm* comm, int rank, const char* what) {
  const int n = comm->impl->size();
  if (rank < 0 || rank >= n) {
    return invalidArgument(std::string(what) + " " + std::to_string(rank) +
                           " is not a rank of the communicator (0.." + std::to_string(n - 1) + ")");
  }
  return Status::ok();
}

StatusOr<Call> allReduceCall(strataComm* comm, const void* send, void* recv, size_t count,
                             strataDataType_t type, strataRedOp_t op) {
  STRATA_RETURN_IF_ERROR(checkComm(comm));
  STRATA_RETURN_IF_ERROR(checkTypeOp(type, op, true));
  size_t bytes = 0;
  STRATA_RETURN_IF_ERROR(byteSize(count, 1, type, "count", &bytes));
  STRATA_RETURN_IF_ERROR(checkBuffers(send, recv, count));
  STRATA_RETURN_IF_ERROR(checkOverlap(send, bytes, recv, bytes, recv));
  return makeCall(Collective::kAllReduce, send, recv, count, type, op, 0);
}

StatusOr<Call> reduceScatterCall(strataComm* comm, const void* send, void* recv, size_t recvcount,
                                 strataDataType_t type, strataRedOp_t op) {
  STRATA_RETURN_IF_ERROR(checkComm(comm));
  STRATA_RETURN_IF_ERROR(checkTypeOp(type, op, true));
  const int nranks = comm->impl->size(), rank = comm->impl->rank();
  size_t sendBytes = 0, recvBytes = 0;
  STRATA_RETURN_IF_ERROR(byteSize(recvcount, nranks, type, "recvcount", &sendBytes));
  STRATA_RETURN_IF_ERROR(byteSize(recvcount, 1, type, "recvcount", &recvBytes));
  STRATA_RETURN_IF_ERROR(checkBuffers(send, recv, recvcount));
  const void* inPlaceRecv = static_cast<const char*>(send) + rank * recvBytes;
  if (recv != inPlaceRecv) {
    STRATA_RETURN_IF_ERROR(checkOverlap(send, sendBytes, recv, recvBytes, nullptr));
  }
  return makeCall(Collective::kReduceScatter, send, recv, recvcount, type, op, 0);
}

StatusOr<Call> allGatherCall(strataComm* comm, const void* send, void* recv, size_t sendcount,
                             strataDataType_t type) {
  STRATA_RETURN_IF_ERROR(checkComm(comm));
  STRATA_RETURN_IF_ERROR(checkTypeOp(type, strataSum, false));
  const int nranks = comm->impl->size(), rank = comm->impl->rank();
  size_t sendBytes = 0, recvBytes = 0;
  STRATA_RETURN_IF_ERROR(byteSize(sendcount, 1, type, "sendcount", &sendBytes));
  STRATA_RETURN_IF_ERROR(byteSize(sendcount, nranks, type, "sendcount", &recvBytes));
  STRATA_RETURN_IF_ERROR(checkBuffers(send, recv, sendcount));
  const void* inPlaceSend = static_cast<const char*>(recv) + rank * sendBytes;
  STRATA_RETURN_IF_ERROR(checkOverlap(send, sendBytes, recv, recvBytes, inPlaceSend));
  return makeCall(Collective::kAllGather, send, recv, sendcount, type, strataSum, 0);
}

// sendbuff is read on the root only; every rank writes recvbuff.
StatusOr<Call> broadcastCall(strataComm* comm, const void* send, void* recv, size_t count,
                             strataDataType_t type, int root) {
  STRATA_RETURN_IF_ERROR(checkComm(comm));
  STRATA_RETURN_IF_ERROR(checkTypeOp(type, strataSum, false));
  STRATA_RETURN_IF_ERROR(checkRank(comm, root, "root"));
  size_t bytes = 0;
  STRATA_RETURN_IF_ERROR(byteSize(count, 1, type, "count", &bytes));
  const bool isRoot = comm->impl->rank() == root;
  if (count > 0 && recv == nullptr) {
    return invalidArgument("recvbuff is NULL with count " + std::to_string(count));
  }
  if (count > 0 && isRoot && send == nullptr) {
    return invalidArgument("sendbuff is NULL on the root with count " + std::to_string(count));
  }
  if (isRoot) STRATA_RETURN_IF_ERROR(checkOverlap(send, bytes, recv, bytes, recv));
  return makeCall(Collective::kBroadcast, isRoot ? send : nullptr, recv, count, type, strataSum,
                  root);
}

// recvbuff is written on the root only; every rank reads sendbuff.
StatusOr<Call> reduceCall(strataComm* comm, const void* send, void* recv, size_t count,
                          strataDataType_t type, strataRedOp_t op, int root) {
  STRATA_RETURN_IF_ERROR(checkComm(comm));
  STRATA_RETURN_IF_ERROR(checkTypeOp(type, op, true));
  STRATA_RETURN_IF_ERROR(checkRank(comm, root, "root"));
  size_t bytes = 0;
  STRATA_RETURN_IF_ERROR(byteSize(count, 1, type, "count", &bytes));
  const bool isRoot = comm->impl->rank() == root;
  if (count > 0 && send == nullptr) {
    return invalidArgument("sendbuff is NULL with count " + std::to_string(count));
  }
  if (count > 0 && isRoot && recv == nullptr) {
    return invalidArgument("recvbuff is NULL on the root with count " + std::to_string(count));
  }
  if (isRoot) STRATA_RETURN_IF_ERROR(checkOverlap(send, bytes, recv, bytes, recv));
  return makeCall(Collective::kReduce, send, isRoot ? recv : nullptr, count, type, op, root);
}

StatusOr<Call> peerCall(strataComm* comm, Collective coll, void* buf, size_t count,
                        strataDataType_t type, int peer) {
  STRATA_RETURN_IF_ERROR(checkComm(comm));
  STRATA_RETURN_IF_ERROR(checkTypeOp(type, strataSum, false));
  STRATA_RETURN_IF_ERROR(checkRank(comm, peer, "peer"));
  size_t bytes = 0;
  STRATA_RETURN_IF_ERROR(byteSize(count, 1, type, "count", &bytes));
  const bool send = coll == Collective::kSend;
  if (count > 0 && buf == nullptr) {
    return invalidArgument(std::string(send ? "sendbuff" : "recvbuff") + " is NULL with count " +
                           std::to_string(count));
  }
  return makeCall(coll, send ? buf : nullptr, send ? nullptr : buf, count, type, strataSum, peer);
}

// A validated call: recorded inside a group, else issued.
Status submit(strataComm* comm, const Call& call, strataStream_t stream) {
  if (inGroup()) {
    record(comm, core::GroupCall{call, stream, false}, nullptr);
    return Status::ok();
  }
  return core::issue(*comm->impl, call, stream);
}

// A validated nonblocking call: recorded inside a group (its request follows the group), else
// queued. *request is set only on success.
Status submitNonblocking(strataComm* comm, const Call& call, strataRequest_t* request) {
  if (inGroup()) {
    strataRequest* r = newRequest();
    record(comm, core::GroupCall{call, nullptr, true}, r);
    *request = r;
    return Status::ok();
  }
  STRATA_ASSIGN_OR_RETURN(uint64_t ticket, core::issueNonblocking(*comm->impl, call));
  strataRequest* r = newRequest();
  r->engine = comm->impl->sharedEngine();
  r->ticket = ticket;
  *request = r;
  return Status::ok();
}

Status checkRequestOut(strataRequest_t* request) {
  if (request == nullptr) return invalidArgument("request is NULL");
  return Status::ok();
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
    STRATA_ASSIGN_OR_RETURN(Call call,
                            allReduceCall(comm, sendbuff, recvbuff, count, datatype, op));
    return submit(comm, call, stream);
  });
}

strataResult_t strataReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                   strataDataType_t datatype, strataRedOp_t op, strataComm_t comm,
                                   strataStream_t stream) {
  return guarded(comm, "strataReduceScatter", [&]() -> Status {
    STRATA_ASSIGN_OR_RETURN(Call call,
                            reduceScatterCall(comm, sendbuff, recvbuff, recvcount, datatype, op));
    return submit(comm, call, stream);
  });
}

strataResult_t strataAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                               strataDataType_t datatype, strataComm_t comm,
                               strataStream_t stream) {
  return guarded(comm, "strataAllGather", [&]() -> Status {
    STRATA_ASSIGN_OR_RETURN(Call call,
                            allGatherCall(comm, sendbuff, recvbuff, sendcount, datatype));
    return submit(comm, call, stream);
  });
}

strataResult_t strataBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                               strataDataType_t datatype, int root, strataComm_t comm,
                               strataStream_t stream) {
  return guarded(comm, "strataBroadcast", [&]() -> Status {
    STRATA_ASSIGN_OR_RETURN(Call call,
                            broadcastCall(comm, sendbuff, recvbuff, count, datatype, root));
    return submit(comm, call, stream);
  });
}

strataResult_t strataBcast(void* buff, size_t count, strataDataType_t datatype, int root,
                           strataComm_t comm, strataStream_t stream) {
  return guarded(comm, "strataBcast", [&]() -> Status {
    STRATA_ASSIGN_OR_RETURN(Call call, broadcastCall(comm, buff, buff, count, datatype, root));
    return submit(comm, call, stream);
  });
}

strataResult_t strataReduce(const void* sendbuff, void* recvbuff, size_t count,
                            strataDataType_t datatype, strataRedOp_t op, int root,
                            strataComm_t comm, strataStream_t stream) {
  return guarded(comm, "strataReduce", [&]() -> Status {
    STRATA_ASSIGN_OR_RETURN(Call call,
                            reduceCall(comm, sendbuff, recvbuff, count, datatype, op, root));
    return submit(comm, call, stream);
  });
}

strataResult_t strataSend(const void* sendbuff, size_t count, strataDataType_t datatype, int peer,
                          strataComm_t comm, strataStream_t stream) {
  return guarded(comm, "strataSend", [&]() -> Status {
    STRATA_ASSIGN_OR_RETURN(
        Call call,
        peerCall(comm, Collective::kSend, const_cast<void*>(sendbuff), count, datatype, peer));
    return submit(comm, call, stream);
  });
}

strataResult_t strataRecv(void* recvbuff, size_t count, strataDataType_t datatype, int peer,
                          strataComm_t comm, strataStream_t stream) {
  return guarded(comm, "strataRecv", [&]() -> Status {
    STRATA_ASSIGN_OR_RETURN(Call call,
                            peerCall(comm, Collective::kRecv, recvbuff, count, datatype, peer));
    return submit(comm, call, stream);
  });
}

strataResult_t strataGroupStart(void) {
  return guarded(nullptr, "strataGroupStart", [&]() -> Status {
    groupStart();
    return Status::ok();
  });
}

strataResult_t strataGroupEnd(void) {
  strataComm* failed = nullptr;
  Status st = Status::ok();
  const strataResult_t rc = guarded(nullptr, "strataGroupEnd", [&]() -> Status {
    st = groupEnd(&failed);
    return st;
  });
  // The error belongs to the communicator whose call failed, too.
  if (rc != strataSuccess && failed != nullptr && isLive(failed)) {
    failed->lastError = std::string("strataGroupEnd: ") + st.message();
  }
  return rc;
}

strataResult_t strataIAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                strataDataType_t datatype, strataRedOp_t op, strataComm_t comm,
                                strataRequest_t* request) {
  return guarded(comm, "strataIAllReduce", [&]() -> Status {
    STRATA_RETURN_IF_ERROR(checkRequestOut(request));
    STRATA_ASSIGN_OR_RETURN(Call call,
                            allReduceCall(comm, sendbuff, recvbuff, count, datatype, op));
    return submitNonblocking(comm, call, request);
  });
}

strataResult_t strataIReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                    strataDataType_t datatype, strataRedOp_t op, strataComm_t comm,
                                    strataRequest_t* request) {
  return guarded(comm, "strataIReduceScatter", [&]() -> Status {
    STRATA_RETURN_IF_ERROR(checkRequestOut(request));
    STRATA_ASSIGN_OR_RETURN(Call call,
                            reduceScatterCall(comm, sendbuff, recvbuff, recvcount, datatype, op));
    return submitNonblocking(comm, call, request);
  });
}

strataResult_t strataIAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                                strataDataType_t datatype, strataComm_t comm,
                                strataRequest_t* request) {
  return guarded(comm, "strataIAllGather", [&]() -> Status {
    STRATA_RETURN_IF_ERROR(checkRequestOut(request));
    STRATA_ASSIGN_OR_RETURN(Call call,
                            allGatherCall(comm, sendbuff, recvbuff, sendcount, datatype));
    return submitNonblocking(comm, call, request);
  });
}

strataResult_t strataIBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                                strataDataType_t datatype, int root, strataComm_t comm,
                                strataRequest_t* request) {
  return guarded(comm, "strataIBroadcast", [&]() -> Status {
    STRATA_RETURN_IF_ERROR(checkRequestOut(request));
    STRATA_ASSIGN_OR_RETURN(Call call,
                            broadcastCall(comm, sendbuff, recvbuff, count, datatype, root));
    return submitNonblocking(comm, call, request);
  });
}

strataResult_t strataIReduce(const void* sendbuff, void* recvbuff, size_t count,
                             strataDataType_t datatype, strataRedOp_t op, int root,
                             strataComm_t comm, strataRequest_t* request) {
  return guarded(comm, "strataIReduce", [&]() -> Status {
    STRATA_RETURN_IF_ERROR(checkRequestOut(request));
    STRATA_ASSIGN_OR_RETURN(Call call,
                            reduceCall(comm, sendbuff, recvbuff, count, datatype, op, root));
    return submitNonblocking(comm, call, request);
  });
}

}  // extern "C"
