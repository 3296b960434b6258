// Stream ordering for a device call's host stage (after Aluminum's host-transfer backend): the
// issuing thread returns at once, yet work queued on the user's stream after the stage sees its
// result. Only built with CUDA. A call's stream-ordered stages never pass through here: they are
// enqueued on the stream itself (core/route.h).
//
// Protocol, for the i-th gated host stage (i = 1, 2, ...) on a user stream S:
//   caller:  hold(S, i): record event E_i on S; enqueue on S a wait until the gate's counter
//            reaches i; hand the ticket to the runner.
//   runner:  waitReady(ticket): wait for E_i (the work queued on S before the stage is done);
//            run the stage on the communicator's own streams and wait for them;
//            release(ticket): store i into the counter.
// The counter lives in mapped pinned host memory, so the GPU reads the host's store. Work
// queued on S after the hold starts only once the counter reaches i: it sees the result.
//
// How S waits (Mode, chosen at creation from STRATA_GPU_GATE):
//   kMemOps  a stream memory operation, cuStreamWaitValue32 (cyclic >=, on the counter's low 32
//            bits): the GPU's front end waits, no SM is held, and ranks sharing a GPU are not
//            kept off it. Checked at creation with a cuStreamWriteValue32 and a wait on the
//            communicator's stream; devices or drivers without them report CUDA_ERROR_NOT_SUPPORTED.
//   kKernel  a one-thread kernel spinning on the counter: holds an SM slot (and the process's
//            time slice, so ranks sharing a GPU without MPS take turns) while the stage runs.
// Invariants: tickets are released one at a time and in order (the runner is one thread that
// runs stages in submission order), so the counter only grows and a release frees every earlier
// waiter (32-bit cyclic comparison: fewer than 2^31 tickets are ever outstanding); in kKernel
// mode the runner never calls a CUDA function that waits for the whole device (cudaFree,
// cudaDeviceSynchronize, a legacy-stream copy), because the waiting kernels would never finish
// and neither would it. A failed stage is still released, so no stream waits for ever.
#pragma once

#include <cuda_runtime.h>

#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "common/status.h"

namespace strata::gpu {

class StreamGate {
 public:
  enum class Mode { kMemOps, kKernel };
  struct Ticket {
    uint64_t seq = 0;
    cudaEvent_t ready = nullptr;
  };

  // `want`: "auto" (stream memory operations where the driver and device have them, else the
  // kernel), "memops" (an error where they are missing) or "kernel". `probe`: a stream of the
  // caller's on which support is checked (it is synchronised).
  static StatusOr<std::unique_ptr<StreamGate>> create(const std::string& want, cudaStream_t probe);
  ~StreamGate();  // every ticket must have been released
  StreamGate(const StreamGate&) = delete;
  StreamGate& operator=(const StreamGate&) = delete;

  Mode mode() const { return mode_; }
  // What the log says of the choice: "stream memory operations (cuStreamWaitValue32)", or the
  // kernel and why.
  const std::string& describe() const { return describe_; }

  // Caller: gates `stream` on call `seq` (one more than the last ticket's). On failure nothing
  // was queued on the stream and the sequence is unchanged.
  StatusOr<Ticket> hold(cudaStream_t stream, uint64_t seq);
  // Runner: waits until the work queued on the stream before the call is done.
  Status waitReady(const Ticket& t);
  // Runner: lets the stream past the call (after its device writes are complete).
  void release(const Ticket& t);

 private:
  StreamGate() = default;
  // Whether stream memory operations work here; `why` says why not.
  bool probeMemOps(cudaStream_t probe, std::string* why);

  Mode mode_ = Mode::kKernel;
  std::string describe_;
  volatile unsigned long long* counter_ = nullptr;  // host side of the mapped counter
  const volatile unsigned long long* deviceCounter_ = nullptr;
  void* waitValue_ = nullptr;   // cuStreamWaitValue32, from the driver (kMemOps)
  void* writeValue_ = nullptr;  // cuStreamWriteValue32 (the check at creation)
  std::mutex mutex_;                     // guards the event pool (caller and runner use it)
  std::vector<cudaEvent_t> freeEvents_;  // reused: creating one per call costs microseconds
};

}  // namespace strata::gpu
