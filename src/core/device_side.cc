#include "core/device_side.h"

#ifdef STRATA_HAVE_CUDA
#include <cuda_runtime.h>

#include <algorithm>
#include <set>
#include <string>
#include <tuple>

#include "common/cuda_check.h"
#include "common/deadline.h"
#include "common/log.h"
#include "core/bounded.h"
#include "core/prepare.h"
#include "core/timeline.h"
#include "fabrics/device_choice.h"
#include "fabrics/mpi_cuda/mpi_cuda_fabric.h"
#include "fabrics/registry.h"
#include "gpu/device.h"
#include "gpu/kernels.h"
#include "gpu/stream_gate.h"
#endif

namespace strata::core {

#ifndef STRATA_HAVE_CUDA

StatusOr<Place> placeOf(const Comm&, const void*, const void*) { return Place::kHost; }

Status setUpDevice(Comm&, IssuingThread, const Call&, const Program&) {
  return internalError("a device call in a build without CUDA");
}

Status submitDevice(Comm&, const std::vector<Prepared>&, const std::vector<strataStream_t>&) {
  return internalError("a device call in a build without CUDA");
}

void DeviceStateDeleter::operator()(DeviceState*) const {}  // never made without CUDA

#else

// The GPU side of a communicator, made at its first device call.
struct DeviceState {
  int device = 0;                 // the GPU current at the first device call
  cudaStream_t stream = nullptr;  // non-blocking: every device call's copies, kernels, NCCL work
  void* scratch = nullptr;        // device working memory (stream-ordered allocations)
  size_t scratchBytes = 0;
  fabric::FabricOptions options;    // the communicator's, with `stream`
  fabric::MemberIdentity identity;  // what this rank tells its groups when they choose fabrics
  std::unique_ptr<gpu::StreamGate> gate;  // with a threaded engine
  uint64_t gated = 0;                     // calls gated so far
  // Calls (collective, count, type) whose groups and device fabrics exist, so that their next
  // calls set nothing up. The same on every rank: every rank issues the same calls (unlike the
  // program cache's keys, which may differ between ranks: a call in place on one rank only).
  std::set<std::tuple<int, size_t, int> > prepared;

  ~DeviceState() {
    gate.reset();  // the engine ran every gated call before this
    if (scratch != nullptr) (void)cudaFreeAsync(scratch, stream);
    if (stream != nullptr) {
      (void)cudaStreamSynchronize(stream);
      (void)cudaStreamDestroy(stream);
    }
  }
};

void DeviceStateDeleter::operator()(DeviceState* d) const { delete d; }

namespace {

std::tuple<int, size_t, int> keyOf(const Call& call) {
  return std::make_tuple(static_cast<int>(call.coll), call.count, static_cast<int>(call.type));
}

// Device memory on the communicator's stream; each group's device fabric.
class DeviceExecutor final : public Executor {
 public:
  explicit DeviceExecutor(DeviceState& d) : d_(d) {}

  Status copy(void* dst, const void* src, size_t bytes) override {
    if (bytes == 0) return Status::ok();
    STRATA_CUDA_CHECK(cudaMemcpyAsync(dst, src, bytes, cudaMemcpyDeviceToDevice, d_.stream));
    return Status::ok();
  }
  Status divide(void* buf, size_t count, strataDataType_t type, int divisor) override {
    return gpu::scaleDown(buf, count, type, divisor, d_.stream);
  }
  StatusOr<void*> scratch(size_t bytes) override {
    if (bytes > d_.scratchBytes) {
      // Stream-ordered: never a device-wide synchronisation (see gpu/stream_gate.h).
      if (d_.scratch != nullptr) STRATA_CUDA_CHECK(cudaFreeAsync(d_.scratch, d_.stream));
      d_.scratch = nullptr;
      d_.scratchBytes = 0;
      STRATA_CUDA_CHECK(cudaMallocAsync(&d_.scratch, bytes, d_.stream));
      d_.scratchBytes = bytes;
    }
    return d_.scratch;
  }
  StatusOr<fabric::Fabric*> fabricOf(LevelGroup& g) override {
    if (!g.deviceFabric) return internalError("a device step on a group with no device fabric");
    return g.deviceFabric.get();
  }

 private:
  DeviceState& d_;
};

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
  if (c.engine().threaded()) {
    // Before the first gate: no kernel may load lazily while a gate spins (gpu/kernels.h).
    STRATA_RETURN_IF_ERROR(gpu::preloadKernels());
    STRATA_ASSIGN_OR_RETURN(d->gate, gpu::StreamGate::create());
  } else {
    STRATA_INFO(kSubsysColl,
                "device calls run on the calling thread and return when done: no "
                "progress thread (MPI_THREAD_MULTIPLE and STRATA_PROGRESS=1 make one)");
  }
  STRATA_INFO(kSubsysColl, "device calls on GPU %d, %s, staging chunks of %zu bytes", d->device,
              c.engine().threaded() ? "progress thread" : "calling thread",
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

// Runs prepared calls on device buffers; the results are in place at return. Bounded, named
// and failing into the error state like the host calls (core/bounded.h).
Status runOnDevice(Comm& c, const std::vector<Prepared>& calls) {
  return bounded(c, calls[0].call, calls.size(), [&](RunningCall) -> Status {
    DeviceState& d = *c.device();
    STRATA_CUDA_CHECK(cudaSetDevice(d.device));  // the progress thread's first call sets it
    DeviceExecutor x(d);
    RunContext ctx = runContextOf(c, x);
    Status st = calls.size() == 1 ? run(ctx, calls[0]) : runGroup(ctx, calls);
    const cudaError_t rc = cudaStreamSynchronize(d.stream);
    if (st.isOk() && rc != cudaSuccess) {
      st = cudaFailure("cudaStreamSynchronize", rc, __FILE__, __LINE__);
    }
    return st;
  });
}

}  // namespace

Status setUpDevice(Comm& c, IssuingThread me, const Call& call, const Program& prog) {
  // Decided from the call alone, the same on every rank: never from local state.
  if (c.device() != nullptr && c.device()->prepared.count(keyOf(call)) != 0) return Status::ok();
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

Status submitDevice(Comm& c, const std::vector<Prepared>& prepared,
                    const std::vector<strataStream_t>& streams) {
  std::vector<cudaStream_t> gated;  // the distinct streams of the calls
  for (strataStream_t stream : streams) {
    const auto s = reinterpret_cast<cudaStream_t>(stream);
    if (std::find(gated.begin(), gated.end(), s) == gated.end()) gated.push_back(s);
  }
  if (prepared.empty()) return Status::ok();
  STRATA_RETURN_IF_ERROR(c.engine().error());
  DeviceState& d = *c.device();
  if (!d.gate) {
    // No progress thread: the streams' earlier work first, then the calls, done at return.
    for (cudaStream_t s : gated) STRATA_CUDA_CHECK(cudaStreamSynchronize(s));
    return runOnDevice(c, prepared);  // the error state on failure, as for host calls
  }
  // One ticket per stream; the last one's release frees them all (the gate's counter only
  // grows). A failure part-way leaves the held tickets to be released by a task that does
  // nothing, so that no stream waits for ever.
  std::vector<gpu::StreamGate::Ticket> tickets;
  Status held = Status::ok();
  for (cudaStream_t s : gated) {
    StatusOr<gpu::StreamGate::Ticket> t = d.gate->hold(s, d.gated + 1);
    if (!t.isOk()) {
      held = t.status();
      break;
    }
    ++d.gated;
    tickets.push_back(t.value());
  }
  if (tickets.empty()) return held;
  c.engine().submit([&c, prepared, tickets, held](const Status& earlier) {
    DeviceState& state = *c.device();
    Status st = earlier.isOk() ? held : earlier;
    {
      // On the timeline: how long the call waited for the work queued before it on its streams.
      TimelineSpan gate(c.timeline(), TimelineEvent::Cat::kWait, "stream gate",
                        prepared[0].call.seq);
      for (const gpu::StreamGate::Ticket& t : tickets) {
        if (st.isOk()) st = state.gate->waitReady(t);
      }
    }
    if (st.isOk()) st = runOnDevice(c, prepared);
    for (const gpu::StreamGate::Ticket& t : tickets) state.gate->release(t);
    return st;
  });
  return held;
}

#endif  // STRATA_HAVE_CUDA

}  // namespace strata::core
