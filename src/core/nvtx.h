// NVTX ranges (CUDA builds): the timeline's spans (core/timeline.h) as ranges of the "strata"
// domain, with the same names, so that Nsight Systems shows strata's calls and steps beside
// the CUDA kernels, as NCCL's own ranges are shown.
//
// Ranges are made only while a tool collects NVTX in this process: NVTX hands out a domain only
// when a tool is attached (NVTX_INJECTION64_PATH, as nsys sets it), so without one strata never
// opens a timeline for NVTX alone and each hook stays one null test. STRATA_NVTX=0 turns them off
// with a tool attached. Ranges are start/end ranges (not push/pop): a pipelined allreduce's
// range ends after other steps began.
#pragma once

#include <cstdint>

namespace strata::core::nvtx {

// A tool collects NVTX in this process (always false in a build without CUDA). The domain is
// made at the first question; thread-safe.
bool attached();

// Starts a range named `message` in category `category` (1-based, named at attach: call, step,
// wait, fusion, compress, staging) and returns its id for end(); 0 when not attached.
uint64_t start(const char* message, uint32_t category);
void end(uint64_t id);

}  // namespace strata::core::nvtx
