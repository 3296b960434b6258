// NCCL for one member, on the CPU stand-in for CUDA (libstrata_nccl_standin.so, the
// STRATA_CUDA_STANDIN build's NCCL: strata's nccl fabric loads it as it loads a real NCCL).
// With one member every collective is a copy on the caller's stream, and point-to-point is a
// send to itself matched with a receive in the same group. Groups of several members are not
// emulated (the stand-in's one GPU is shared by every rank, so strata stages such groups
// through host memory, as it does for ranks sharing a real GPU): creating one fails with
// ncclInvalidUsage, as every function that needs one does. Pointers must be device memory, as
// NCCL checks.
#include <cuda_runtime.h>
#include <nccl.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct PendingSend {
  const void* buf;
  size_t count;
  ncclDataType_t type;
};

}  // namespace

struct ncclComm {
  int device = 0;
  std::string lastError;
};

namespace {

constexpr size_t kTypeBytes[] = {1, 1, 4, 4, 8, 8, 2, 4, 8, 2, 1, 1};  // ncclDataType_t's order
static_assert(sizeof(kTypeBytes) / sizeof(kTypeBytes[0]) == ncclNumTypes, "a size per type");

thread_local std::string tLastError;
thread_local int tGroupDepth = 0;
thread_local ncclResult_t tGroupError = ncclSuccess;
// Inside a group: sends to self not yet matched, and receives waiting for one.
struct PendingRecv {
  void* buf;
  size_t count;
  ncclDataType_t type;
  cudaStream_t stream;
};
thread_local std::vector<PendingSend> tSends;
thread_local std::vector<PendingRecv> tRecvs;

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

ncclResult_t checkBuffer(ncclComm_t comm, const void* p, const char* which) {
  cudaPointerAttributes attr{};
  if (p == nullptr || cudaPointerGetAttributes(&attr, p) != cudaSuccess ||
      attr.type != cudaMemoryTypeDevice) {
    return failed(comm, ncclInvalidArgument, std::string(which) + " is not device memory");
  }
  return ncclSuccess;
}

// The checks of one collective with the buffers `in` and `out` of `count` elements.
ncclResult_t checkCall(ncclComm_t comm, const void* in, void* out, size_t count,
                       ncclDataType_t type, int root) {
  if (ncclResult_t rc = checkComm(comm); rc != ncclSuccess) return rc;
  if (static_cast<int>(type) < 0 || static_cast<int>(type) >= ncclNumTypes) {
    return failed(comm, ncclInvalidArgument, "invalid datatype " + std::to_string(type));
  }
  if (root != 0) {
    return failed(comm, ncclInvalidArgument,
                  "root or peer " + std::to_string(root) + ": a one-member communicator has 0 only");
  }
  if (count == 0) return ncclSuccess;
  if (ncclResult_t rc = checkBuffer(comm, in, "sendbuff"); rc != ncclSuccess) return rc;
  return checkBuffer(comm, out, "recvbuff");
}

ncclResult_t copyOn(ncclComm_t comm, void* out, const void* in, size_t count, ncclDataType_t type,
                    cudaStream_t stream) {
  if (out == in || count == 0) return ncclSuccess;
  const cudaError_t e =
      cudaMemcpyAsync(out, in, count * kTypeBytes[type], cudaMemcpyDeviceToDevice, stream);
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

ncclResult_t newComm(ncclComm_t* comm, int nranks, int rank) {
  if (comm == nullptr) return failed(nullptr, ncclInvalidArgument, "comm is NULL");
  if (nranks != 1 || rank != 0) {
    return failed(nullptr, ncclInvalidUsage,
                  "communicators of " + std::to_string(nranks) +
                      " members are not emulated: the stand-in's NCCL has one member");
  }
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    return failed(nullptr, ncclUnhandledCudaError, "cudaGetDevice failed");
  }
  *comm = new ncclComm();
  (*comm)->device = device;
  return ncclSuccess;
}

}  // namespace

extern "C" {

ncclResult_t ncclGetVersion(int* version) {
  if (version == nullptr) return failed(nullptr, ncclInvalidArgument, "version is NULL");
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}

ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId) {
  if (uniqueId == nullptr) return failed(nullptr, ncclInvalidArgument, "uniqueId is NULL");
  std::memset(uniqueId, 0, sizeof *uniqueId);
  std::snprintf(uniqueId->internal, sizeof uniqueId->internal, "strata NCCL stand-in");
  return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId, int rank) {
  return newComm(comm, nranks, rank);
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId, int rank,
                                    ncclConfig_t*) {
  return newComm(comm, nranks, rank);
}

ncclResult_t ncclCommInitAll(ncclComm_t* comm, int ndev, const int* devlist) {
  if (devlist != nullptr && ndev == 1 && devlist[0] != 0) {
    return failed(nullptr, ncclInvalidArgument, "the stand-in has device 0 only");
  }
  return newComm(comm, ndev, 0);
}

ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int, ncclComm_t* newcomm, ncclConfig_t*) {
  if (ncclResult_t rc = checkComm(comm); rc != ncclSuccess) return rc;
  if (newcomm == nullptr) return failed(comm, ncclInvalidArgument, "newcomm is NULL");
  if (color == NCCL_SPLIT_NOCOLOR) {
    *newcomm = nullptr;
    return ncclSuccess;
  }
  return newComm(newcomm, 1, 0);
}

ncclResult_t ncclCommFinalize(ncclComm_t comm) { return checkComm(comm); }

ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  if (ncclResult_t rc = checkComm(comm); rc != ncclSuccess) return rc;
  delete comm;
  return ncclSuccess;
}

ncclResult_t ncclCommAbort(ncclComm_t comm) {
  delete comm;  // NULL is allowed, as NCCL's
  return ncclSuccess;
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError) {
  if (ncclResult_t rc = checkComm(comm); rc != ncclSuccess) return rc;
  if (asyncError == nullptr) return failed(comm, ncclInvalidArgument, "asyncError is NULL");
  *asyncError = ncclSuccess;
  return ncclSuccess;
}

ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  if (ncclResult_t rc = checkComm(comm); rc != ncclSuccess) return rc;
  *count = 1;
  return ncclSuccess;
}

ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device) {
  if (ncclResult_t rc = checkComm(comm); rc != ncclSuccess) return rc;
  *device = comm->device;
  return ncclSuccess;
}

ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  if (ncclResult_t rc = checkComm(comm); rc != ncclSuccess) return rc;
  *rank = 0;
  return ncclSuccess;
}

// The result's name; what went wrong is in ncclGetLastError and on stderr.
const char* ncclGetErrorString(ncclResult_t result) {
  static const char* const kNames[] = {"ncclSuccess",        "ncclUnhandledCudaError",
                                       "ncclSystemError",    "ncclInternalError",
                                       "ncclInvalidArgument", "ncclInvalidUsage",
                                       "ncclRemoteError",    "ncclInProgress"};
  const int r = static_cast<int>(result);
  return r >= 0 && r < ncclNumResults ? kNames[r] : "an unknown ncclResult_t";
}

const char* ncclGetLastError(ncclComm_t comm) {
  return comm != nullptr ? comm->lastError.c_str() : tLastError.c_str();
}

ncclResult_t ncclAllReduce(const void* sendbuff, void* recvbuff, size_t count,
                           ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                           cudaStream_t stream) {
  if (static_cast<int>(op) < 0 || static_cast<int>(op) >= ncclNumOps) {
    return failed(comm, ncclInvalidArgument, "op " + std::to_string(op) + " (PreMulSum ops are "
                                             "not emulated)");
  }
  return oneMember(comm, sendbuff, recvbuff, count, datatype, 0, stream);
}

ncclResult_t ncclReduceScatter(const void* sendbuff, void* recvbuff, size_t recvcount,
                               ncclDataType_t datatype, ncclRedOp_t op, ncclComm_t comm,
                               cudaStream_t stream) {
  return ncclAllReduce(sendbuff, recvbuff, recvcount, datatype, op, comm, stream);
}

ncclResult_t ncclAllGather(const void* sendbuff, void* recvbuff, size_t sendcount,
                           ncclDataType_t datatype, ncclComm_t comm, cudaStream_t stream) {
  return oneMember(comm, sendbuff, recvbuff, sendcount, datatype, 0, stream);
}

ncclResult_t ncclBroadcast(const void* sendbuff, void* recvbuff, size_t count,
                           ncclDataType_t datatype, int root, ncclComm_t comm,
                           cudaStream_t stream) {
  return oneMember(comm, sendbuff, recvbuff, count, datatype, root, stream);
}

ncclResult_t ncclBcast(void* buff, size_t count, ncclDataType_t datatype, int root,
                       ncclComm_t comm, cudaStream_t stream) {
  return oneMember(comm, buff, buff, count, datatype, root, stream);
}

ncclResult_t ncclReduce(const void* sendbuff, void* recvbuff, size_t count,
                        ncclDataType_t datatype, ncclRedOp_t op, int root, ncclComm_t comm,
                        cudaStream_t stream) {
  if (static_cast<int>(op) < 0 || static_cast<int>(op) >= ncclNumOps) {
    return failed(comm, ncclInvalidArgument, "op " + std::to_string(op));
  }
  return oneMember(comm, sendbuff, recvbuff, count, datatype, root, stream);
}

// Point-to-point with oneself: only inside a group, where the k-th send meets the k-th receive
// at ncclGroupEnd (outside one, a send to self would wait for ever in NCCL).
ncclResult_t ncclSend(const void* sendbuff, size_t count, ncclDataType_t datatype, int peer,
                      ncclComm_t comm, cudaStream_t) {
  if (ncclResult_t rc = checkCall(comm, sendbuff, const_cast<void*>(sendbuff), count, datatype,
                                  peer);
      rc != ncclSuccess) {
    return rc;
  }
  if (tGroupDepth == 0) return failed(comm, ncclInvalidUsage, "a send to self outside a group");
  tSends.push_back({sendbuff, count, datatype});
  return ncclSuccess;
}

ncclResult_t ncclRecv(void* recvbuff, size_t count, ncclDataType_t datatype, int peer,
                      ncclComm_t comm, cudaStream_t stream) {
  if (ncclResult_t rc = checkCall(comm, recvbuff, recvbuff, count, datatype, peer);
      rc != ncclSuccess) {
    return rc;
  }
  if (tGroupDepth == 0) return failed(comm, ncclInvalidUsage, "a receive from self outside a group");
  tRecvs.push_back({recvbuff, count, datatype, stream});
  return ncclSuccess;
}

ncclResult_t ncclGroupStart() {
  if (tGroupDepth++ == 0) {
    tGroupError = ncclSuccess;
    tSends.clear();
    tRecvs.clear();
  }
  return ncclSuccess;
}

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
      rc = failed(nullptr, ncclInvalidUsage, "send " + std::to_string(k) + " and its receive "
                                             "differ in count or type");
    } else {
      rc = copyOn(nullptr, r.buf, s.buf, r.count, r.type, r.stream);
    }
  }
  tSends.clear();
  tRecvs.clear();
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
