// Releasing the GIL where the backend blocks for its own threads.
#pragma once

#include <Python.h>

namespace strata::torch_backend {

// Releases the GIL for a scope when this thread holds it. A group is often destroyed (or
// shrunk) from Python with the GIL held while its worker threads still hold tensors whose
// release needs the GIL: joining or waiting for them with the GIL held would never return.
class GilRelease {
 public:
  GilRelease() {
    if (Py_IsInitialized() && PyGILState_Check()) saved_ = PyEval_SaveThread();
  }
  ~GilRelease() {
    if (saved_ != nullptr) PyEval_RestoreThread(saved_);
  }
  GilRelease(const GilRelease&) = delete;
  GilRelease& operator=(const GilRelease&) = delete;

 private:
  PyThreadState* saved_ = nullptr;
};

}  // namespace strata::torch_backend
