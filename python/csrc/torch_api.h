// The PyTorch API the backend codes against. PyTorch 1.13 (Debian 12's) has backends derive
// from c10d::ProcessGroup; from 2.0 on they derive from c10d::Backend, which a ProcessGroup
// wraps (one backend object per device type; torch.distributed registers one object for all
// of a custom backend's devices when they share a backend name). Work is the top-level
// c10d::Work in both.
//
// Checked against PyTorch's newest c10d headers we could read (compiled here: 1.13; syntax-
// checked against Debian's 2.6.0 and 2.14.1 headers, scripts/pt2-syntax-check.sh; see
// docs/torch.md "PyTorch versions"):
// - c10d::Backend(int rank, int size); rank_ and size_ are protected members (const before
//   2.x-late, plain int since); `virtual const std::string getBackendName() const`.
// - Every collective we override keeps its 1.13 signature: broadcast, allreduce,
//   allreduce_coalesced, reduce, allgather, _allgather_base, reduce_scatter,
//   _reduce_scatter_base, alltoall_base, alltoall, barrier (all `(..., const XOptions&)`),
//   send/recv `(std::vector<at::Tensor>&, int, int)`, each returning
//   c10::intrusive_ptr<c10d::Work>. The newest headers add torchcomms-named aliases
//   (all_gather_single, reduce_scatter_single, all_to_all_single) that forward to and from
//   the _base names, so overriding the _base names still serves both.
// - gather, scatter, allgather_coalesced, recvAnysource and the sequence-number pair keep their
//   1.13 signatures; allgather_into_tensor_coalesced and reduce_scatter_tensor_coalesced
//   `(std::vector<at::Tensor>& outputs, std::vector<at::Tensor>& inputs, const XOptions&)`
//   arrived in 2.1 (PyTorch PRs #101157, #103561) and are overridden from 2.1 on.
// - Backend gained virtual abort(), shutdown(), split(), merge() ...: nothing here may hide
//   them (GCC 13's -Wall has -Woverloaded-virtual), hence close() and release(). shutdown()
//   (destroy_process_group's call; not in 2.6's header, in 2.11's) is overridden where
//   Backend.hpp declares it: python/csrc/CMakeLists.txt reads the header and defines
//   STRATA_TORCH_BACKEND_SHUTDOWN.
// - c10d::Work(int rank = -1, OpType = UNKNOWN, const char* profilingTitle = nullptr,
//   optional<vector<Tensor>> inputs = nullopt); virtual isCompleted(), synchronize(),
//   wait(std::chrono::milliseconds), result(), getFuture(); protected finish(exception_ptr),
//   mutex_, cv_, completed_, exception_. OpType values unchanged (BROADCAST ... _REDUCE_SCATTER_BASE,
//   UNKNOWN).
// - c10d::ReduceOp: implicit from ReduceOp::RedOpType, `operator RedOpType() const`.
// - The headers need C++17 up to PyTorch 2.13; 2.14's ATen.h requires C++20 (the build picks
//   the standard from Torch_VERSION, python/csrc/CMakeLists.txt).
#pragma once

#include <torch/csrc/distributed/c10d/ProcessGroup.hpp>
#include <torch/csrc/distributed/c10d/Types.hpp>
#include <torch/csrc/distributed/c10d/Work.hpp>
#include <torch/version.h>

#if TORCH_VERSION_MAJOR >= 2
#include <torch/csrc/distributed/c10d/Backend.hpp>
#endif

// True when the PyTorch compiled against is at least major.minor.
#define STRATA_TORCH_AT_LEAST(major, minor) \
  (TORCH_VERSION_MAJOR > (major) ||         \
   (TORCH_VERSION_MAJOR == (major) && TORCH_VERSION_MINOR >= (minor)))

namespace strata::torch_backend {

#if TORCH_VERSION_MAJOR >= 2
using BackendBase = c10d::Backend;
#else
using BackendBase = c10d::ProcessGroup;
#endif

}  // namespace strata::torch_backend
