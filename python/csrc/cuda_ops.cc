// CUDA tensors (built when PyTorch has CUDA: STRATA_TORCH_CUDA). Served through strata's
// stream-ordered C API, as ProcessGroupNCCL serves them through NCCL's, with one difference:
// the collective runs on the CURRENT stream of the tensor's device rather than on a stream of
// the backend's own, so no cross-stream events are needed before the call:
//   - the call starts after the work the user queued on that stream (strata's stream order);
//   - copies out of temporaries are queued on the same stream behind it;
//   - an event recorded there after them completes the Work: wait() makes the caller's current
//     stream wait for it (no host block, as ProcessGroupNCCL's default), isCompleted() queries
//     it, synchronize() blocks the host until it has passed.
// The Work's future is completed at once with CUDA events of that stream (c10's Future records
// them), so DDP's callbacks and fut.wait() are ordered as with NCCL.
//
// Not served on CUDA tensors: nonblocking-only paths of the library (CSC), compression (strata
// compresses host buffers only), and the point-to-point and alltoall lanes (they run strata's
// blocking host calls on worker threads). Each is refused with a message that says so.
#include <c10/cuda/CUDAFunctions.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>
#include <cuda_runtime_api.h>

#include <cstdlib>
#include <mutex>
#include <string>

#include "backend.h"

namespace strata::torch_backend {
namespace {

void cudaCheck(cudaError_t e, const char* what) {
  TORCH_CHECK(e == cudaSuccess, "strata: ", what, " failed: ", cudaGetErrorString(e));
}

class CudaWork : public c10d::Work {
 public:
  CudaWork(int rank, c10d::OpType type, const char* title, std::vector<at::Tensor> outputs,
           std::vector<at::Tensor> keep, at::Device device)
      : c10d::Work(rank, type, title),
        outputs_(std::move(outputs)),
        keep_(std::move(keep)),
        device_(device),
        future_(c10::make_intrusive<c10::ivalue::Future>(
            c10::ListType::create(c10::TensorType::get()), std::vector<c10::Device>{device})) {
    c10::cuda::CUDAGuard guard(device_);
    cudaCheck(cudaEventCreateWithFlags(&event_, cudaEventDisableTiming), "cudaEventCreate");
  }
  ~CudaWork() override {
    if (event_ != nullptr) {
      c10::cuda::CUDAGuard guard(device_);
      cudaEventDestroy(event_);  // a pending event is released once it completes
    }
  }

  // Called once, on the issuing thread, with the collective's stream current.
  void record(cudaStream_t stream) {
    cudaCheck(cudaEventRecord(event_, stream), "cudaEventRecord");
    // The future's events are recorded on the current stream of the device: this one.
    future_->markCompleted(c10::IValue(outputs_));
  }

  bool isCompleted() override {
    c10::cuda::CUDAGuard guard(device_);
    const cudaError_t e = cudaEventQuery(event_);
    if (e == cudaErrorNotReady) return false;
    cudaCheck(e, "cudaEventQuery");
    release();
    return true;
  }
  // Blocks the host until the stream has passed the collective.
  void synchronize() override {
    c10::cuda::CUDAGuard guard(device_);
    cudaCheck(cudaEventSynchronize(event_), "cudaEventSynchronize");
    release();
  }
  // Makes the caller's current stream wait for the collective; the host does not wait (the
  // timeout does not apply: the group's timeout bounds the collective, strata enforces it).
  bool wait(std::chrono::milliseconds) override {
    c10::cuda::CUDAGuard guard(device_);
    const cudaStream_t current = c10::cuda::getCurrentCUDAStream(device_.index()).stream();
    cudaCheck(cudaStreamWaitEvent(current, event_, 0), "cudaStreamWaitEvent");
    return true;
  }
  c10::intrusive_ptr<c10::ivalue::Future> getFuture() override { return future_; }
  std::vector<at::Tensor> result() override { return outputs_; }

 private:
  // The inputs and temporaries were used on the collective's stream, which the caching
  // allocator orders their reuse on; they are held until the Work is seen complete (as
  // ProcessGroupNCCL stashes its tensors) so that nothing else can take their memory early.
  void release() {
    std::lock_guard<std::mutex> lock(mutex_);
    keep_.clear();
  }

  std::vector<at::Tensor> outputs_;
  std::vector<at::Tensor> keep_;
  at::Device device_;
  c10::intrusive_ptr<c10::ivalue::Future> future_;
  cudaEvent_t event_ = nullptr;
};

// The launcher's local rank: torch's LOCAL_RANK, else Open MPI's, MPICH's or Slurm's.
int localRank() {
  for (const char* name :
       {"LOCAL_RANK", "OMPI_COMM_WORLD_LOCAL_RANK", "MPI_LOCALRANKID", "SLURM_LOCALID"}) {
    const char* v = std::getenv(name);
    if (v != nullptr && *v != '\0') return std::atoi(v);
  }
  return -1;
}

// Once per process, at the first CUDA tensor: a user who did not pick a device (the current
// one is still 0) gets the one of the launcher's local rank, as torchrun scripts do with
// torch.cuda.set_device(LOCAL_RANK). Ranks beyond the device count (several ranks on one GPU)
// keep device 0.
void pinDeviceOnce() {
  static std::once_flag once;
  std::call_once(once, [] {
    const int local = localRank();
    if (local <= 0 || c10::cuda::current_device() != 0) return;
    if (local < static_cast<int>(c10::cuda::device_count())) {
      c10::cuda::set_device(static_cast<c10::DeviceIndex>(local));
    }
  });
}

}  // namespace

c10::intrusive_ptr<c10d::Work> ProcessGroupStrata::onStream(
    c10d::OpType type, const char* op, const at::Device& device, std::vector<at::Tensor> outputs,
    std::vector<at::Tensor> keep,
    const std::vector<std::function<strataResult_t(strataStream_t)>>& issues,
    const std::function<void()>& after) {
  TORCH_CHECK(device.is_cuda() && device.has_index(), "strata: ", op, ": not a CUDA device: ",
              device);
  ++seq_;
  pinDeviceOnce();
  c10::cuda::CUDAGuard guard(device);
  const c10::cuda::CUDAStream stream = c10::cuda::getCurrentCUDAStream(device.index());
  auto work = c10::make_intrusive<CudaWork>(rank_, type, op, std::move(outputs), std::move(keep),
                                            device);
  std::lock_guard<std::mutex> lock(issue_);
  TORCH_CHECK(comm_ != nullptr, "strata: ", op, " on a process group that was shut down");
  TORCH_CHECK(cudaDevice_ < 0 || cudaDevice_ == device.index(), "strata: ", op,
              ": the tensor is on ", device, " but this group's CUDA tensors are on cuda:",
              cudaDevice_, " (strata binds a communicator to one GPU; use one device per "
              "process)");
  cudaDevice_ = device.index();
  const bool group = issues.size() > 1;
  strataResult_t failed = strataSuccess;
  if (group) strataGroupStart();
  for (const auto& issue : issues) {
    failed = issue(reinterpret_cast<strataStream_t>(stream.stream()));
    if (failed != strataSuccess) break;
  }
  if (group) {
    const strataResult_t r = strataGroupEnd();
    if (failed == strataSuccess) failed = r;
  }
  TORCH_CHECK(failed == strataSuccess, "strata: ", op, " failed: ",
              strataMessage(comm_, failed));
  if (after) after();  // stream-ordered behind the collective
  work->record(stream.stream());
  return work;
}

}  // namespace strata::torch_backend
