#include "core/settings.h"

#include "common/deadline.h"
#include "common/env.h"
#include "topology/detect.h"

namespace strata::core {
namespace {

constexpr size_t kMinChunkBytes = 4096;
constexpr size_t kMaxChunkBytes = size_t{1} << 30;  // keeps every MPI count below INT_MAX
constexpr size_t kMinShmSlotBytes = size_t{64} << 10;
constexpr size_t kMaxShmSlotBytes = size_t{256} << 20;
constexpr size_t kMinStagingBytes = 4096, kMaxStagingBytes = size_t{1} << 30;

}  // namespace

StatusOr<Settings> Settings::fromEnv() {
  Settings s;
  s.hostName = topo::localHostName(env::getString("STRATA_HOSTNAME"));
  s.topoFile = env::getString("STRATA_TOPO_FILE");
  s.planFile = env::getString("STRATA_PLAN_FILE");
  s.planDumpFile = env::getString("STRATA_PLAN_DUMP_FILE");
  s.chunkBytes = env::getSizeClamped("STRATA_CHUNK_BYTES", kMinChunkBytes, kMaxChunkBytes);
  s.pipelineBytes =
      env::getInt("STRATA_PIPELINE_BYTES") <= 0
          ? 0
          : env::getSizeClamped("STRATA_PIPELINE_BYTES", kMinChunkBytes, kMaxChunkBytes);
  s.shmSlotBytes = env::getSizeClamped("STRATA_SHM_SLOT_BYTES", kMinShmSlotBytes, kMaxShmSlotBytes);
  s.stagingBytes =
      env::getSizeClamped("STRATA_GPU_STAGING_BYTES", kMinStagingBytes, kMaxStagingBytes);
  s.progressThread = env::getInt("STRATA_PROGRESS") != 0;
  s.timeoutSeconds = deadline::configuredSeconds();
  const std::string aware = env::getString("STRATA_MPI_CUDA_AWARE");
  if (aware == "auto" || aware.empty()) {
    s.cudaAware = -1;
  } else if (aware == "0" || aware == "1") {
    s.cudaAware = aware == "1" ? 1 : 0;
  } else {
    return invalidArgument("STRATA_MPI_CUDA_AWARE=" + aware + ": expected auto, 0 or 1");
  }
  return s;
}

}  // namespace strata::core
