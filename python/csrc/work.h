// The Work (and its future) that every operation of the strata backend returns. It completes
// on the backend's completer thread when strata's requests complete, never on the caller's:
// DDP chains its bucket callbacks on the future while the backward pass goes on.
#pragma once

#include <atomic>
#include <chrono>
#include <exception>
#include <functional>
#include <vector>

#include "torch_api.h"

namespace strata::torch_backend {

class StrataWork : public c10d::Work {
 public:
  // `outputs`: what result() and the future hold. `keep`: tensors strata reads or writes until
  // the work completes (temporaries, inputs), held alive until then.
  StrataWork(int rank, c10d::OpType type, const char* title, std::vector<at::Tensor> outputs,
             std::vector<at::Tensor> keep = {});

  // Waits for completion; `timeout` > 0 bounds the wait (the operation itself is bounded by
  // the group's timeout, which strata enforces). Throws the operation's error.
  bool wait(std::chrono::milliseconds timeout) override;
  // The future. Asked for with the GIL held (work.get_future() from Python, where a hook can
  // hang callbacks that issue collectives), it is marked so: the backend's gate waits for such
  // futures' callbacks (backend.h, "Callbacks").
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override;
  bool futureAskedByPython() const { return askedByPython_; }
  const char* title() const { return title_; }
  std::vector<at::Tensor> result() override { return outputs_; }
  // The sender of a receive from any source (work._source_rank()), once completed.
  int sourceRank() const override;
  void setSourceRank(int rank) { source_ = rank; }

  // Runs `after` (copies out of temporaries) if there is no error, then completes the work and
  // its future (whose callbacks run on this thread). Called once. The same as settle() then
  // resolve(), which the backend calls on different threads (backend.h, "Threads and order").
  void complete(std::exception_ptr error, const std::function<void()>& after = {}) {
    settle(std::move(error), after);
    resolve();
  }
  // Runs `after` if there is no error, frees the kept tensors and completes the work:
  // wait() and is_completed() see it, the future not yet.
  void settle(std::exception_ptr error, const std::function<void()>& after = {});
  // Completes the future with the result or settle's error; its callbacks run here.
  void resolve();

 private:
  const char* title_;
  std::vector<at::Tensor> outputs_;
  std::vector<at::Tensor> keep_;
  std::atomic<int> source_{-1};
  std::exception_ptr error_;  // settle's, for resolve
  std::atomic<bool> askedByPython_{false};
  c10::intrusive_ptr<c10::ivalue::Future> future_;
};

}  // namespace strata::torch_backend
