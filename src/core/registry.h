// The set of live communicators, so a destroyed or bogus handle is refused instead of used.
#pragma once

struct strataComm;

namespace strata::core {

void registerComm(strataComm* comm);
// Returns false when `comm` was not live.
bool unregisterComm(strataComm* comm);
bool isLive(const strataComm* comm);

}  // namespace strata::core
