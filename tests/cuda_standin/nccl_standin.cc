// NCCL on the CPU stand-in for CUDA (libstrata_nccl_standin.so, the STRATA_CUDA_STANDIN build's
// NCCL: strata's nccl fabric loads it as it loads a real NCCL). Pointers must be device memory,
// as NCCL checks.
//   - One member: every collective is a copy on the caller's stream, and point-to-point is a
//     send to itself matched with a receive in the same group.
//   - Several members (processes of one host, each on a GPU of its own: CUDA_STANDIN_OWN_GPU=1;
//     members on one GPU fail to join, as NCCL's "Duplicate GPU detected"): they meet in shared
//     memory (nccl_standin_shm.h, which states the protocol). Every call only enqueues: each
//     collective, and each group, is one launch on the caller's stream, and the members meet
//     when the stream's thread runs it, never on the calling thread. Errors met there are kept
//     for ncclCommGetAsyncError, and every later call on the communicator returns them.
//   - Not emulated, and refused with ncclInvalidUsage: ncclCommSplit of a communicator of
//     several members, several devices in one process (ncclCommInitAll of more than one),
//     PreMulSum ops, and one group whose operations name different streams.
#include <cuda_runtime.h>
#include <nccl.h>

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "nccl_standin_comm.h"
#include "nccl_standin_shm.h"
#include "standin.h"

using nccl_standin::Collective;
using nccl_standin::Kind;
using nccl_standin::MultiComm;
using nccl_standin::PeerOp;
using nccl_standin::asyncFailure;
using nccl_standin::checkComm;
using nccl_standin::failed;
using nccl_standin::kNcclKernel;
using nccl_standin::noteLaunch;

namespace {


struct PendingSend {
  const void* buf;
  size_t count;
  ncclDataType_t type;
};

thread_local std::string tLastError;
thread_local int tGroupDepth = 0;
thread_local ncclResult_t tGroupError = ncclSuccess;
// Inside a group, one-member communicators: sends to self not yet matched, and receives
// waiting for one.
struct PendingRecv {
  void* buf;
  size_t count;
  ncclDataType_t type;
  cudaStream_t stream;
};
thread_local std::vector<PendingSend> tSends;
thread_local std::vector<PendingRecv> tRecvs;
// Inside a group, communicators of several members: the collectives and the point-to-point
// operations issued, launched together at ncclGroupEnd.
struct Issued {
  ncclComm_t comm;
  cudaStream_t stream;
  bool collective;
  Collective c;
  PeerOp p;
};
thread_local std::vector<Issued> tIssued;

}  // namespace

namespace nccl_standin {

ncclResult_t failed(ncclComm_t comm, ncclResult_t rc, const std::string& why) {
  const std::string text = "NCCL stand-in: " + why;
  std::fprintf(stderr, "%s\n", text.c_str());
  tLastError = text;
  if (comm != nullptr) comm->lastError = text;
  if (tGroupDepth > 0 && tGroupError == ncclSuccess) tGroupError = rc;
  return rc;
}

ncclResult_t checkComm(ncclComm_t comm) {
  return comm == nullptr ? failed(nullptr, ncclInvalidArgument, "comm is NULL") : ncclSuccess;
}

}  // namespace nccl_standin

namespace {

ncclResult_t checkBuffer(ncclComm_t comm, const void* p, const char* which) {
  cudaPointerAttributes attr{};
  if (p == nullptr || cudaPointerGetAttributes(&attr, p) != cudaSuccess ||
      attr.type != cudaMemoryTypeDevice) {
    return failed(comm, ncclInvalidArgument, std::string(which) + " is not device memory");
  }
  return ncclSuccess;
}

// A device buffer that holds `bytes` (checked again when the operation runs).
ncclResult_t checkExtent(ncclComm_t comm, const void* p, size_t bytes, const char* which) {
  if (bytes == 0) return ncclSuccess;
  if (ncclResult_t rc = checkBuffer(comm, p, which); rc != ncclSuccess) return rc;
  cudaError_t err = cudaSuccess;
  if (cuda_standin::deviceAccess(p, bytes, &err) == nullptr) {
    return failed(comm, ncclInvalidArgument,
                  std::string(which) + " does not hold the " + std::to_string(bytes) +
                      " bytes the operation reaches");
  }
  return ncclSuccess;
}

ncclResult_t checkType(ncclComm_t comm, ncclDataType_t type) {
  if (static_cast<int>(type) < 0 || static_cast<int>(type) >= ncclNumTypes) {
    return failed(comm, ncclInvalidArgument, "invalid datatype " + std::to_string(type));
  }
  return ncclSuccess;
}

ncclResult_t checkOp(ncclComm_t comm, ncclRedOp_t op) {
  if (static_cast<int>(op) < 0 || static_cast<int>(op) >= ncclNumOps) {
    return failed(comm, ncclInvalidArgument,
                  "op " + std::to_string(op) + " (PreMulSum ops are not emulated)");
  }
  return ncclSuccess;
}

// The checks of one collective with the buffers `in` and `out` of `count` elements on a
// one-member communicator.
ncclResult_t checkCall(ncclComm_t comm, const void* in, void* out, size_t count,
                       ncclDataType_t type, int root) {
  if (ncclResult_t rc = checkComm(comm); rc != ncclSuccess) return rc;
  if (ncclResult_t rc = checkType(comm, type); rc != ncclSuccess) return rc;
  if (root != 0) {
    return failed(
        comm, ncclInvalidArgument,
        "root or peer " + std::to_string(root) + ": a one-member communicator has 0 only");
  }
  if (count == 0) return ncclSuccess;
  if (ncclResult_t rc = checkBuffer(comm, in, "sendbuff"); rc != ncclSuccess) return rc;
  return checkBuffer(comm, out, "recvbuff");
}

ncclResult_t copyOn(ncclComm_t comm, void* out, const void* in, size_t count, ncclDataType_t type,
                    cudaStream_t stream) {
  if (out == in || count == 0) return ncclSuccess;
  const cudaError_t e = cudaMemcpyAsync(out, in, count * nccl_standin::typeBytes(type),
                                        cudaMemcpyDeviceToDevice, stream);
  if (e != cudaSuccess) {
    return failed(comm, ncclUnhandledCudaError,
                  std::string("cudaMemcpyAsync: ") + cudaGetErrorString(e));
  }
  return ncclSuccess;
}

// One member's collective: a copy from `in` to `out` on `stream`.
ncclResult_t oneMember(ncclComm_t comm, const void* in, void* out, size_t count,
                       ncclDataType_t type, int root, cudaStream_t stream) {
  if (ncclResult_t rc = checkCall(comm, in, out, count, type, root); rc != ncclSuccess) return rc;
  return copyOn(comm, out, in, count, type, stream);
}

ncclResult_t notEmulated(ncclComm_t comm, const char* what) {
  return failed(comm, ncclInvalidUsage, std::string(what) + " is not emulated by the stand-in");
}


// One launch on `stream`: the collectives in issue order, then the point-to-point operations
// together. Its body only reads what it captured, so it can run again (a CUDA graph's replay):
// each run takes its own collective numbers and mailbox chunks.
ncclResult_t launch(const std::vector<Issued>& issued, cudaStream_t stream, std::string what) {
  std::vector<std::pair<std::shared_ptr<MultiComm>, Collective>> collectives;
  std::vector<std::pair<std::shared_ptr<MultiComm>, PeerOp>> peers;
  for (const Issued& i : issued) {
    if (i.collective) {
      collectives.emplace_back(i.comm->multi, i.c);
    } else {
      peers.emplace_back(i.comm->multi, i.p);
    }
  }
  const cudaError_t e =
      cuda_standin::launch(kNcclKernel, stream, std::move(what),
                           [collectives = std::move(collectives), peers = std::move(peers)] {
                             for (const auto& [comm, c] : collectives) comm->run(c);
                             if (!peers.empty()) MultiComm::runPeers(peers);
                           });
  if (e != cudaSuccess) {
    return failed(issued.front().comm, ncclUnhandledCudaError,
                  std::string("launch: ") + cudaGetErrorString(e));
  }
  std::vector<ncclComm_t> comms;
  for (const Issued& i : issued) {
    if (std::find(comms.begin(), comms.end(), i.comm) == comms.end()) comms.push_back(i.comm);
  }
  for (ncclComm_t c : comms) noteLaunch(c, stream);
  return ncclSuccess;
}

// Issues one operation of a communicator of several members: checked now, launched now (outside
// a group) or at ncclGroupEnd.
ncclResult_t issue(const Issued& op) {
  ncclComm_t comm = op.comm;
  std::string why;
  if (ncclResult_t rc = comm->multi->error(&why); rc != ncclSuccess) {
    return failed(comm, rc, "the communicator failed earlier: " + why);
  }
  if (tGroupDepth > 0) {
    tIssued.push_back(op);
    return ncclSuccess;
  }
  const std::string what =
      op.collective
          ? nccl_standin::describe(op.c)
          : (op.p.send ? "send to member " : "receive from member ") + std::to_string(op.p.peer);
  return launch({op}, op.stream,
                "NCCL " + what + " on member " + std::to_string(comm->rank) + " of " +
                    std::to_string(comm->nranks));
}

// A collective: one member copies; several issue it.
ncclResult_t collective(ncclComm_t comm, Kind kind, const void* in, void* out, size_t count,
                        ncclDataType_t type, ncclRedOp_t op, int root, cudaStream_t stream) {
  if (ncclResult_t rc = checkComm(comm); rc != ncclSuccess) return rc;
  const bool reducing =
      kind == Kind::kAllReduce || kind == Kind::kReduceScatter || kind == Kind::kReduce;
  if (reducing) {
    if (ncclResult_t rc = checkOp(comm, op); rc != ncclSuccess) return rc;
  }
  if (!comm->multi) return oneMember(comm, in, out, count, type, root, stream);
  if (ncclResult_t rc = checkType(comm, type); rc != ncclSuccess) return rc;
  if (root < 0 || root >= comm->nranks) {
    return failed(
        comm, ncclInvalidArgument,
        "root " + std::to_string(root) + " of " + std::to_string(comm->nranks) + " members");
  }
  if (count == 0) return ncclSuccess;
  Collective c;
  c.kind = kind;
  c.send = in;
  c.recv = out;
  c.count = count;
  c.type = type;
  c.op = reducing ? op : ncclSum;
  c.root = kind == Kind::kBroadcast || kind == Kind::kReduce ? root : 0;
  size_t sendBytes = 0, recvBytes = 0;
  nccl_standin::extents(c, comm->nranks, comm->rank, &sendBytes, &recvBytes);
  if (ncclResult_t rc = checkExtent(comm, in, sendBytes, "sendbuff"); rc != ncclSuccess) return rc;
  if (ncclResult_t rc = checkExtent(comm, out, recvBytes, "recvbuff"); rc != ncclSuccess) return rc;
  return issue({comm, stream, true, c, PeerOp{}});
}

// Point-to-point on a communicator of several members.
ncclResult_t peerOp(ncclComm_t comm, bool send, void* buf, size_t count, ncclDataType_t type,
                    int peer, cudaStream_t stream) {
  if (ncclResult_t rc = checkType(comm, type); rc != ncclSuccess) return rc;
  if (peer < 0 || peer >= comm->nranks) {
    return failed(
        comm, ncclInvalidArgument,
        "peer " + std::to_string(peer) + " of " + std::to_string(comm->nranks) + " members");
  }
  if (count == 0) return ncclSuccess;
  const size_t bytes = count * nccl_standin::typeBytes(type);
  if (ncclResult_t rc = checkExtent(comm, buf, bytes, send ? "sendbuff" : "recvbuff");
      rc != ncclSuccess) {
    return rc;
  }
  return issue({comm, stream, false, Collective{}, PeerOp{send, buf, count, type, peer}});
}


}  // namespace

extern "C" {


// The result's name; what went wrong is in ncclGetLastError and on stderr.
const char* ncclGetErrorString(ncclResult_t result) {
  static const char* const kNames[] = {
      "ncclSuccess",         "ncclUnhandledCudaError", "ncclSystemError", "ncclInternalError",
      "ncclInvalidArgument", "ncclInvalidUsage",       "ncclRemoteError", "ncclInProgress"};
  const int r = static_cast<int>(result);
  return r >= 0 && r < ncclNumResults ? kNames[r] : "an unknown ncclResult_t";
}

const char* ncclGetLastError(ncclComm_t comm) {
  return comm != nullptr ? comm->lastError.c_str() : tLastError.c_str();
}

ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                           ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                           cudaStream_t stream) {
  return collective(comm, Kind::kAllReduce, sendbuff, recvbuff, count, datatype, op, 0, stream);
}

ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                               ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                               cudaStream_t stream) {
  return collective(comm, Kind::kReduceScatter, sendbuff, recvbuff, recvcount, datatype, op, 0,
                    stream);
}

ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                           ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  return collective(comm, Kind::kAllGather, sendbuff, recvbuff, sendcount, datatype, ncclSum, 0,
                    stream);
}

ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                           ncclDataType_t datatype, int root, ncclComm_t comm,
                           cudaStream_t stream) {
  return collective(comm, Kind::kBroadcast, sendbuff, recvbuff, count, datatype, ncclSum, root,
                    stream);
}

ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root, ncclComm_t comm,
                       cudaStream_t stream) {
  return ncclBroadcast(buff, buff, count, datatype, root, comm, stream);
}

ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count, ncclDataType_t datatype,
                        ncclRedOp_t op, int root, ncclComm_t comm, cudaStream_t stream) {
  return collective(comm, Kind::kReduce, sendbuff, recvbuff, count, datatype, op, root, stream);
}

// Point-to-point. Several members: a send is delivered to the peer's receive of the same
// order. One member, with oneself: only inside a group, where the k-th send meets the k-th
// receive at ncclGroupEnd (outside one, a send to self would wait for ever in NCCL).
ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer,
                      ncclComm_t comm, cudaStream_t stream) {
  if (ncclResult_t rc = checkComm(comm); rc != ncclSuccess) return rc;
  if (comm->multi) {
    return peerOp(comm, true, const_cast<void*>(sendbuff), count, datatype, peer, stream);
  }
  if (ncclResult_t rc =
          checkCall(comm, sendbuff, const_cast<void*>(sendbuff), count, datatype, peer);
      rc != ncclSuccess) {
    return rc;
  }
  if (tGroupDepth == 0) return failed(comm, ncclInvalidUsage, "a send to self outside a group");
  tSends.push_back({sendbuff, count, datatype});
  return ncclSuccess;
}

ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer,
                      ncclComm_t comm, cudaStream_t stream) {
  if (ncclResult_t rc = checkComm(comm); rc != ncclSuccess) return rc;
  if (comm->multi) return peerOp(comm, false, recvbuff, count, datatype, peer, stream);
  if (ncclResult_t rc = checkCall(comm, recvbuff, recvbuff, count, datatype, peer);
      rc != ncclSuccess) {
    return rc;
  }
  if (tGroupDepth == 0)
    return failed(comm, ncclInvalidUsage, "a receive from self outside a group");
  tRecvs.push_back({recvbuff, count, datatype, stream});
  return ncclSuccess;
}

ncclResult_t ncclGroupStart() {
  if (tGroupDepth++ == 0) {
    tGroupError = ncclSuccess;
    tSends.clear();
    tRecvs.clear();
    tIssued.clear();
  }
  return ncclSuccess;
}

// Closes the outermost group: one-member sends meet their receives (copies), and the operations
// of communicators of several members go to their stream as one launch. After an error in the
// group nothing of it is launched.
ncclResult_t ncclGroupEnd() {
  if (tGroupDepth == 0) return failed(nullptr, ncclInvalidUsage, "ncclGroupEnd without a start");
  if (--tGroupDepth > 0) return ncclSuccess;
  ncclResult_t rc = tGroupError;
  if (rc == ncclSuccess && tSends.size() != tRecvs.size()) {
    rc = failed(nullptr, ncclInvalidUsage,
                std::to_string(tSends.size()) + " sends to self but " +
                    std::to_string(tRecvs.size()) + " receives: the rest would never complete");
  }
  for (size_t k = 0; rc == ncclSuccess && k < tSends.size(); ++k) {
    const PendingSend& s = tSends[k];
    const PendingRecv& r = tRecvs[k];
    if (s.count != r.count || s.type != r.type) {
      rc = failed(nullptr, ncclInvalidUsage,
                  "send " + std::to_string(k) +
                      " and its receive "
                      "differ in count or type");
    } else {
      rc = copyOn(nullptr, r.buf, s.buf, r.count, r.type, r.stream);
    }
  }
  if (rc == ncclSuccess && !tIssued.empty()) {
    const cudaStream_t stream = tIssued.front().stream;
    for (const Issued& i : tIssued) {
      if (i.stream != stream && rc == ncclSuccess) {
        rc = notEmulated(i.comm, "a group whose operations name different streams");
      }
    }
    if (rc == ncclSuccess) {
      rc = launch(tIssued, stream,
                  "NCCL group of " + std::to_string(tIssued.size()) + " operations on member " +
                      std::to_string(tIssued.front().comm->rank) + " of " +
                      std::to_string(tIssued.front().comm->nranks));
    }
  }
  tSends.clear();
  tRecvs.clear();
  tIssued.clear();
  return rc;
}

ncclResult_t ncclRedOpCreatePreMulSum(ncclRedOp_t*, void*, ncclDataType_t, ncclScalarResidence_t,
                                      ncclComm_t comm) {
  return notEmulated(comm, "ncclRedOpCreatePreMulSum");
}

ncclResult_t ncclRedOpDestroy(ncclRedOp_t, ncclComm_t comm) {
  return notEmulated(comm, "ncclRedOpDestroy");
}

ncclResult_t ncclMemAlloc(void** ptr, size_t size) {
  return cudaMalloc(ptr, size) == cudaSuccess
             ? ncclSuccess
             : failed(nullptr, ncclUnhandledCudaError, "cudaMalloc failed");
}

ncclResult_t ncclMemFree(void* ptr) {
  return cudaFree(ptr) == cudaSuccess ? ncclSuccess
                                      : failed(nullptr, ncclUnhandledCudaError, "cudaFree failed");
}

ncclResult_t ncclCommRegister(const ncclComm_t comm, void* buff, size_t, void** handle) {
  if (ncclResult_t rc = checkComm(comm); rc != ncclSuccess) return rc;
  if (handle == nullptr) return failed(comm, ncclInvalidArgument, "handle is NULL");
  *handle = buff;
  return ncclSuccess;
}

ncclResult_t ncclCommDeregister(const ncclComm_t comm, void*) { return checkComm(comm); }

}  // extern "C"
