// The `mpi-cuda` fabric: device pointers straight to a CUDA-aware MPI (Open MPI built with
// CUDA support). What MPI cannot do on device memory here goes through the staged fabric: the
// reductions of fp16, bf16, int8 and uint8 (strata's user ops read host memory), in-place
// reduce-scatters (MPI leaves the block at the start of the range, and moving it on the GPU
// could overlap), layouts past MPI's int counts, and the rooted operations and point-to-point.
// Only built with CUDA.
#pragma once

#include <memory>

#include "bootstrap/bootstrap.h"
#include "common/fabric_traits.h"
#include "fabrics/fabric.h"

namespace strata::fabric {

// Device memory, any members, synchronous, wraps the group's host fabric (for staging).
FabricTraits mpiCudaTraits();

// Collective over `group` (an MPI bootstrap).
StatusOr<std::unique_ptr<Fabric>> createMpiCudaFabric(boot::Bootstrap& group, Fabric* host,
                                                      const FabricOptions& options);

// Whether this process's MPI says, at run time, that it reads GPU memory
// (MPIX_Query_cuda_support).
bool mpiReportsCudaAware();

}  // namespace strata::fabric
