#include "work.h"

#include <Python.h>

#include <stdexcept>
#include <string>

namespace strata::torch_backend {

StrataWork::StrataWork(int rank, c10d::OpType type, const char* title,
                       std::vector<at::Tensor> outputs, std::vector<at::Tensor> keep)
    : c10d::Work(rank, type, title),
      title_(title),
      outputs_(std::move(outputs)),
      keep_(std::move(keep)),
      future_(c10::make_intrusive<c10::ivalue::Future>(
          c10::ListType::create(c10::TensorType::get()))) {}

bool StrataWork::wait(std::chrono::milliseconds timeout) {
  std::unique_lock<std::mutex> lock(mutex_);
  if (timeout > std::chrono::milliseconds(0)) {
    if (!cv_.wait_for(lock, timeout, [&] { return completed_; })) {
      throw std::runtime_error(std::string("strata: ") + title_ + " did not complete within " +
                               std::to_string(timeout.count()) + " ms (Work.wait timeout)");
    }
  } else {
    cv_.wait(lock, [&] { return completed_; });
  }
  if (exception_) std::rethrow_exception(exception_);
  return true;
}

c10::intrusive_ptr<c10::ivalue::Future> StrataWork::getFuture() {
  if (Py_IsInitialized() && PyGILState_Check()) askedByPython_ = true;
  return future_;
}

int StrataWork::sourceRank() const {
  const int source = source_;
  TORCH_CHECK(source >= 0, "strata: ", title_,
              ": the source rank is known once a receive from any source completed");
  return source;
}

void StrataWork::settle(std::exception_ptr error, const std::function<void()>& after) {
  if (!error && after) {
    try {
      after();
    } catch (...) {
      error = std::current_exception();
    }
  }
  keep_.clear();
  error_ = error;
  finish(error);  // wakes wait() and is_completed()
}

void StrataWork::resolve() {
  // The future last: its callbacks (DDP's) run here, on this thread.
  if (error_) {
    future_->setError(error_);
  } else {
    future_->markCompleted(c10::IValue(outputs_));
  }
}

}  // namespace strata::torch_backend
