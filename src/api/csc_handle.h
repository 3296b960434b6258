// The objects behind strataCsc_t. As with communicator handles (api/handle.h), a handle is not
// an address: it encodes an id that is never reused in the life of the process, so a handle
// kept after strataCscDestroy is refused even when a new object takes the old one's memory.
//
// Invariants: a handle value is odd (never NULL, never an object's address); ids count up from
// 1 and are never reused (a 63-bit counter does not wrap).
#pragma once

#include <memory>

#include "core/csc.h"
#include "strata/strata.h"

namespace strata::api {

// What the C API keeps per CSC object: the communicator's handle (looked up, generation-checked,
// at every call, so a destroyed communicator is refused) and the core state.
struct CscEntry {
  strataComm_t comm = nullptr;
  std::unique_ptr<core::Csc> impl;
};

strataCsc_t registerCsc(std::unique_ptr<CscEntry> entry);
// Removes `handle` and returns its entry (null when it was not live).
std::unique_ptr<CscEntry> unregisterCsc(strataCsc_t handle);
// The entry behind a live handle; null for NULL, destroyed and made-up handles. Valid until the
// handle is destroyed (which the application must not do during another call on it).
CscEntry* lookupCsc(strataCsc_t handle);

}  // namespace strata::api
