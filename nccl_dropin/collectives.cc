// The drop-in's collectives, point-to-point calls and groups: strata's, or the real NCCL's where
// STRATA_NCCL_FALLBACK forwards the collective or strata lacks the type or operation (fp8
// types, pre-multiplied sums). Host buffers are accepted (NCCL refuses them): strata serves
// both.
#include <string>

#include "dropin.h"

using namespace strata::nccl_dropin;  // NOLINT

namespace {

constexpr int kNoOp = -1;

// Where a call goes. Sets *real when the real NCCL serves it; fails (recording why) when
// neither can.
ncclResult_t route(const ncclComm* comm, Coll coll, ncclDataType_t type, int op, const char* fn,
                   bool* real) {
  announce();
  if (comm == nullptr) return fail(ncclInvalidArgument, std::string(fn) + ": comm is NULL");
  const bool strataType = static_cast<int>(type) >= 0 && static_cast<int>(type) < strataNumTypes;
  const bool strataOp = op == kNoOp || (op >= 0 && op < strataNumOps);
  *real = comm->real != nullptr && (fallbackFor(coll) || !strataType || !strataOp);
  if (*real || (strataType && strataOp)) return ncclSuccess;
  return fail(ncclInvalidArgument,
              std::string(fn) + ": " +
                  (!strataType ? "datatype " + std::to_string(type) : "op " + std::to_string(op)) +
                  " is not one strata has; STRATA_NCCL_FALLBACK=all forwards such calls to NCCL");
}

strataDataType_t T(ncclDataType_t t) { return static_cast<strataDataType_t>(t); }
strataRedOp_t O(ncclRedOp_t op) { return static_cast<strataRedOp_t>(op); }
strataStream_t S(cudaStream_t s) { return reinterpret_cast<strataStream_t>(s); }

// Bytes of one element of `t`, for the real NCCL's side of the three below (which includes
// the fp8 types strata lacks).
size_t typeBytes(ncclDataType_t t) {
  switch (t) {
    case ncclFloat16:
    case ncclBfloat16:
      return 2;
    case ncclInt32:
    case ncclUint32:
    case ncclFloat32:
      return 4;
    case ncclInt64:
    case ncclUint64:
    case ncclFloat64:
      return 8;
    default:
      return 1;  // int8, uint8 and the fp8 types
  }
}

// Forwarded all-to-all, gather and scatter: the real NCCL's own sends and receives in a group of
// their own (ncclAlltoAll and its kin are only in NCCL 2.28 and later; these are in every NCCL
// since 2.7). `root` -1: all-to-all; else gather (`gather`) or scatter.
ncclResult_t realExchange(const void* sendbuff, void* recvbuff, size_t count,
                          ncclDataType_t datatype, int root, bool gather, ncclComm_t comm,
                          cudaStream_t stream) {
  const auto* nccl = realNccl();
  int n = 0, me = 0;
  if (auto rc = nccl->ncclCommCount(comm->real, &n)) return rc;
  if (auto rc = nccl->ncclCommUserRank(comm->real, &me)) return rc;
  const size_t block = count * typeBytes(datatype);
  auto* send = static_cast<const char*>(sendbuff);
  auto* recv = static_cast<char*>(recvbuff);
  if (auto rc = nccl->ncclGroupStart()) return rc;
  ncclResult_t rc = ncclSuccess;
  for (int peer = 0; peer < n && rc == ncclSuccess; ++peer) {
    const bool all = root < 0;
    if (all || (gather ? me == root : peer == root)) {  // a receive from peer
      char* at = all || gather ? recv + peer * block : recv;
      rc = nccl->ncclRecv(at, count, datatype, peer, comm->real, stream);
    }
    if (rc == ncclSuccess && (all || (gather ? peer == root : me == root))) {  // a send to peer
      const char* at = all || !gather ? send + peer * block : send;
      rc = nccl->ncclSend(at, count, datatype, peer, comm->real, stream);
    }
  }
  const ncclResult_t end = nccl->ncclGroupEnd();
  return rc != ncclSuccess ? rc : end;
}

}  // namespace

extern "C" {

ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                           ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                           cudaStream_t stream) {
  bool real = false;
  if (auto rc = route(comm, Coll::kAllReduce, datatype, op, "ncclAllReduce", &real)) return rc;
  if (real) {
    return realNccl()->ncclAllReduce(sendbuff, recvbuff, count, datatype, op, comm->real, stream);
  }
  return fromStrata(strataAllReduce(sendbuff, recvbuff, count, T(datatype), O(op), comm->strata,
                                    S(stream)),
                    comm->strata, "ncclAllReduce");
}

ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                               ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                               cudaStream_t stream) {
  bool real = false;
  if (auto rc = route(comm, Coll::kReduceScatter, datatype, op, "ncclReduceScatter", &real)) {
    return rc;
  }
  if (real) {
    return realNccl()->ncclReduceScatter(sendbuff, recvbuff, recvcount, datatype, op, comm->real,
                                         stream);
  }
  return fromStrata(strataReduceScatter(sendbuff, recvbuff, recvcount, T(datatype), O(op),
                                        comm->strata, S(stream)),
                    comm->strata, "ncclReduceScatter");
}

ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                           ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  bool real = false;
  if (auto rc = route(comm, Coll::kAllGather, datatype, kNoOp, "ncclAllGather", &real)) return rc;
  if (real) {
    return realNccl()->ncclAllGather(sendbuff, recvbuff, sendcount, datatype, comm->real, stream);
  }
  return fromStrata(
      strataAllGather(sendbuff, recvbuff, sendcount, T(datatype), comm->strata, S(stream)),
      comm->strata, "ncclAllGather");
}

ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                           ncclDataType_t datatype, int root, ncclComm_t comm,
                           cudaStream_t stream) {
  bool real = false;
  if (auto rc = route(comm, Coll::kBroadcast, datatype, kNoOp, "ncclBroadcast", &real)) return rc;
  if (real) {
    return realNccl()->ncclBroadcast(sendbuff, recvbuff, count, datatype, root, comm->real,
                                     stream);
  }
  return fromStrata(strataBroadcast(sendbuff, recvbuff, count, T(datatype), root, comm->strata,
                                    S(stream)),
                    comm->strata, "ncclBroadcast");
}

ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root,
                       ncclComm_t comm, cudaStream_t stream) {
  return ncclBroadcast(buff, buff, count, datatype, root, comm, stream);
}

ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count,
                        ncclDataType_t datatype, ncclRedOp_t op, int root, ncclComm_t comm,
                        cudaStream_t stream) {
  bool real = false;
  if (auto rc = route(comm, Coll::kReduce, datatype, op, "ncclReduce", &real)) return rc;
  if (real) {
    return realNccl()->ncclReduce(sendbuff, recvbuff, count, datatype, op, root, comm->real,
                                  stream);
  }
  return fromStrata(strataReduce(sendbuff, recvbuff, count, T(datatype), O(op), root,
                                 comm->strata, S(stream)),
                    comm->strata, "ncclReduce");
}

ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer,
                      ncclComm_t comm, cudaStream_t stream) {
  bool real = false;
  if (auto rc = route(comm, Coll::kSendRecv, datatype, kNoOp, "ncclSend", &real)) return rc;
  if (real) return realNccl()->ncclSend(sendbuff, count, datatype, peer, comm->real, stream);
  return fromStrata(strataSend(sendbuff, count, T(datatype), peer, comm->strata, S(stream)),
                    comm->strata, "ncclSend");
}

ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer,
                      ncclComm_t comm, cudaStream_t stream) {
  bool real = false;
  if (auto rc = route(comm, Coll::kSendRecv, datatype, kNoOp, "ncclRecv", &real)) return rc;
  if (real) return realNccl()->ncclRecv(recvbuff, count, datatype, peer, comm->real, stream);
  return fromStrata(strataRecv(recvbuff, count, T(datatype), peer, comm->strata, S(stream)),
                    comm->strata, "ncclRecv");
}

ncclResult_t ncclAlltoAll(const void* sendbuff, void* recvbuff, size_t count,
                          ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  bool real = false;
  if (auto rc = route(comm, Coll::kSendRecv, datatype, kNoOp, "ncclAlltoAll", &real)) return rc;
  if (real) return realExchange(sendbuff, recvbuff, count, datatype, -1, false, comm, stream);
  return fromStrata(strataAllToAll(sendbuff, recvbuff, count, T(datatype), comm->strata,
                                   S(stream)),
                    comm->strata, "ncclAlltoAll");
}

ncclResult_t ncclGather(const void* sendbuff, void* recvbuff, size_t count,
                        ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream) {
  bool real = false;
  if (auto rc = route(comm, Coll::kSendRecv, datatype, kNoOp, "ncclGather", &real)) return rc;
  if (real) return realExchange(sendbuff, recvbuff, count, datatype, root, true, comm, stream);
  return fromStrata(strataGather(sendbuff, recvbuff, count, T(datatype), root, comm->strata,
                                 S(stream)),
                    comm->strata, "ncclGather");
}

ncclResult_t ncclScatter(const void* sendbuff, void* recvbuff, size_t count,
                         ncclDataType_t datatype, int root, ncclComm_t comm, cudaStream_t stream) {
  bool real = false;
  if (auto rc = route(comm, Coll::kSendRecv, datatype, kNoOp, "ncclScatter", &real)) return rc;
  if (real) return realExchange(sendbuff, recvbuff, count, datatype, root, false, comm, stream);
  return fromStrata(strataScatter(sendbuff, recvbuff, count, T(datatype), root, comm->strata,
                                  S(stream)),
                    comm->strata, "ncclScatter");
}

// A group is both strata's and, when calls may be forwarded, the real NCCL's: each library
// issues the calls it was given at its own group end.
ncclResult_t ncclGroupStart() {
  announce();
  ncclResult_t rc = fromStrata(strataGroupStart(), nullptr, "ncclGroupStart");
  if (rc == ncclSuccess && anyFallback() && realNccl() != nullptr) rc = realNccl()->ncclGroupStart();
  return rc;
}

ncclResult_t ncclGroupEnd() {
  ncclResult_t real = ncclSuccess;
  if (anyFallback() && realNccl() != nullptr) real = realNccl()->ncclGroupEnd();
  const ncclResult_t mine = fromStrata(strataGroupEnd(), nullptr, "ncclGroupEnd");
  return mine != ncclSuccess ? mine : real;
}

}  // extern "C"
