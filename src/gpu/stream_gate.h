// Stream ordering for collectives a host thread runs (after Aluminum's host-transfer backend):
// the call returns at once, yet work queued on the user's stream after it sees its result.
// Only built with CUDA.
//
// Protocol, for the i-th gated call (i = 1, 2, ...) on a user stream S:
//   caller:  hold(S, i): record event E_i on S; enqueue on S a one-thread kernel that waits
//            until the counter reaches i; hand the ticket to the runner.
//   runner:  waitReady(ticket): wait for E_i (the work queued on S before the call is done);
//            run the collective on the communicator's own streams and wait for them;
//            release(ticket): store i into the counter.
// The counter lives in mapped pinned host memory, so the GPU reads the host's store. Work
// queued on S after the call starts only once the counter reaches i: it sees the result.
// Invariants: tickets are released one at a time and in order (the runner is one thread that
// runs calls in submission order), so the counter only grows and a release frees every
// earlier waiter; the runner never calls a CUDA function that waits for the whole device
// (cudaFree, cudaDeviceSynchronize, a legacy-stream copy), because the waiting kernels would
// never finish and neither would it. A failed call is still released, so no stream waits for
// ever.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "common/status.h"

namespace strata::gpu {

class StreamGate {
 public:
  struct Ticket {
    uint64_t seq = 0;
    cudaEvent_t ready = nullptr;
  };

  static StatusOr<std::unique_ptr<StreamGate>> create();
  ~StreamGate();  // every ticket must have been released
  StreamGate(const StreamGate&) = delete;
  StreamGate& operator=(const StreamGate&) = delete;

  // Caller: gates `stream` on call `seq` (one more than the last ticket's). On failure nothing
  // was queued on the stream and the sequence is unchanged.
  StatusOr<Ticket> hold(cudaStream_t stream, uint64_t seq);
  // Runner: waits until the work queued on the stream before the call is done.
  Status waitReady(const Ticket& t);
  // Runner: lets the stream past the call (after its device writes are complete).
  void release(const Ticket& t);

 private:
  StreamGate() = default;

  volatile unsigned long long* counter_ = nullptr;  // host side of the mapped counter
  const volatile unsigned long long* deviceCounter_ = nullptr;
  std::mutex mutex_;                     // guards the event pool (caller and runner use it)
  std::vector<cudaEvent_t> freeEvents_;  // reused: creating one per call costs microseconds
};

}  // namespace strata::gpu
