// The CPU stand-in for CUDA: what its kernels (launch_standin.cc, strata's gpu/launch.h) and its
// one-member NCCL (nccl_standin.cc) use beyond CUDA's own API, which libstrata_cuda_standin.so
// implements for the calls strata makes. Test builds only (STRATA_CUDA_STANDIN=ON): never part
// of strata.
//
// What it promises, so that a missing synchronisation shows as a wrong value, as on a GPU:
//   - each stream's work runs later, in order, on a thread of its own; the legacy default
//     stream synchronises with the blocking streams as CUDA's does; events, cross-stream waits
//     and the host-side synchronisation of each call behave as CUDA documents them;
//   - CUDA_STANDIN_DELAY_US=D makes queued operations wait a seeded random time (up to D
//     microseconds) before they start; the seed is printed, CUDA_STANDIN_SEED fixes it;
//   - device memory is not host memory: the address cudaMalloc returns is mapped without access,
//     so host code that reads or writes it faults as it would on a GPU; stream work reaches it
//     through a second mapping (deviceAccess);
//   - a kernel is loaded at its first launch or cudaFuncGetAttributes, and loading waits until
//     no kernel runs (CUDA's lazy loading, CUDA_MODULE_LOADING=LAZY, the default);
//   - calls that synchronise the device (cudaFree, cudaFreeHost, cudaDeviceSynchronize) wait for
//     every stream, a spinning kernel's included, as on a GPU;
//   - a capturing stream records its work into a graph instead of running it, with CUDA's rules
//     for forks through events, joins and invalid calls (capture.cc); a graph's launch runs each
//     recorded body again, one after another in recording order (api_graph.cc);
//   - stream memory operations (cuStreamWaitValue32, cuStreamWriteValue32) through
//     cudaGetDriverEntryPoint*: a wait polls on its stream's thread and is no kernel (memops.cc).
#pragma once

#include <cuda_runtime.h>

#include <cstddef>
#include <functional>
#include <string>

namespace cuda_standin {

// A kernel of the stand-in. Its address is what cudaFuncGetAttributes takes for it; lazy
// loading loads each kernel once.
struct Kernel {
  explicit Kernel(const char* kernelName);  // registers it (define kernels as static objects)
  const char* name;
};

// The address stream work uses for `bytes` at `ptr`: device memory's second mapping, or the
// pointer itself for pinned host memory. Null, with *err set (and the thread's last error),
// when the range is neither, or runs past its allocation.
void* deviceAccess(const void* ptr, size_t bytes, cudaError_t* err);

// Enqueues `body` on `stream` as one launch of `kernel`: it runs on the stream's thread after
// the stream's earlier work, while later work waits for it. On a capturing stream it is recorded
// instead, and each launch of the graph calls it again: `body` must be re-runnable, reading what
// it captured by value (the addresses a kernel's parameters name), never consuming it. Returns,
// and sets as the thread's last error, what a launch would: cudaErrorInvalidResourceHandle for a
// stream that does not exist, cudaErrorStreamCaptureInvalidated on a stream of an invalidated
// capture. `what` names the launch in the stand-in's diagnostics (a wait that lasts).
cudaError_t launch(const Kernel& kernel, cudaStream_t stream, std::string what,
                   std::function<void()> body);

}  // namespace cuda_standin
