// Which fabric a level group runs on for device buffers (gpu/device_fabric.h makes it). Pure:
// no CUDA, no MPI, so the rule is unit-tested on any machine.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace strata::fabric {

// What a member tells the others about itself (gathered with MPI_Allgather as bytes).
struct MemberIdentity {
  uint64_t hostHash = 0;      // hostHash() of the host name the hierarchy groups ranks by
  unsigned char uuid[16]{};   // the member's GPU (cudaDeviceProp::uuid)
  int32_t cudaAware = 0;      // 1: this member's MPI reads GPU memory
};

uint64_t hostHash(const std::string& host);

enum class DeviceChoice { kLocal, kNccl, kCudaAwareMpi, kStaged };

// The same answer on every member, since it reads only the gathered identities:
//   local          one member: every collective is a device copy (no NCCL bootstrap, which
//                  needs a network interface, for nothing);
//   nccl           all members on one host, each on a GPU of its own, level not pinned to mpi;
//   CUDA-aware mpi otherwise, when every member's MPI reads GPU memory;
//   staged         otherwise (members sharing a GPU end here: NCCL refuses them).
DeviceChoice chooseDeviceFabric(const std::vector<MemberIdentity>& members, bool pinnedToMpi);

const char* deviceChoiceName(DeviceChoice c);

}  // namespace strata::fabric
