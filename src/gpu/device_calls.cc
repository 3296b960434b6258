#include "gpu/device_calls.h"

#include <mpi.h>

#include <algorithm>
#include <string>

#include "common/datatype.h"
#include "common/env.h"
#include "common/log.h"
#include "common/mpi_check.h"
#include "core/dispatch.h"
#include "core/groups.h"
#include "core/init.h"
#include "gpu/cuda_check.h"
#include "gpu/device.h"
#include "gpu/device_state.h"
#include "gpu/kernels.h"
#include "topology/detect.h"

namespace strata::core {

DeviceState::~DeviceState() {
  queue.reset();  // runs what is still queued, then stops the thread
  flat.reset();
  if (scratch != nullptr) (void)cudaFreeAsync(scratch, stream);
  if (stream != nullptr) {
    (void)cudaStreamSynchronize(stream);
    (void)cudaStreamDestroy(stream);
  }
}

void DeviceStateDeleter::operator()(DeviceState* d) const { delete d; }

}  // namespace strata::core

namespace strata::gpu {
namespace {

using core::CollKind;
using core::DeviceCall;
using core::DeviceState;

constexpr size_t kMinStagingBytes = 4096, kMaxStagingBytes = size_t{1} << 30;

std::string describePlace(const PointerPlace& p) {
  return p.device ? "device memory (GPU " + std::to_string(p.ordinal) + ")" : "host memory";
}

// STRATA_MPI_CUDA_AWARE: auto (ask MPI), 0 or 1.
StatusOr<int> cudaAwareSetting() {
  const std::string v = env::getString("STRATA_MPI_CUDA_AWARE");
  if (v == "auto" || v.empty()) return -1;
  if (v == "0" || v == "1") return v == "1" ? 1 : 0;
  return invalidArgument("STRATA_MPI_CUDA_AWARE=" + v + ": expected auto, 0 or 1");
}

// The communicator's GPU side, made at its first device call. Local.
Status makeState(strataComm& c) {
  std::unique_ptr<DeviceState, core::DeviceStateDeleter> d(new DeviceState());
  STRATA_CUDA_CHECK(cudaGetDevice(&d->device));
  STRATA_CUDA_CHECK(cudaStreamCreateWithFlags(&d->stream, cudaStreamNonBlocking));
  d->fabricOptions.stream = d->stream;
  d->fabricOptions.device = d->device;
  d->fabricOptions.host = topo::localHostName(env::getString("STRATA_HOSTNAME"));
  d->fabricOptions.stagingBytes =
      env::getSizeClamped("STRATA_GPU_STAGING_BYTES", kMinStagingBytes, kMaxStagingBytes);
  STRATA_ASSIGN_OR_RETURN(d->fabricOptions.cudaAware, cudaAwareSetting());
  int level = MPI_THREAD_SINGLE;
  STRATA_MPI_CHECK(MPI_Query_thread(&level));
  const bool wanted = env::getInt("STRATA_GPU_PROGRESS") != 0;
  const bool threaded = wanted && level == MPI_THREAD_MULTIPLE;
  if (wanted && !threaded) {
    STRATA_INFO(kSubsysColl, "device calls run on the calling thread and return when done: MPI "
                "was not initialised with MPI_THREAD_MULTIPLE");
  }
  STRATA_ASSIGN_OR_RETURN(d->queue, ProgressQueue::create(threaded, d->device));
  STRATA_INFO(kSubsysColl, "device calls on GPU %d, %s, staging chunks of %zu bytes", d->device,
              threaded ? "progress thread" : "calling thread", d->fabricOptions.stagingBytes);
  c.device = std::move(d);
  return Status::ok();
}

// Makes the device fabric of group `g` (nullptr: the whole communicator) unless this rank is
// not a member or it exists; keeps the first failure in `first`. Collective over the group.
void ensureFabric(strataComm& c, core::LevelGroup* g, Status& first) {
  fabric::Fabric* host = g != nullptr ? g->fabric.get() : c.flat.get();
  std::unique_ptr<fabric::Fabric>& slot = g != nullptr ? g->deviceFabric : c.device->flat;
  if (host == nullptr || slot) return;
  DeviceFabricOptions o = c.device->fabricOptions;
  o.pinnedToMpi = g != nullptr && std::string(host->name()) == "mpi";
  StatusOr<std::unique_ptr<fabric::Fabric>> made =
      createDeviceFabric(g != nullptr ? g->comm : c.mpi, host, o);
  if (made.isOk()) {
    slot = made.take();
  } else if (first.isOk()) {
    first = made.status();
  }
}

// Makes every group and device fabric `call` will use, so that running it needs no collective
// setup (the progress thread must not create communicators). Collective over c.mpi; every
// rank runs the same groups in the same order, and a failure anywhere fails every rank.
Status prepare(strataComm& c, const DeviceCall& call) {
  Status first = Status::ok();
  ensureFabric(c, nullptr, first);
  if (c.size > 1 && call.kind == CollKind::kAllReduce) {
    // The passes' plans, as core::allReduce picks them (one size, or two with a shorter last).
    const size_t ts = dataTypeSize(call.type);
    const size_t pass = core::passElements(c, ts);
    for (size_t n : {std::min(pass, call.count), call.count > pass ? call.count % pass : 0}) {
      if (n == 0) continue;
      StatusOr<core::PlanExec*> exec = core::planForBytes(c, n * ts);
      if (!exec.isOk()) {
        if (first.isOk()) first = exec.status();
        continue;
      }
      for (core::LevelGroup* g : exec.value()->groups) ensureFabric(c, g, first);
    }
  } else if (c.size > 1) {
    for (core::LevelGroup* g : c.levels) ensureFabric(c, g, first);
  }
  return core::agree(c.mpi, first);
}

Status runCall(strataComm& c, const DeviceCall& call) {
  c.onDevice = true;
  Status st = [&] {
    switch (call.kind) {
      case CollKind::kAllReduce:
        return core::allReduce(c, call.send, call.recv, call.count, call.type, call.op);
      case CollKind::kReduceScatter:
        return core::reduceScatter(c, call.send, call.recv, call.count, call.type, call.op);
      case CollKind::kAllGather:
        return core::allGather(c, call.send, call.recv, call.count, call.type);
    }
    return internalError("unknown collective");
  }();
  c.onDevice = false;
  // The result is in place once the communicator's stream finished.
  const cudaError_t rc = cudaStreamSynchronize(c.device->stream);
  if (st.isOk() && rc != cudaSuccess) {
    st = cudaFailure("cudaStreamSynchronize", rc, __FILE__, __LINE__);
  }
  return st;
}

}  // namespace

StatusOr<core::Place> placeOf(const strataComm& c, const void* send, const void* recv) {
  if (visibleDevices() == 0) return core::Place::kHost;
  STRATA_ASSIGN_OR_RETURN(PointerPlace s, locate(send));
  STRATA_ASSIGN_OR_RETURN(PointerPlace r, locate(recv));
  const bool anyDevice = s.device || r.device;
  if (!anyDevice) return core::Place::kHost;
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
  if (c.device && ordinal != c.device->device) {
    return invalidUsage("the buffers are on GPU " + std::to_string(ordinal) +
                        " but this communicator's device calls run on GPU " +
                        std::to_string(c.device->device) + " (the GPU current at its first)");
  }
  return core::Place::kDevice;
}

Status drain(strataComm& c) { return c.device ? c.device->queue->drain() : Status::ok(); }

Status asyncError(const strataComm& c) {
  return c.device ? c.device->queue->error() : Status::ok();
}

Status submit(strataComm& c, strataStream_t stream, const DeviceCall& call) {
  if (call.count == 0) return Status::ok();  // nothing to order on the stream
  const auto key = std::make_tuple(static_cast<int>(call.kind), call.count,
                                   static_cast<int>(call.type));
  if (!c.device || c.device->prepared.count(key) == 0) {
    // Setup is collective and uses the communicators the queued calls run on: wait for them.
    STRATA_RETURN_IF_ERROR(drain(c));
    STRATA_RETURN_IF_ERROR(core::agree(c.mpi, c.device ? Status::ok() : makeState(c)));
    STRATA_RETURN_IF_ERROR(prepare(c, call));
    c.device->prepared.insert(key);
  }
  STRATA_RETURN_IF_ERROR(c.device->queue->error());
  return c.device->queue->submit(reinterpret_cast<cudaStream_t>(stream),
                                 [&c, call] { return runCall(c, call); });
}

Status copyBytes(strataComm& c, void* dst, const void* src, size_t bytes) {
  if (bytes == 0) return Status::ok();
  STRATA_CUDA_CHECK(
      cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, c.device->stream));
  return Status::ok();
}

Status divideBy(strataComm& c, void* buf, size_t count, strataDataType_t type, int divisor) {
  return scaleDown(buf, count, type, divisor, c.device->stream);
}

StatusOr<void*> scratchBytes(strataComm& c, size_t bytes) {
  DeviceState& d = *c.device;
  if (bytes > d.scratchBytes) {
    // Stream-ordered: never a device-wide synchronisation (see gpu/progress.h).
    if (d.scratch != nullptr) STRATA_CUDA_CHECK(cudaFreeAsync(d.scratch, d.stream));
    d.scratch = nullptr;
    d.scratchBytes = 0;
    STRATA_CUDA_CHECK(cudaMallocAsync(&d.scratch, bytes, d.stream));
    d.scratchBytes = bytes;
  }
  return d.scratch;
}

StatusOr<fabric::Fabric*> deviceFabricOf(strataComm& c, core::LevelGroup* g) {
  fabric::Fabric* f = g != nullptr ? g->deviceFabric.get() : c.device->flat.get();
  if (f == nullptr) return internalError("a device step on a group with no device fabric");
  return f;
}

}  // namespace strata::gpu
