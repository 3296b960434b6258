// The GPU side of core/device_path.h: see there for what each function does. Only built with
// CUDA.
#pragma once

#include "common/status.h"
#include "core/comm.h"
#include "core/device_path.h"

namespace strata::gpu {

StatusOr<core::Place> placeOf(const strataComm& c, const void* send, const void* recv);
Status drain(strataComm& c);
Status asyncError(const strataComm& c);
Status submit(strataComm& c, strataStream_t stream, const core::DeviceCall& call);

Status copyBytes(strataComm& c, void* dst, const void* src, size_t bytes);
Status divideBy(strataComm& c, void* buf, size_t count, strataDataType_t type, int divisor);
StatusOr<void*> scratchBytes(strataComm& c, size_t bytes);
StatusOr<fabric::Fabric*> deviceFabricOf(strataComm& c, core::LevelGroup* g);

}  // namespace strata::gpu
