// The C boundary for collectives: each entry validates its arguments against NCCL's rules,
// describes the call once (common/collective.h) and issues it (core/calls.h), or records it
// when the thread is inside a group (api/group.h).
#include <string>

#include "api/call_args.h"
#include "api/group.h"
#include "api/guard.h"
#include "api/handle.h"
#include "api/request.h"
#include "core/calls.h"
#include "strata/strata.h"

namespace strata::api {

Call makeCall(Collective coll, const void* send, void* recv, size_t count, int type, int op,
              int root) {
  Call c;
  c.coll = coll;
  c.send = send;
  c.recv = recv;
  c.count = count;
  c.type = static_cast<strataDataType_t>(type);
  c.op = static_cast<strataRedOp_t>(op);
  c.root = root;
  return c;
}

Status checkRank(const CommEntry& comm, int rank, const char* what) {
  const int n = comm.impl->size();
  if (rank < 0 || rank >= n) {
    return invalidArgument(std::string(what) + " " + std::to_string(rank) +
                           " is not a rank of the communicator (0.." + std::to_string(n - 1) + ")");
  }
  return Status::ok();
}

namespace {

StatusOr<Call> allReduceCall(const CommEntry& comm, const void* send, void* recv, size_t count,
                             int type, int op) {
  STRATA_RETURN_IF_ERROR(checkTypeOp(type, op, true));
  size_t bytes = 0;
  STRATA_RETURN_IF_ERROR(byteSize(count, 1, type, "count", &bytes));
  STRATA_RETURN_IF_ERROR(checkBuffers(send, recv, count));
  STRATA_RETURN_IF_ERROR(checkOverlap(send, bytes, recv, bytes, recv));
  return makeCall(Collective::kAllReduce, send, recv, count, type, op, 0);
}

StatusOr<Call> reduceScatterCall(const CommEntry& comm, const void* send, void* recv,
                                 size_t recvcount, int type, int op) {
  STRATA_RETURN_IF_ERROR(checkTypeOp(type, op, true));
  const int nranks = comm.impl->size(), rank = comm.impl->rank();
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

StatusOr<Call> allGatherCall(const CommEntry& comm, const void* send, void* recv, size_t sendcount,
                             int type) {
  STRATA_RETURN_IF_ERROR(checkTypeOp(type, 0, false));
  const int nranks = comm.impl->size(), rank = comm.impl->rank();
  size_t sendBytes = 0, recvBytes = 0;
  STRATA_RETURN_IF_ERROR(byteSize(sendcount, 1, type, "sendcount", &sendBytes));
  STRATA_RETURN_IF_ERROR(byteSize(sendcount, nranks, type, "sendcount", &recvBytes));
  STRATA_RETURN_IF_ERROR(checkBuffers(send, recv, sendcount));
  const void* inPlaceSend = static_cast<const char*>(recv) + rank * sendBytes;
  STRATA_RETURN_IF_ERROR(checkOverlap(send, sendBytes, recv, recvBytes, inPlaceSend));
  return makeCall(Collective::kAllGather, send, recv, sendcount, type, 0, 0);
}

// sendbuff is read on the root only; every rank writes recvbuff.
StatusOr<Call> broadcastCall(const CommEntry& comm, const void* send, void* recv, size_t count,
                             int type, int root) {
  STRATA_RETURN_IF_ERROR(checkTypeOp(type, 0, false));
  STRATA_RETURN_IF_ERROR(checkRank(comm, root, "root"));
  size_t bytes = 0;
  STRATA_RETURN_IF_ERROR(byteSize(count, 1, type, "count", &bytes));
  const bool isRoot = comm.impl->rank() == root;
  if (count > 0 && recv == nullptr) {
    return invalidArgument("recvbuff is NULL with count " + std::to_string(count));
  }
  if (count > 0 && isRoot && send == nullptr) {
    return invalidArgument("sendbuff is NULL on the root with count " + std::to_string(count));
  }
  if (isRoot) STRATA_RETURN_IF_ERROR(checkOverlap(send, bytes, recv, bytes, recv));
  return makeCall(Collective::kBroadcast, isRoot ? send : nullptr, recv, count, type, 0, root);
}

// recvbuff is written on the root only; every rank reads sendbuff.
StatusOr<Call> reduceCall(const CommEntry& comm, const void* send, void* recv, size_t count,
                          int type, int op, int root) {
  STRATA_RETURN_IF_ERROR(checkTypeOp(type, op, true));
  STRATA_RETURN_IF_ERROR(checkRank(comm, root, "root"));
  size_t bytes = 0;
  STRATA_RETURN_IF_ERROR(byteSize(count, 1, type, "count", &bytes));
  const bool isRoot = comm.impl->rank() == root;
  if (count > 0 && send == nullptr) {
    return invalidArgument("sendbuff is NULL with count " + std::to_string(count));
  }
  if (count > 0 && isRoot && recv == nullptr) {
    return invalidArgument("recvbuff is NULL on the root with count " + std::to_string(count));
  }
  if (isRoot) STRATA_RETURN_IF_ERROR(checkOverlap(send, bytes, recv, bytes, recv));
  return makeCall(Collective::kReduce, send, isRoot ? recv : nullptr, count, type, op, root);
}

StatusOr<Call> peerCall(const CommEntry& comm, Collective coll, void* buf, size_t count, int type,
                        int peer) {
  STRATA_RETURN_IF_ERROR(checkTypeOp(type, 0, false));
  STRATA_RETURN_IF_ERROR(checkRank(comm, peer, "peer"));
  size_t bytes = 0;
  STRATA_RETURN_IF_ERROR(byteSize(count, 1, type, "count", &bytes));
  const bool send = coll == Collective::kSend;
  if (count > 0 && buf == nullptr) {
    return invalidArgument(std::string(send ? "sendbuff" : "recvbuff") + " is NULL with count " +
                           std::to_string(count));
  }
  return makeCall(coll, send ? buf : nullptr, send ? nullptr : buf, count, type, 0, peer);
}

// A validated call: recorded inside a group, else issued.
Status submit(strataComm_t handle, CommEntry& comm, Call call, strataStream_t stream) {
  call.site = CallSiteScope::current();
  if (inGroup()) {
    record(handle, core::GroupCall{call, stream, false}, nullptr);
    return Status::ok();
  }
  return core::issue(*comm.impl, call, stream);
}

// A validated nonblocking call: recorded inside a group (its request follows the group), else
// queued. *request is set only on success.
Status submitNonblocking(strataComm_t handle, CommEntry& comm, Call call,
                         strataRequest_t* request) {
  call.site = CallSiteScope::current();
  if (inGroup()) {
    strataRequest* r = newRequest(handle);
    record(handle, core::GroupCall{call, nullptr, true}, r);
    *request = r;
    return Status::ok();
  }
  STRATA_ASSIGN_OR_RETURN(uint64_t ticket, core::issueNonblocking(*comm.impl, call));
  strataRequest* r = newRequest(handle);
  r->engine = comm.impl->sharedEngine();
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
  STRATA_NOTE_CALL_SITE();
  const int type = rawEnum(datatype);
  const int rop = rawEnum(op);
  return guarded(comm, "strataAllReduce", [&]() -> Status {
    STRATA_ASSIGN_OR_RETURN(CommEntry * c, liveComm(comm));
    STRATA_ASSIGN_OR_RETURN(Call call, allReduceCall(*c, sendbuff, recvbuff, count, type, rop));
    return submit(comm, *c, call, stream);
  });
}

strataResult_t strataReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                   strataDataType_t datatype, strataRedOp_t op, strataComm_t comm,
                                   strataStream_t stream) {
  STRATA_NOTE_CALL_SITE();
  const int type = rawEnum(datatype);
  const int rop = rawEnum(op);
  return guarded(comm, "strataReduceScatter", [&]() -> Status {
    STRATA_ASSIGN_OR_RETURN(CommEntry * c, liveComm(comm));
    STRATA_ASSIGN_OR_RETURN(Call call,
                            reduceScatterCall(*c, sendbuff, recvbuff, recvcount, type, rop));
    return submit(comm, *c, call, stream);
  });
}

strataResult_t strataAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                               strataDataType_t datatype, strataComm_t comm,
                               strataStream_t stream) {
  STRATA_NOTE_CALL_SITE();
  const int type = rawEnum(datatype);
  return guarded(comm, "strataAllGather", [&]() -> Status {
    STRATA_ASSIGN_OR_RETURN(CommEntry * c, liveComm(comm));
    STRATA_ASSIGN_OR_RETURN(Call call, allGatherCall(*c, sendbuff, recvbuff, sendcount, type));
    return submit(comm, *c, call, stream);
  });
}

strataResult_t strataBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                               strataDataType_t datatype, int root, strataComm_t comm,
                               strataStream_t stream) {
  STRATA_NOTE_CALL_SITE();
  const int type = rawEnum(datatype);
  return guarded(comm, "strataBroadcast", [&]() -> Status {
    STRATA_ASSIGN_OR_RETURN(CommEntry * c, liveComm(comm));
    STRATA_ASSIGN_OR_RETURN(Call call, broadcastCall(*c, sendbuff, recvbuff, count, type, root));
    return submit(comm, *c, call, stream);
  });
}

strataResult_t strataBcast(void* buff, size_t count, strataDataType_t datatype, int root,
                           strataComm_t comm, strataStream_t stream) {
  STRATA_NOTE_CALL_SITE();
  const int type = rawEnum(datatype);
  return guarded(comm, "strataBcast", [&]() -> Status {
    STRATA_ASSIGN_OR_RETURN(CommEntry * c, liveComm(comm));
    STRATA_ASSIGN_OR_RETURN(Call call, broadcastCall(*c, buff, buff, count, type, root));
    return submit(comm, *c, call, stream);
  });
}

strataResult_t strataReduce(const void* sendbuff, void* recvbuff, size_t count,
                            strataDataType_t datatype, strataRedOp_t op, int root,
                            strataComm_t comm, strataStream_t stream) {
  STRATA_NOTE_CALL_SITE();
  const int type = rawEnum(datatype);
  const int rop = rawEnum(op);
  return guarded(comm, "strataReduce", [&]() -> Status {
    STRATA_ASSIGN_OR_RETURN(CommEntry * c, liveComm(comm));
    STRATA_ASSIGN_OR_RETURN(Call call, reduceCall(*c, sendbuff, recvbuff, count, type, rop, root));
    return submit(comm, *c, call, stream);
  });
}

strataResult_t strataSend(const void* sendbuff, size_t count, strataDataType_t datatype, int peer,
                          strataComm_t comm, strataStream_t stream) {
  const int type = rawEnum(datatype);
  return guarded(comm, "strataSend", [&]() -> Status {
    STRATA_ASSIGN_OR_RETURN(CommEntry * c, liveComm(comm));
    STRATA_ASSIGN_OR_RETURN(
        Call call, peerCall(*c, Collective::kSend, const_cast<void*>(sendbuff), count, type, peer));
    return submit(comm, *c, call, stream);
  });
}

strataResult_t strataRecv(void* recvbuff, size_t count, strataDataType_t datatype, int peer,
                          strataComm_t comm, strataStream_t stream) {
  const int type = rawEnum(datatype);
  return guarded(comm, "strataRecv", [&]() -> Status {
    STRATA_ASSIGN_OR_RETURN(CommEntry * c, liveComm(comm));
    STRATA_ASSIGN_OR_RETURN(Call call,
                            peerCall(*c, Collective::kRecv, recvbuff, count, type, peer));
    return submit(comm, *c, call, stream);
  });
}

strataResult_t strataIprobe(int peer, strataComm_t comm, int* flag, int* source, size_t* bytes) {
  return guarded(comm, "strataIprobe", [&]() -> Status {
    STRATA_ASSIGN_OR_RETURN(CommEntry * c, liveComm(comm));
    if (flag == nullptr || source == nullptr || bytes == nullptr) {
      return invalidArgument("flag, source and bytes must not be NULL");
    }
    *flag = 0;
    *source = -1;
    *bytes = 0;
    if (peer != STRATA_ANY_SOURCE) STRATA_RETURN_IF_ERROR(checkRank(*c, peer, "peer"));
    if (inGroup()) return invalidUsage("strataIprobe inside a group (strataGroupStart)");
    bool found = false;
    STRATA_RETURN_IF_ERROR(core::probe(*c->impl, peer, &found, source, bytes));
    *flag = found ? 1 : 0;
    return Status::ok();
  });
}

strataResult_t strataGroupStart(void) {
  return guarded(nullptr, "strataGroupStart", [&]() -> Status {
    groupStart();
    return Status::ok();
  });
}

strataResult_t strataGroupEnd(void) {
  strataComm_t failed = nullptr;
  Status st = Status::ok();
  const strataResult_t rc = guarded(nullptr, "strataGroupEnd", [&]() -> Status {
    st = groupEnd(&failed);
    return st;
  });
  // The error belongs to the communicator whose call failed, too.
  if (rc != strataSuccess) {
    if (CommEntry* c = lookupComm(failed))
      c->lastError = std::string("strataGroupEnd: ") + st.message();
  }
  return rc;
}

strataResult_t strataIAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                                strataDataType_t datatype, strataRedOp_t op, strataComm_t comm,
                                strataRequest_t* request) {
  STRATA_NOTE_CALL_SITE();
  const int type = rawEnum(datatype);
  const int rop = rawEnum(op);
  return guarded(comm, "strataIAllReduce", [&]() -> Status {
    STRATA_RETURN_IF_ERROR(checkRequestOut(request));
    STRATA_ASSIGN_OR_RETURN(CommEntry * c, liveComm(comm));
    STRATA_ASSIGN_OR_RETURN(Call call, allReduceCall(*c, sendbuff, recvbuff, count, type, rop));
    return submitNonblocking(comm, *c, call, request);
  });
}

strataResult_t strataIReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                                    strataDataType_t datatype, strataRedOp_t op, strataComm_t comm,
                                    strataRequest_t* request) {
  STRATA_NOTE_CALL_SITE();
  const int type = rawEnum(datatype);
  const int rop = rawEnum(op);
  return guarded(comm, "strataIReduceScatter", [&]() -> Status {
    STRATA_RETURN_IF_ERROR(checkRequestOut(request));
    STRATA_ASSIGN_OR_RETURN(CommEntry * c, liveComm(comm));
    STRATA_ASSIGN_OR_RETURN(Call call,
                            reduceScatterCall(*c, sendbuff, recvbuff, recvcount, type, rop));
    return submitNonblocking(comm, *c, call, request);
  });
}

strataResult_t strataIAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                                strataDataType_t datatype, strataComm_t comm,
                                strataRequest_t* request) {
  STRATA_NOTE_CALL_SITE();
  const int type = rawEnum(datatype);
  return guarded(comm, "strataIAllGather", [&]() -> Status {
    STRATA_RETURN_IF_ERROR(checkRequestOut(request));
    STRATA_ASSIGN_OR_RETURN(CommEntry * c, liveComm(comm));
    STRATA_ASSIGN_OR_RETURN(Call call, allGatherCall(*c, sendbuff, recvbuff, sendcount, type));
    return submitNonblocking(comm, *c, call, request);
  });
}

strataResult_t strataIBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                                strataDataType_t datatype, int root, strataComm_t comm,
                                strataRequest_t* request) {
  STRATA_NOTE_CALL_SITE();
  const int type = rawEnum(datatype);
  return guarded(comm, "strataIBroadcast", [&]() -> Status {
    STRATA_RETURN_IF_ERROR(checkRequestOut(request));
    STRATA_ASSIGN_OR_RETURN(CommEntry * c, liveComm(comm));
    STRATA_ASSIGN_OR_RETURN(Call call, broadcastCall(*c, sendbuff, recvbuff, count, type, root));
    return submitNonblocking(comm, *c, call, request);
  });
}

strataResult_t strataIReduce(const void* sendbuff, void* recvbuff, size_t count,
                             strataDataType_t datatype, strataRedOp_t op, int root,
                             strataComm_t comm, strataRequest_t* request) {
  STRATA_NOTE_CALL_SITE();
  const int type = rawEnum(datatype);
  const int rop = rawEnum(op);
  return guarded(comm, "strataIReduce", [&]() -> Status {
    STRATA_RETURN_IF_ERROR(checkRequestOut(request));
    STRATA_ASSIGN_OR_RETURN(CommEntry * c, liveComm(comm));
    STRATA_ASSIGN_OR_RETURN(Call call, reduceCall(*c, sendbuff, recvbuff, count, type, rop, root));
    return submitNonblocking(comm, *c, call, request);
  });
}

}  // extern "C"
