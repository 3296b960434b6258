#include "fabrics/device_choice.h"

#include <cstring>

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
    case DeviceChoice::kLocal: return "local copies (one member)";
    case DeviceChoice::kNccl: return "nccl";
    case DeviceChoice::kCudaAwareMpi: return "mpi on device buffers (CUDA-aware)";
    case DeviceChoice::kStaged: return "staged through pinned host memory";
  }
  return "?";
}

}  // namespace strata::fabric
