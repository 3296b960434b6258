// Which fabric a level group runs on for device buffers, and making it. The rule is pure: no
// CUDA, no MPI, so it is unit-tested on any machine; the fabrics it names come from the
// registry (in builds without CUDA there are none, and making one fails).
//
// Chosen per group, from what its members report (host, GPU), the same way on every member:
//   local       a group of one member: device copies;
//   nccl        every member on one host, each on a GPU of its own, and the level not pinned
//               to mpi (a topology file's `fabric: mpi`): NCCL sub-communicators;
//   mpi-cuda    otherwise, when every member's MPI reads GPU memory (MPIX_Query_cuda_support,
//               or STRATA_MPI_CUDA_AWARE=1): device pointers go straight to MPI;
//   staged      otherwise: the level's host fabric (mpi or shm) through pinned memory. This is
//               also how members that share a GPU run: NCCL refuses them ("Duplicate GPU").
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "fabrics/fabric.h"

namespace strata::fabric {

// What a member tells the others about itself (gathered through the bootstrap as bytes).
struct MemberIdentity {
  uint64_t hostHash = 0;     // hostHash() of the host name the hierarchy groups ranks by
  unsigned char uuid[16]{};  // the member's GPU (cudaDeviceProp::uuid)
  int32_t cudaAware = 0;     // 1: this member's MPI reads GPU memory
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

// How strataCommDescribe and the log name a choice.
const char* deviceChoiceName(DeviceChoice c);
// The registry name of the fabric a choice makes: "local", "nccl", "mpi-cuda", "staged".
const char* deviceFabricName(DeviceChoice c);

// Makes the device fabric of a group whose host fabric is `host` (kept, not owned), `me` being
// this member's identity. Collective over `group`: every member gets the same kind of fabric,
// or every member an error.
StatusOr<std::unique_ptr<Fabric>> createDeviceFabric(boot::Bootstrap& group, Fabric* host,
                                                     const FabricOptions& options,
                                                     const MemberIdentity& me, bool pinnedToMpi);

}  // namespace strata::fabric
