// Issuing a validated call on a communicator: where its buffers live decides how it runs.
#pragma once

#include "common/collective.h"
#include "common/status.h"
#include "core/comm.h"
#include "strata/strata.h"

namespace strata::core {

// Host buffers: after every call queued before it, on the calling thread; the result is in
// place at return. Device buffers: ordered on `stream` (core/device_side.h).
Status issue(Comm& c, const Call& call, strataStream_t stream);

}  // namespace strata::core
