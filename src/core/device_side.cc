#include "core/device_side.h"

#ifdef STRATA_HAVE_CUDA
#include <cuda_runtime.h>

#include <algorithm>
#include <string>
#include <tuple>

#include "common/datatype.h"
#include "common/log.h"
#include "core/device_state.h"
#include "core/prepare.h"
#include "fabrics/mpi_cuda/mpi_cuda_fabric.h"
#include "fabrics/registry.h"
#include "gpu/device.h"
#endif

namespace strata::core {

#ifndef STRATA_HAVE_CUDA

StatusOr<Place> placeOf(const Comm&, const void*, const void*) { return Place::kHost; }

Status setUpDevice(Comm&, IssuingThread, const Call&, const Program&, bool) {
  return internalError("a device call in a build without CUDA");
}

void DeviceStateDeleter::operator()(DeviceState*) const {}  // never made without CUDA

#else

void DeviceStateDeleter::operator()(DeviceState* d) const { delete d; }

namespace {

std::tuple<int, size_t, int> keyOf(const Call& call) {
  return std::make_tuple(static_cast<int>(call.coll), call.count, static_cast<int>(call.type));
}

std::string describePlace(const gpu::PointerPlace& p) {
  return p.device ? "device memory (GPU " + std::to_string(p.ordinal) + ")" : "host memory";
}

// The communicator's GPU side. Local.
Status makeState(Comm& c) {
  std::unique_ptr<DeviceState, DeviceStateDeleter> d(new DeviceState());
  STRATA_CUDA_CHECK(cudaGetDevice(&d->device));
  STRATA_CUDA_CHECK(cudaStreamCreateWithFlags(&d->stream, cudaStreamNonBlocking));
  d->options = c.fabricOptions();
  d->options.stream = d->stream;
  d->options.spans = c.timeline();
  STRATA_ASSIGN_OR_RETURN(gpu::DeviceUuid uuid, gpu::deviceUuid(d->device));
  std::copy(uuid.begin(), uuid.end(), d->identity.uuid);
  d->identity.hostHash = fabric::hostHash(c.settings().hostName);
  const int aware = c.settings().cudaAware;
  d->identity.cudaAware = aware < 0 ? (fabric::mpiReportsCudaAware() ? 1 : 0) : aware;
  // strata's kernels are loaded now, not lazily at a first launch: loading may wait for every
  // kernel running in the context (NCCL's waiting for peers, a gate's wait kernel), so the first
  // average's division must not be what loads them (gpu/kernels.h).
  STRATA_RETURN_IF_ERROR(gpu::preloadKernels());
  STRATA_CUDA_CHECK(cudaEventCreateWithFlags(&d->scratchDone, cudaEventDisableTiming));
  for (cudaEvent_t& e : d->joins) {
    STRATA_CUDA_CHECK(cudaEventCreateWithFlags(&e, cudaEventDisableTiming));
  }
  if (c.engine().threaded()) {
    STRATA_ASSIGN_OR_RETURN(d->gate, gpu::StreamGate::create(c.settings().gpuGate, d->stream));
    STRATA_INFO(kSubsysColl, "device calls' host stages hold the caller's stream with %s",
                d->gate->describe().c_str());
  } else {
    STRATA_INFO(kSubsysColl,
                "device calls' host stages run on the calling thread, which waits for them: no "
                "progress thread (MPI_THREAD_MULTIPLE and STRATA_PROGRESS=1 make one)");
  }
  STRATA_INFO(kSubsysColl, "device calls on GPU %d, host stages on the %s, staging chunks of %zu bytes",
              d->device, c.engine().threaded() ? "progress thread" : "calling thread",
              d->options.stagingBytes);
  c.setDevice(std::move(d));
  return Status::ok();
}

// Makes the device fabric of every group in `groups` this rank is a member of and that has
// none yet; then agrees. Collective over the communicator (and over each group).
Status ensureDeviceFabrics(Comm& c, const std::vector<LevelGroup*>& groups) {
  DeviceState& d = *c.device();
  Status first = Status::ok();
  for (LevelGroup* g : groups) {
    if (!g->fabric || g->deviceFabric) continue;
    // A level whose host fabric may span hosts (a topology file's `fabric: mpi`) never runs on
    // nccl; the flat group may, when all its members share a host.
    const bool pinned =
        g != &c.groups().flat() && !traitsOf(c.costParams().fabrics, g->fabricName).sameHost;
    StatusOr<std::unique_ptr<fabric::Fabric> > made =
        fabric::createDeviceFabric(*g->boot, g->fabric.get(), d.options, d.identity, pinned);
    if (made.isOk()) {
      g->deviceFabric = made.take();
    } else if (first.isOk()) {
      first = made.status();
    }
  }
  return boot::agree(c.bootstrap(), first);
}

// Setup during a capture: only what needs no CUDA (host collectives), so only when every
// group of the program already has its device fabric, on every rank (agreed).
Status setUpCapturing(Comm& c, const Call& call, const Program& prog) {
  bool missing = c.device() == nullptr;
  for (LevelGroup* g : groupsOf(c, prog)) missing = missing || (g->fabric && !g->deviceFabric);
  STRATA_RETURN_IF_ERROR(boot::agree(
      c.bootstrap(),
      missing ? invalidUsage(std::string("the first ") + collectiveName(call.coll) + " of " +
                             std::to_string(call.count) + " " + dataTypeName(call.type) +
                             " on device memory needs a device fabric (an NCCL communicator) "
                             "that no earlier call made, which cannot be captured in a CUDA "
                             "graph: run one such call before capturing (as PyTorch's warm-up "
                             "iterations do)")
              : Status::ok()));
  c.device()->prepared.insert(keyOf(call));
  return Status::ok();
}

}  // namespace

Status setUpDevice(Comm& c, IssuingThread me, const Call& call, const Program& prog,
                   bool capturing) {
  // Decided from the call alone, the same on every rank: never from local state.
  if (c.device() != nullptr && c.device()->prepared.count(keyOf(call)) != 0) return Status::ok();
  if (capturing) return setUpCapturing(c, call, prog);
  // Setup is collective and may use the GPU in ways a gated stream would block: wait for the
  // queued calls first.
  STRATA_RETURN_IF_ERROR(c.quiesce(me));
  STRATA_RETURN_IF_ERROR(
      boot::agree(c.bootstrap(), c.device() != nullptr ? Status::ok() : makeState(c)));
  STRATA_RETURN_IF_ERROR(ensureDeviceFabrics(c, groupsOf(c, prog)));
  c.device()->prepared.insert(keyOf(call));
  return Status::ok();
}

StatusOr<Place> placeOf(const Comm& c, const void* send, const void* recv) {
  if (gpu::visibleDevices() == 0) return Place::kHost;
  STRATA_ASSIGN_OR_RETURN(gpu::PointerPlace s, gpu::locate(send));
  STRATA_ASSIGN_OR_RETURN(gpu::PointerPlace r, gpu::locate(recv));
  if (!s.device && !r.device) return Place::kHost;
  if ((send != nullptr && !s.device) || (recv != nullptr && !r.device)) {
    return invalidArgument("sendbuff is " + describePlace(s) + " but recvbuff is " +
                           describePlace(r) +
                           ": a call's buffers must be all host or all device memory");
  }
  const int ordinal = s.device ? s.ordinal : r.ordinal;
  if (s.device && r.device && s.ordinal != r.ordinal) {
    return invalidArgument("sendbuff is on GPU " + std::to_string(s.ordinal) +
                           " but recvbuff on GPU " + std::to_string(r.ordinal));
  }
  const DeviceState* d = const_cast<Comm&>(c).device();
  if (d != nullptr && ordinal != d->device) {
    return invalidUsage("the buffers are on GPU " + std::to_string(ordinal) +
                        " but this communicator's device calls run on GPU " +
                        std::to_string(d->device) + " (the GPU current at its first)");
  }
  return Place::kDevice;
}

#endif  // STRATA_HAVE_CUDA

}  // namespace strata::core
