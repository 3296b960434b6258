// The tools-facing view of a communicator (core/tools_view.h) behind a C handle: strata's own
// tools make their communicator with the public strataCommInitMPI and reach the internals they
// need only through this.
#pragma once

#include <memory>

#include "core/tools_view.h"
#include "strata/strata.h"

namespace strata::api {

// The view of the communicator behind `comm`; null for a handle that names no live, initialised
// communicator. Valid until `comm` is destroyed.
std::unique_ptr<core::ToolsView> toolsViewOf(strataComm_t comm);

}  // namespace strata::api
