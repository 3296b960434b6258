// The PyTorch API the backend codes against. PyTorch 1.13 (Debian 12's) has backends derive
// from c10d::ProcessGroup; from 2.0 on they derive from c10d::Backend, which a ProcessGroup
// wraps. Work is the top-level c10d::Work in both.
#pragma once

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Types.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>
#include <torch/version.h>

#if TORCH_VERSION_MAJOR >= 2
#include <torch/csrc/distributed/c10d/Backend.hpp>
#endif

namespace strata::torch_backend {

#if TORCH_VERSION_MAJOR >= 2
using BackendBase = c10d::Backend;
#else
using BackendBase = c10d::ProcessGroup;
#endif

}  // namespace strata::torch_backend
