#include "fabrics/device_choice.h"

#include <cstring>

#include "common/log.h"
#include "fabrics/registry.h"

namespace strata::fabric {

uint64_t hostHash(const std::string& host) {
  uint64_t x = 1469598103934665603ull;  // FNV-1a
  for (unsigned char ch : host) {
    x ^= ch;
    x *= 1099511628211ull;
  }
  return x;
}

DeviceChoice chooseDeviceFabric(const std::vector<MemberIdentity>& all, bool pinnedToMpi) {
  if (all.size() == 1) return DeviceChoice::kLocal;
  bool oneHost = true, distinctGpus = true, cudaAware = true;
  for (size_t i = 0; i < all.size(); ++i) {
    oneHost = oneHost && all[i].hostHash == all[0].hostHash;
    cudaAware = cudaAware && all[i].cudaAware != 0;
    for (size_t j = 0; j < i; ++j) {
      if (std::memcmp(all[i].uuid, all[j].uuid, sizeof(all[i].uuid)) == 0) distinctGpus = false;
    }
  }
  if (oneHost && distinctGpus && !pinnedToMpi) return DeviceChoice::kNccl;
  return cudaAware ? DeviceChoice::kCudaAwareMpi : DeviceChoice::kStaged;
}

const char* deviceChoiceName(DeviceChoice c) {
  switch (c) {
    case DeviceChoice::kLocal:
      return "local copies (one member)";
    case DeviceChoice::kNccl:
      return "nccl";
    case DeviceChoice::kCudaAwareMpi:
      return "mpi on device buffers (CUDA-aware)";
    case DeviceChoice::kStaged:
      return "staged through pinned host memory";
  }
  return "?";
}

const char* deviceFabricName(DeviceChoice c) {
  switch (c) {
    case DeviceChoice::kLocal:
      return "local";
    case DeviceChoice::kNccl:
      return "nccl";
    case DeviceChoice::kCudaAwareMpi:
      return "mpi-cuda";
    case DeviceChoice::kStaged:
      return "staged";
  }
  return "?";
}

StatusOr<std::unique_ptr<Fabric>> createDeviceFabric(boot::Bootstrap& group, Fabric* host,
                                                     const FabricOptions& options,
                                                     const MemberIdentity& me, bool pinnedToMpi) {
  std::vector<MemberIdentity> all(group.size());
  STRATA_RETURN_IF_ERROR(group.allGather(&me, all.data(), sizeof(me)));
  const DeviceChoice choice = chooseDeviceFabric(all, pinnedToMpi);
  StatusOr<std::unique_ptr<Fabric>> made =
      createFabric(deviceFabricName(choice), group, options, host);
  // nccl agrees on its own failures (its init is collective); the others are local.
  if (choice != DeviceChoice::kNccl) STRATA_RETURN_IF_ERROR(boot::agree(group, made.status()));
  if (!made.isOk()) return made.status();
  STRATA_INFO(kSubsysInit | kSubsysFabric, "device fabric of a group of %d: %s", group.size(),
              deviceChoiceName(choice));
  return made;
}

}  // namespace strata::fabric
