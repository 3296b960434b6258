// strataAllToAll, strataGather and strataScatter (NCCL 2.28's ncclAlltoAll, ncclGather and
// ncclScatter). As NCCL does, each is the group of point-to-point calls it stands for: every
// argument is validated first, then the sends and receives are recorded in one group (the
// caller's, when it is inside one; else a group of their own, issued before returning), so the
// engine posts them together and no order of ranks can deadlock. A rank's block for itself is a
// send and a receive to itself, which the fabrics copy, except in the in-place arrangements,
// where it is already where it belongs.
#include <string>
#include <vector>

#include "api/call_args.h"
#include "api/group.h"
#include "api/guard.h"
#include "api/handle.h"
#include "strata/strata.h"

namespace strata::api {
namespace {

// One send or receive of `count` elements at block `block` of `buf`.
struct Part {
  Collective coll;
  const char* buf;
  size_t block;
  int peer;
};

// Records `parts` as calls of `handle`, inside the caller's group or a group of their own.
// Every argument was validated: recording cannot fail half-way.
Status submitParts(strataComm_t handle, const std::vector<Part>& parts, size_t count, int type,
                   size_t blockBytes, strataStream_t stream) {
  if (count == 0) return Status::ok();
  const bool own = !inGroup();
  if (own) groupStart();
  for (const Part& p : parts) {
    char* at = const_cast<char*>(p.buf) + p.block * blockBytes;
    const bool send = p.coll == Collective::kSend;
    record(handle,
           core::GroupCall{makeCall(p.coll, send ? at : nullptr, send ? nullptr : at, count, type,
                                    0, p.peer),
                           stream, false},
           nullptr);
  }
  if (!own) return Status::ok();
  strataComm_t failed = nullptr;
  return groupEnd(&failed);
}

// The common checks: the type, the root (when `rooted`) and the block size.
Status checkExchange(const CommEntry& c, int type, bool rooted, int root, size_t count,
                     size_t* blockBytes, size_t* allBytes) {
  STRATA_RETURN_IF_ERROR(checkTypeOp(type, 0, false));
  if (rooted) STRATA_RETURN_IF_ERROR(checkRank(c, root, "root"));
  STRATA_RETURN_IF_ERROR(byteSize(count, 1, type, "count", blockBytes));
  return byteSize(count, static_cast<size_t>(c.impl->size()), type, "count", allBytes);
}

Status allToAll(strataComm_t handle, const void* send, void* recv, size_t count, int type,
                strataStream_t stream) {
  STRATA_ASSIGN_OR_RETURN(CommEntry * c, liveComm(handle));
  size_t block = 0, all = 0;
  STRATA_RETURN_IF_ERROR(checkExchange(*c, type, false, 0, count, &block, &all));
  STRATA_RETURN_IF_ERROR(checkBuffers(send, recv, count));
  if (count > 0) STRATA_RETURN_IF_ERROR(checkOverlap(send, all, recv, all, nullptr));
  std::vector<Part> parts;
  for (int peer = 0; peer < c->impl->size(); ++peer) {
    parts.push_back({Collective::kSend, static_cast<const char*>(send), size_t(peer), peer});
    parts.push_back({Collective::kRecv, static_cast<char*>(recv), size_t(peer), peer});
  }
  return submitParts(handle, parts, count, type, block, stream);
}

// Gather (`gather`) or scatter: the root's side moves nranks blocks through `many`, every
// rank's side one block through `one`.
Status rootedExchange(strataComm_t handle, bool gather, const void* send, void* recv,
                      size_t count, int type, int root, strataStream_t stream) {
  STRATA_ASSIGN_OR_RETURN(CommEntry * c, liveComm(handle));
  size_t block = 0, all = 0;
  STRATA_RETURN_IF_ERROR(checkExchange(*c, type, true, root, count, &block, &all));
  const int me = c->impl->rank(), n = c->impl->size();
  const bool isRoot = me == root;
  const char* one = gather ? static_cast<const char*>(send) : static_cast<const char*>(recv);
  const char* many = gather ? static_cast<const char*>(recv) : static_cast<const char*>(send);
  const char* oneName = gather ? "sendbuff" : "recvbuff";
  const char* manyName = gather ? "recvbuff" : "sendbuff";
  if (count > 0 && one == nullptr) {
    return invalidArgument(std::string(oneName) + " is NULL with count " + std::to_string(count));
  }
  if (count > 0 && isRoot && many == nullptr) {
    return invalidArgument(std::string(manyName) + " is NULL on the root with count " +
                           std::to_string(count));
  }
  // In place: the root's own block already sits at its place in the big buffer.
  const bool inPlace = isRoot && count > 0 && one == many + size_t(root) * block;
  if (isRoot && count > 0 && !inPlace) {
    const bool overlap = one < many + all && many < one + block;
    if (overlap) return invalidArgument("sendbuff and recvbuff overlap but are not in place");
  }
  const Collective toRoot = gather ? Collective::kSend : Collective::kRecv;
  const Collective fromRoot = gather ? Collective::kRecv : Collective::kSend;
  std::vector<Part> parts;
  if (!inPlace) parts.push_back({toRoot, one, 0, root});
  if (isRoot) {
    for (int peer = 0; peer < n; ++peer) {
      if (peer == root && inPlace) continue;
      parts.push_back({fromRoot, many, size_t(peer), peer});
    }
  }
  return submitParts(handle, parts, count, type, block, stream);
}

}  // namespace
}  // namespace strata::api

using namespace strata;       // NOLINT: the C entry points below are thin wrappers
using namespace strata::api;  // NOLINT

extern "C" {

strataResult_t strataAllToAll(const void* sendbuff, void* recvbuff, size_t count,
                              strataDataType_t datatype, strataComm_t comm,
                              strataStream_t stream) {
  const int type = rawEnum(datatype);
  return guarded(comm, "strataAllToAll", [&]() -> Status {
    return allToAll(comm, sendbuff, recvbuff, count, type, stream);
  });
}

strataResult_t strataGather(const void* sendbuff, void* recvbuff, size_t count,
                            strataDataType_t datatype, int root, strataComm_t comm,
                            strataStream_t stream) {
  const int type = rawEnum(datatype);
  return guarded(comm, "strataGather", [&]() -> Status {
    return rootedExchange(comm, true, sendbuff, recvbuff, count, type, root, stream);
  });
}

strataResult_t strataScatter(const void* sendbuff, void* recvbuff, size_t count,
                             strataDataType_t datatype, int root, strataComm_t comm,
                             strataStream_t stream) {
  const int type = rawEnum(datatype);
  return guarded(comm, "strataScatter", [&]() -> Status {
    return rootedExchange(comm, false, sendbuff, recvbuff, count, type, root, stream);
  });
}

}  // extern "C"
