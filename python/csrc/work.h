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
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return future_; }
  std::vector<at::Tensor> result() override { return outputs_; }
  // The sender of a receive from any source (work._source_rank()), once completed.
  int sourceRank() const override;
  void setSourceRank(int rank) { source_ = rank; }

  // Runs `after` (copies out of temporaries) if there is no error, then completes the work and
  // its future. Called once, on the completer thread.
  void complete(std::exception_ptr error, const std::function<void()>& after = {});

 private:
  const char* title_;
  std::vector<at::Tensor> outputs_;
  std::vector<at::Tensor> keep_;
  std::atomic<int> source_{-1};
  c10::intrusive_ptr<c10::ivalue::Future> future_;
};

}  // namespace strata::torch_backend
