// The fabric a level group runs on for device buffers. Only built with CUDA.
//
// Chosen per group, from what its members report (host, GPU), the same way on every member
// (fabrics/device_choice.h):
//   local       a group of one member: device copies;
//   nccl        every member on one host, each on a GPU of its own, and the level not pinned
//               to mpi (a topology file's `fabric: mpi`): NCCL sub-communicators;
//   mpi (CUDA-aware)  otherwise, when Open MPI can read GPU memory (MPIX_Query_cuda_support,
//               or STRATA_MPI_CUDA_AWARE=1): device pointers go straight to MPI;
//   <host>-staged     otherwise: the level's host fabric (mpi or shm) through pinned memory
//               (gpu/staged_fabric.h). This is also how members that share a GPU run: NCCL
//               refuses them ("Duplicate GPU detected").
#pragma once

#include <mpi.h>
#include <cuda_runtime.h>

#include <cstddef>
#include <memory>
#include <string>

#include "common/status.h"
#include "fabrics/fabric.h"

namespace strata::gpu {

struct DeviceFabricOptions {
  cudaStream_t stream = nullptr;  // the communicator's stream
  int device = 0;                 // this rank's GPU
  std::string host;               // this rank's host name (as the hierarchy groups ranks)
  size_t stagingBytes = 4 << 20;  // STRATA_GPU_STAGING_BYTES
  int cudaAware = -1;             // STRATA_MPI_CUDA_AWARE: -1 ask MPI, 0 never, 1 always
  bool pinnedToMpi = false;       // the level's fabric is mpi (never nccl for it)
};

// Makes the device fabric of `group` (the comm of a level group, or the whole communicator's),
// whose host fabric is `host` (kept, not owned). Collective over `group`; every member gets
// the same kind of fabric, or every member an error.
StatusOr<std::unique_ptr<fabric::Fabric>> createDeviceFabric(MPI_Comm group,
                                                             fabric::Fabric* host,
                                                             const DeviceFabricOptions& options);

}  // namespace strata::gpu
