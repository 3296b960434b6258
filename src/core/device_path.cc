// The host side of core/device_path.h, and the switch to the GPU side (gpu/device_calls.h) in
// builds with CUDA. A host-only build treats every buffer as host memory.
#include "core/device_path.h"

#include <cstring>
#include <string>

#include "common/reduce.h"

#ifdef STRATA_HAVE_CUDA
#include "gpu/device_calls.h"
#endif

namespace strata::core {

StatusOr<Place> placeOf(const strataComm& c, const void* send, const void* recv) {
#ifdef STRATA_HAVE_CUDA
  return gpu::placeOf(c, send, recv);
#else
  return Place::kHost;
#endif
}

Status drainDevice(strataComm& c) {
#ifdef STRATA_HAVE_CUDA
  if (c.device) return gpu::drain(c);
#endif
  return Status::ok();
}

Status asyncError(const strataComm& c) {
#ifdef STRATA_HAVE_CUDA
  if (c.device) return gpu::asyncError(c);
#endif
  return Status::ok();
}

Status submitDevice(strataComm& c, strataStream_t stream, const DeviceCall& call) {
#ifdef STRATA_HAVE_CUDA
  return gpu::submit(c, stream, call);
#else
  return internalError("a device call in a build without CUDA");
#endif
}

Status copyBytes(strataComm& c, void* dst, const void* src, size_t bytes) {
#ifdef STRATA_HAVE_CUDA
  if (c.onDevice) return gpu::copyBytes(c, dst, src, bytes);
#endif
  std::memcpy(dst, src, bytes);
  return Status::ok();
}

Status divideBy(strataComm& c, void* buf, size_t count, strataDataType_t type, int divisor) {
#ifdef STRATA_HAVE_CUDA
  if (c.onDevice) return gpu::divideBy(c, buf, count, type, divisor);
#endif
  scaleDown(buf, count, type, divisor);
  return Status::ok();
}

StatusOr<void*> scratchBytes(strataComm& c, size_t bytes) {
#ifdef STRATA_HAVE_CUDA
  if (c.onDevice) return gpu::scratchBytes(c, bytes);
#endif
  return c.scratch.get(bytes);
}

StatusOr<fabric::Fabric*> fabricOf(strataComm& c, LevelGroup* g) {
#ifdef STRATA_HAVE_CUDA
  if (c.onDevice) return gpu::deviceFabricOf(c, g);
#endif
  fabric::Fabric* f = g == nullptr ? c.flat.get() : g->fabric.get();
  if (f == nullptr) return internalError("a step on a group this rank has no fabric for");
  return f;
}

#ifndef STRATA_HAVE_CUDA
void DeviceStateDeleter::operator()(DeviceState*) const {}  // never made without CUDA
#endif

}  // namespace strata::core
