// The NCCL stand-in's communicator, shared by its calls (nccl_standin.cc: collectives, groups,
// errors) and its life (nccl_standin_comm.cc: init, split, destroy, abort, the launches' record).
// Internal to libstrata_nccl_standin.so.
#pragma once

#include <cuda_runtime.h>
#include <nccl.h>

#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

#include "nccl_standin_shm.h"
#include "standin.h"

struct ncclComm {
  int device = 0;
  int nranks = 1, rank = 0;
  std::shared_ptr<nccl_standin::MultiComm> multi;  // several members; null for one
  std::string lastError;
  // Several members: an event per stream this communicator enqueued on, recorded after its
  // latest launch there, so that ncclCommDestroy and ncclCommFinalize finish what is queued (as
  // NCCL's do) whichever streams it went to, even ones destroyed since.
  std::mutex eventsMutex;
  std::vector<std::pair<cudaStream_t, cudaEvent_t>> events;
};

namespace nccl_standin {

// nccl_standin.cc
// Reports `why` (stderr, ncclGetLastError, the open group's error) and returns `rc`.
ncclResult_t failed(ncclComm_t comm, ncclResult_t rc, const std::string& why);
ncclResult_t checkComm(ncclComm_t comm);

// nccl_standin_comm.cc
// NCCL's kernels: loaded (lazy loading, standin.h) when a communicator of several members is
// made, as NCCL loads its kernels at init; each launch of the stand-in's NCCL is one of it.
extern const cuda_standin::Kernel kNcclKernel;
// An error a communicator of several members met while its work ran: every later call returns
// it, as NCCL's do once a communicator failed.
ncclResult_t asyncFailure(ncclComm_t comm);
// Records, on `stream`, that `comm`'s work queued there so far must finish before
// ncclCommDestroy returns (not on a capturing stream).
void noteLaunch(ncclComm_t comm, cudaStream_t stream);

}  // namespace nccl_standin
