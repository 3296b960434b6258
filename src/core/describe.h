// A readable description of a communicator's hierarchy, for strataCommDescribe and logs.
#pragma once

#include <string>

#include "core/comm.h"

namespace strata::core {

std::string describeComm(const Comm& c);

}  // namespace strata::core
