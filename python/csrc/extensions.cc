// strata's extensions for the DDP hooks (strata_torch.hooks): an allreduce whose inter-host
// stages are compressed, and CSC with one residual per bucket.
#include <ATen/ATen.h>

#include <stdexcept>

#include "args.h"
#include "backend.h"

namespace strata::torch_backend {

c10::intrusive_ptr<c10d::Work> ProcessGroupStrata::allreduceCompressed(at::Tensor& tensor,
                                                                       c10d::ReduceOp reduceOp,
                                                                       const std::string& wire) {
  std::vector<at::Tensor> tensors{tensor};
  const at::Tensor& t = single(tensors, "allreduce_compressed");
  checkCpu(t, "allreduce_compressed", "strata compresses host buffers only");
  const strataDataType_t type = dataType(t, "allreduce_compressed");
  const strataRedOp_t op = redOp(reduceOp, "allreduce_compressed");
  TORCH_CHECK(wire == "fp16" || wire == "bf16",
              "strata: allreduce_compressed: wire type must be \"fp16\" or \"bf16\", got \"",
              wire, "\"");
  strataComm_t comm = nullptr;
  {
    std::lock_guard<std::mutex> lock(issue_);
    TORCH_CHECK(base_ != nullptr, "strata: allreduce_compressed on a group that was shut down");
    auto it = wireComms_.find(wire);
    if (it == wireComms_.end()) {
      // Made on first use: every member reaches this point in the same order (DDP calls its
      // hook for the same buckets on every rank), so the split is collective as required.
      strataConfig_t config = groupConfig();
      config.compress = wire.c_str();
      strataComm_t made = nullptr;
      const strataResult_t r = strataCommSplit(base_, 0, rank_, &made, &config);
      TORCH_CHECK(r == strataSuccess, "strata: making the ", wire,
                  " communicator failed: ", strataMessage(base_, r));
      it = wireComms_.emplace(wire, made).first;
    }
    comm = it->second;
  }
  at::Tensor buf = contiguousBuffer(t);
  auto work = c10::make_intrusive<StrataWork>(rank_, c10d::OpType::ALLREDUCE,
                                              "allreduce_compressed", tensors,
                                              std::vector<at::Tensor>{buf});
  return track(
      work, "allreduce_compressed",
      [&](strataRequest_t* req) {
        return strataIAllReduce(buf.data_ptr(), buf.data_ptr(), buf.numel(), type, op, comm, req);
      },
      copyBack(t, buf), comm);
}

c10::intrusive_ptr<c10d::Work> ProcessGroupStrata::cscAllreduce(at::Tensor& tensor, int64_t key,
                                                                double density,
                                                                int64_t chunkElems,
                                                                c10d::ReduceOp reduceOp) {
  std::vector<at::Tensor> tensors{tensor};
  const at::Tensor& t = single(tensors, "csc_allreduce");
  checkCpu(t, "csc_allreduce", "strata's CSC refuses device buffers");
  TORCH_CHECK(t.is_contiguous(), "strata: csc_allreduce needs a contiguous tensor");
  const strataDataType_t type = dataType(t, "csc_allreduce");
  const strataRedOp_t op = redOp(reduceOp, "csc_allreduce");
  TORCH_CHECK(chunkElems > 0, "strata: csc_allreduce: chunk must be positive, got ", chunkElems);
  auto work = c10::make_intrusive<StrataWork>(rank_, c10d::OpType::ALLREDUCE, "csc_allreduce",
                                              tensors);
  std::unique_lock<std::mutex> lock(issue_);
  TORCH_CHECK(comm_ != nullptr, "strata: csc_allreduce on a group that was shut down");
  auto it = csc_.find(key);
  if (it != csc_.end() && (it->second.numel != t.numel() || it->second.dtype != t.scalar_type())) {
    // DDP rebuilds its buckets after the first iteration (in the order gradients became
    // ready): the slot's residual belongs to the old layout, so it restarts at zero.
    strataCscDestroy(it->second.handle);
    csc_.erase(it);
    it = csc_.end();
  }
  if (it == csc_.end()) {
    strataCsc_t handle = nullptr;
    const strataResult_t r =
        strataCscCreate(comm_, static_cast<size_t>(t.numel()), type,
                        static_cast<size_t>(chunkElems), static_cast<float>(density), &handle);
    TORCH_CHECK(r == strataSuccess, "strata: csc_allreduce: ", strataMessage(comm_, r));
    it = csc_.emplace(key, Csc{handle, t.numel(), t.scalar_type()}).first;
  }
  // strataCscAllReduce is blocking: it runs after the calls queued before it, here, and the
  // work is complete when it returns.
  const strataResult_t r = strataCscAllReduce(it->second.handle, t.data_ptr(), op, nullptr);
  lock.unlock();  // completing runs the future's callbacks, which may issue more calls
  std::exception_ptr error;
  if (r != strataSuccess) {
    error = std::make_exception_ptr(
        std::runtime_error("strata: csc_allreduce failed: " + strataMessage(comm_, r)));
  }
  work->complete(error);
  return work;
}

}  // namespace strata::torch_backend
