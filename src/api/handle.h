// The handle behind strataComm_t: the library's communicator (core::Comm) and what the C API
// keeps per handle, plus the set of live handles, so that a destroyed or bogus handle is
// refused instead of used.
#pragma once

#include <memory>
#include <string>

#include "core/comm.h"

// Defined in the global namespace: the public header declares `struct strataComm`.
struct strataComm {
  std::unique_ptr<strata::core::Comm> impl;
  std::string lastError;  // strataGetLastError(comm)
};

namespace strata::api {

void registerComm(strataComm* comm);
// Returns false when `comm` was not live.
bool unregisterComm(strataComm* comm);
bool isLive(const strataComm* comm);

}  // namespace strata::api
