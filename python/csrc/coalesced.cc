// PyTorch 2's coalesced forms of all_gather_into_tensor and reduce_scatter_tensor
// (allgather_into_tensor_coalesced, reduce_scatter_tensor_coalesced: what
// torch.distributed._coalescing_manager and FSDP route to a Backend). Each pair (output[i],
// input[i]) is one strata all-gather or reduce-scatter; all of them form one strata group, one
// queued call after the stream's work for CUDA tensors, as allreduce_coalesced. PyTorch 1.13 has
// neither call: nothing here is compiled against it.
#include "torch_api.h"

#if STRATA_TORCH_AT_LEAST(2, 1)

#include <ATen/ATen.h>

#include "args.h"
#include "backend.h"

namespace strata::torch_backend {
namespace {

using Work = c10::intrusive_ptr<c10d::Work>;

// What a coalesced call issues for pair i: its host request or its stream-ordered call.
struct Pairs {
  std::vector<at::Tensor> keep;
  std::vector<std::function<strataResult_t(strataRequest_t*)>> issues;
  std::vector<std::function<strataResult_t(strataStream_t)>> onStream;
  std::vector<std::function<void()>> copies;
  std::function<void()> copyAll() const {
    return [copies = copies] {
      for (const auto& c : copies) c();
    };
  }
};

void checkPairs(const std::vector<at::Tensor>& outputs, const std::vector<at::Tensor>& inputs,
                int64_t outPerIn, const char* op) {
  TORCH_CHECK(!inputs.empty() && outputs.size() == inputs.size(), "strata: ", op,
              " takes as many outputs as inputs (at least one); got ", outputs.size(), " and ",
              inputs.size());
  checkSameDevice(inputs, inputs[0], op, "inputs");
  checkSameDevice(outputs, inputs[0], op, "outputs");
  for (size_t i = 0; i < inputs.size(); ++i) {
    checkDense(inputs[i], op, "an input");
    checkDense(outputs[i], op, "an output");
    TORCH_CHECK(outputs[i].scalar_type() == inputs[i].scalar_type(), "strata: ", op, ": output ",
                i, " has dtype ", outputs[i].scalar_type(), ", its input ",
                inputs[i].scalar_type());
    // all-gather: output = size x input; reduce-scatter: input = size x output.
    const bool gather = outPerIn > 0;
    const int64_t big = gather ? outputs[i].numel() : inputs[i].numel();
    const int64_t small = gather ? inputs[i].numel() : outputs[i].numel();
    const int64_t factor = gather ? outPerIn : -outPerIn;
    TORCH_CHECK(big == small * factor, "strata: ", op, ": pair ", i, " has ", big,
                " elements where world_size x ", small, " = ", small * factor, " are expected");
  }
}

}  // namespace

Work ProcessGroupStrata::allgather_into_tensor_coalesced(std::vector<at::Tensor>& outputs,
                                                         std::vector<at::Tensor>& inputs,
                                                         const c10d::AllgatherOptions&) {
  const char* op = "allgather_into_tensor_coalesced";
  checkPairs(outputs, inputs, size_, op);
  Pairs p;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const strataDataType_t type = dataType(inputs[i], op);
    at::Tensor in = contiguousBuffer(inputs[i]), out = contiguousBuffer(outputs[i]);
    p.keep.insert(p.keep.end(), {in, out});
    if (auto c = copyBack(outputs[i], out)) p.copies.push_back(c);
    const size_t n = static_cast<size_t>(in.numel());
    p.issues.push_back([this, in, out, n, type](strataRequest_t* req) {
      return strataIAllGather(in.data_ptr(), out.data_ptr(), n, type, comm_, req);
    });
    p.onStream.push_back([this, in, out, n, type](strataStream_t s) {
      return strataAllGather(in.data_ptr(), out.data_ptr(), n, type, comm_, s);
    });
  }
  if (inputs[0].is_cuda()) {
    return onStream(c10d::OpType::_ALLGATHER_BASE, op, inputs[0].device(), outputs, p.keep,
                    p.onStream, p.copyAll());
  }
  auto work = c10::make_intrusive<StrataWork>(rank_, c10d::OpType::_ALLGATHER_BASE, op, outputs,
                                              p.keep);
  return trackGroup(work, op, p.issues, p.copyAll());
}

Work ProcessGroupStrata::reduce_scatter_tensor_coalesced(std::vector<at::Tensor>& outputs,
                                                         std::vector<at::Tensor>& inputs,
                                                         const c10d::ReduceScatterOptions& opts) {
  const char* op = "reduce_scatter_tensor_coalesced";
  checkPairs(outputs, inputs, -size_, op);
  const strataRedOp_t rop = redOp(opts.reduceOp, op);
  Pairs p;
  for (size_t i = 0; i < inputs.size(); ++i) {
    const strataDataType_t type = dataType(inputs[i], op);
    at::Tensor in = preMultiply(contiguousBuffer(inputs[i]), opts.reduceOp, op);
    at::Tensor out = contiguousBuffer(outputs[i]);
    p.keep.insert(p.keep.end(), {in, out});
    if (auto c = copyBack(outputs[i], out)) p.copies.push_back(c);
    const size_t n = static_cast<size_t>(out.numel());
    p.issues.push_back([this, in, out, n, type, rop](strataRequest_t* req) {
      return strataIReduceScatter(in.data_ptr(), out.data_ptr(), n, type, rop, comm_, req);
    });
    p.onStream.push_back([this, in, out, n, type, rop](strataStream_t s) {
      return strataReduceScatter(in.data_ptr(), out.data_ptr(), n, type, rop, comm_, s);
    });
  }
  if (inputs[0].is_cuda()) {
    return onStream(c10d::OpType::_REDUCE_SCATTER_BASE, op, inputs[0].device(), outputs, p.keep,
                    p.onStream, p.copyAll());
  }
  auto work = c10::make_intrusive<StrataWork>(rank_, c10d::OpType::_REDUCE_SCATTER_BASE, op,
                                              outputs, p.keep);
  return trackGroup(work, op, p.issues, p.copyAll());
}

}  // namespace strata::torch_backend

#endif  // STRATA_TORCH_AT_LEAST(2, 1)
