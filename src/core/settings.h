// A communicator's settings: every STRATA_* variable that shapes what it does, read once from
// the environment registry (common/env.h) when the communicator is made, typed and clamped.
// Part of them change what ranks exchange, so the communicator agrees on them at init
// (core/comm.h).
#pragma once

#include <cstddef>
#include <string>

#include "common/status.h"

namespace strata::core {

struct Settings {
  std::string hostName;        // STRATA_HOSTNAME, else this machine's: how ranks group by host
  std::string topoFile;        // STRATA_TOPO_FILE
  std::string planFile;        // STRATA_PLAN_FILE
  std::string planDumpFile;    // STRATA_PLAN_DUMP_FILE
  size_t chunkBytes = 0;       // STRATA_CHUNK_BYTES: the largest pass of one collective
  size_t pipelineBytes = 0;    // STRATA_PIPELINE_BYTES: a pipeline piece (0: none)
  size_t shmSlotBytes = 0;     // STRATA_SHM_SLOT_BYTES
  size_t stagingBytes = 0;     // STRATA_GPU_STAGING_BYTES
  bool progressThread = true;  // STRATA_PROGRESS (a progress thread also needs
                               // MPI_THREAD_MULTIPLE)
  int cudaAware = -1;          // STRATA_MPI_CUDA_AWARE: -1 ask MPI, 0 never, 1 always
  double timeoutSeconds = 0;   // STRATA_TIMEOUT: the longest wait for peers (0: for ever)

  // Reads the registry. A malformed value the registry cannot clamp (STRATA_MPI_CUDA_AWARE) is
  // an error naming the variable.
  static StatusOr<Settings> fromEnv();
};

}  // namespace strata::core
