// The NCCL stand-in's communicators: their making (one member, or several joined in shared
// memory: nccl_standin_shm.h), splitting, finishing, destroying and aborting, and the record of
// their launches that destroy waits for.
#include <algorithm>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "nccl_standin_comm.h"

// Stand-ins that capture CUDA graphs have it; weak, so that this library also loads over one
// that does not (where no stream ever captures).
#pragma weak cudaStreamIsCapturing

using nccl_standin::MultiComm;
using nccl_standin::checkComm;
using nccl_standin::failed;

namespace nccl_standin {

const cuda_standin::Kernel kNcclKernel("ncclDevKernel_Generic (stand-in)");

// An error a communicator of several members met while its work ran: every later call returns
// it, as NCCL's do once a communicator failed.
ncclResult_t asyncFailure(ncclComm_t comm) {
  std::string why;
  const ncclResult_t rc = comm->multi->error(&why);
  if (rc != ncclSuccess) comm->lastError = "NCCL stand-in: " + why;
  return rc;
}

// Records, on `stream`, that `comm`'s work queued there so far must finish before
// ncclCommDestroy returns. Not on a capturing stream: captured work runs only when its graph is
// launched (each launch holds the communicator's shared memory), and an event recorded in a
// capture is one nothing may wait for.
void noteLaunch(ncclComm_t comm, cudaStream_t stream) {
  if (&cudaStreamIsCapturing != nullptr) {
    cudaStreamCaptureStatus status = cudaStreamCaptureStatusNone;
    if (cudaStreamIsCapturing(stream, &status) != cudaSuccess ||
        status != cudaStreamCaptureStatusNone) {
      return;
    }
  }
  std::lock_guard<std::mutex> lock(comm->eventsMutex);
  cudaEvent_t event = nullptr;
  for (auto& [s, e] : comm->events) {
    if (s == stream) event = e;
  }
  if (event == nullptr) {
    // Streams come and go (strata enqueues on its callers'): forget those whose work is done.
    if (comm->events.size() >= 16) {
      auto done = [](const std::pair<cudaStream_t, cudaEvent_t>& se) {
        if (cudaEventQuery(se.second) != cudaSuccess) return false;
        (void)cudaEventDestroy(se.second);
        return true;
      };
      comm->events.erase(std::remove_if(comm->events.begin(), comm->events.end(), done),
                         comm->events.end());
    }
    if (cudaEventCreateWithFlags(&event, cudaEventDisableTiming) != cudaSuccess) return;
    comm->events.emplace_back(stream, event);
  }
  (void)cudaEventRecord(event, stream);
}

}  // namespace nccl_standin

namespace {

using nccl_standin::asyncFailure;
using nccl_standin::kNcclKernel;

// Waits for every launch of `comm` (a member waits for its peers there, as NCCL's destroy may).
void finishLaunches(ncclComm_t comm) {
  std::lock_guard<std::mutex> lock(comm->eventsMutex);
  for (auto& [s, e] : comm->events) (void)cudaEventSynchronize(e);
}

void dropEvents(ncclComm_t comm) {
  std::lock_guard<std::mutex> lock(comm->eventsMutex);
  for (auto& [s, e] : comm->events) (void)cudaEventDestroy(e);
  comm->events.clear();
}

ncclResult_t newComm(ncclComm_t* comm, int nranks, const ncclUniqueId* id, int rank) {
  if (comm == nullptr) return failed(nullptr, ncclInvalidArgument, "comm is NULL");
  if (nranks < 1 || rank < 0 || rank >= nranks) {
    return failed(nullptr, ncclInvalidArgument,
                  "rank " + std::to_string(rank) + " of " + std::to_string(nranks) + " members");
  }
  int device = 0;
  if (cudaGetDevice(&device) != cudaSuccess) {
    return failed(nullptr, ncclUnhandledCudaError, "cudaGetDevice failed");
  }
  std::shared_ptr<MultiComm> multi;
  if (nranks > 1) {
    if (id == nullptr) {
      return failed(nullptr, ncclInvalidUsage,
                    "communicators of " + std::to_string(nranks) +
                        " members in one process are not emulated");
    }
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, device) != cudaSuccess) {
      return failed(nullptr, ncclUnhandledCudaError, "cudaGetDeviceProperties failed");
    }
    cudaFuncAttributes attr{};
    if (cudaFuncGetAttributes(&attr, &kNcclKernel) != cudaSuccess) {
      return failed(nullptr, ncclUnhandledCudaError, "loading the stand-in's NCCL kernel failed");
    }
    std::string why;
    const ncclResult_t rc = MultiComm::join(
        *id, nranks, rank, reinterpret_cast<const unsigned char*>(prop.uuid.bytes), &multi, &why);
    if (rc != ncclSuccess) return failed(nullptr, rc, "ncclCommInitRank: " + why);
  }
  *comm = new ncclComm();
  (*comm)->device = device;
  (*comm)->nranks = nranks;
  (*comm)->rank = rank;
  (*comm)->multi = std::move(multi);
  return ncclSuccess;
}

}  // namespace

extern "C" {

ncclResult_t ncclGetVersion(int* version) {
  if (version == nullptr) return failed(nullptr, ncclInvalidArgument, "version is NULL");
  *version = NCCL_VERSION_CODE;
  return ncclSuccess;
}

// A random name for the shared memory the members will meet in (nothing is created yet).
ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId) {
  if (uniqueId == nullptr) return failed(nullptr, ncclInvalidArgument, "uniqueId is NULL");
  MultiComm::makeId(uniqueId);
  return ncclSuccess;
}

ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank) {
  return newComm(comm, nranks, &commId, rank);
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank,
                                    ncclConfig_t*) {
  return newComm(comm, nranks, &commId, rank);
}

ncclResult_t ncclCommInitAll(ncclComm_t* comm, int ndev, const int* devlist) {
  if (devlist != nullptr && ndev == 1 && devlist[0] != 0) {
    return failed(nullptr, ncclInvalidArgument, "the stand-in has device 0 only");
  }
  return newComm(comm, ndev, nullptr, 0);
}

ncclResult_t ncclCommSplit(ncclComm_t comm, int color, int, ncclComm_t* newcomm, ncclConfig_t*) {
  if (ncclResult_t rc = checkComm(comm); rc != ncclSuccess) return rc;
  if (newcomm == nullptr) return failed(comm, ncclInvalidArgument, "newcomm is NULL");
  if (comm->multi) {
    return failed(comm, ncclInvalidUsage,
                  "ncclCommSplit of a communicator of " + std::to_string(comm->nranks) +
                      " members is not emulated by the stand-in");
  }
  if (color == NCCL_SPLIT_NOCOLOR) {
    *newcomm = nullptr;
    return ncclSuccess;
  }
  return newComm(newcomm, 1, nullptr, 0);
}

ncclResult_t ncclCommFinalize(ncclComm_t comm) {
  if (ncclResult_t rc = checkComm(comm); rc != ncclSuccess) return rc;
  if (comm->multi) finishLaunches(comm);
  return ncclSuccess;
}

// Finishes what the communicator has queued (waiting for its peers there, as NCCL's may), then
// leaves: a peer that still waits for this member fails instead of hanging.
ncclResult_t ncclCommDestroy(ncclComm_t comm) {
  if (ncclResult_t rc = checkComm(comm); rc != ncclSuccess) return rc;
  if (comm->multi) {
    finishLaunches(comm);
    dropEvents(comm);
    comm->multi->leave();
  }
  delete comm;  // queued or captured work keeps its own reference to the shared memory
  return ncclSuccess;
}

// Never waits: this member's waits end at once, and its peers' waits for it fail.
ncclResult_t ncclCommAbort(ncclComm_t comm) {
  if (comm == nullptr) return ncclSuccess;  // NULL is allowed, as NCCL's
  if (comm->multi) {
    comm->multi->abort();
    dropEvents(comm);
  }
  delete comm;
  return ncclSuccess;
}

ncclResult_t ncclCommGetAsyncError(ncclComm_t comm, ncclResult_t* asyncError) {
  if (ncclResult_t rc = checkComm(comm); rc != ncclSuccess) return rc;
  if (asyncError == nullptr) return failed(comm, ncclInvalidArgument, "asyncError is NULL");
  *asyncError = comm->multi ? asyncFailure(comm) : ncclSuccess;
  return ncclSuccess;
}

ncclResult_t ncclCommCount(const ncclComm_t comm, int* count) {
  if (ncclResult_t rc = checkComm(comm); rc != ncclSuccess) return rc;
  *count = comm->nranks;
  return ncclSuccess;
}

ncclResult_t ncclCommCuDevice(const ncclComm_t comm, int* device) {
  if (ncclResult_t rc = checkComm(comm); rc != ncclSuccess) return rc;
  *device = comm->device;
  return ncclSuccess;
}

ncclResult_t ncclCommUserRank(const ncclComm_t comm, int* rank) {
  if (ncclResult_t rc = checkComm(comm); rc != ncclSuccess) return rc;
  *rank = comm->rank;
  return ncclSuccess;
}

}  // extern "C"
