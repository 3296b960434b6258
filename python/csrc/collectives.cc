// The collectives of ProcessGroupStrata: each checks its arguments on the calling thread
// (errors raise at once), issues strata's nonblocking call on the group's communicator and
// returns a Work that the completer thread completes. A non-contiguous tensor is worked on
// through a contiguous copy, copied back when the call completes. CUDA tensors take strata's
// stream-ordered call on the current stream instead (onStream, cuda_ops.cc), their copies
// queued on that stream behind it.
#include <ATen/ATen.h>

#include "args.h"
#include "backend.h"

namespace strata::torch_backend {
namespace {

using Work = c10::intrusive_ptr<c10d::Work>;

size_t count(const at::Tensor& t) { return static_cast<size_t>(t.numel()); }

}  // namespace

Work ProcessGroupStrata::allreduce(std::vector<at::Tensor>& tensors,
                                   const c10d::AllreduceOptions& opts) {
  if (tensors.size() == 1 && tensors[0].is_sparse()) return sparseAllreduce(tensors[0], opts);
  const at::Tensor& t = single(tensors, "allreduce");
  const strataDataType_t type = dataType(t, "allreduce");
  const strataRedOp_t op = redOp(opts.reduceOp, "allreduce");
  at::Tensor buf = preMultiply(contiguousBuffer(t), opts.reduceOp, "allreduce");
  if (t.is_cuda()) {
    return onStream(c10d::OpType::ALLREDUCE, "allreduce", t.device(), tensors, {buf},
                    {[&](strataStream_t s) {
                      return strataAllReduce(buf.data_ptr(), buf.data_ptr(), count(buf), type,
                                             op, comm_, s);
                    }},
                    copyBack(t, buf));
  }
  auto work = c10::make_intrusive<StrataWork>(rank_, c10d::OpType::ALLREDUCE, "allreduce",
                                              tensors, std::vector<at::Tensor>{buf});
  return track(work, "allreduce", [&](strataRequest_t* req) {
    return strataIAllReduce(buf.data_ptr(), buf.data_ptr(), count(buf), type, op, comm_, req);
  }, copyBack(t, buf));
}

Work ProcessGroupStrata::allreduce_coalesced(std::vector<at::Tensor>& tensors,
                                             const c10d::AllreduceCoalescedOptions& opts) {
  TORCH_CHECK(!tensors.empty(), "strata: allreduce_coalesced takes at least one tensor");
  const strataRedOp_t op = redOp(opts.reduceOp, "allreduce_coalesced");
  checkSameDevice(tensors, tensors[0], "allreduce_coalesced", "tensors");
  std::vector<at::Tensor> bufs;
  std::vector<std::function<strataResult_t(strataRequest_t*)>> issues;
  std::vector<std::function<strataResult_t(strataStream_t)>> onStreamIssues;
  std::vector<std::function<void()>> copies;
  for (const at::Tensor& t : tensors) {
    checkDense(t, "allreduce_coalesced", "a tensor");
    const strataDataType_t type = dataType(t, "allreduce_coalesced");
    at::Tensor buf = preMultiply(contiguousBuffer(t), opts.reduceOp, "allreduce_coalesced");
    bufs.push_back(buf);
    if (auto c = copyBack(t, buf)) copies.push_back(c);
    issues.push_back([this, buf, type, op](strataRequest_t* req) {
      return strataIAllReduce(buf.data_ptr(), buf.data_ptr(), count(buf), type, op, comm_, req);
    });
    onStreamIssues.push_back([this, buf, type, op](strataStream_t s) {
      return strataAllReduce(buf.data_ptr(), buf.data_ptr(), count(buf), type, op, comm_, s);
    });
  }
  auto copyAll = [copies] {
    for (const auto& c : copies) c();
  };
  if (tensors[0].is_cuda()) {
    // One strata group: one queued call after the stream's work (docs/gpu.md).
    return onStream(c10d::OpType::ALLREDUCE_COALESCED, "allreduce_coalesced",
                    tensors[0].device(), tensors, bufs, onStreamIssues, copyAll);
  }
  auto work = c10::make_intrusive<StrataWork>(rank_, c10d::OpType::ALLREDUCE_COALESCED,
                                              "allreduce_coalesced", tensors, bufs);
  // One strata group: its allreduces are packed into fusion buffers (STRATA_FUSION_BYTES).
  return trackGroup(work, "allreduce_coalesced", issues, copyAll);
}

Work ProcessGroupStrata::broadcast(std::vector<at::Tensor>& tensors,
                                   const c10d::BroadcastOptions& opts) {
  const at::Tensor& t = single(tensors, "broadcast");
  const strataDataType_t type = dataType(t, "broadcast");
  checkRank(opts.rootRank, size_, "broadcast", "root");
  at::Tensor buf = contiguousBuffer(t);
  const int root = static_cast<int>(opts.rootRank);
  if (t.is_cuda()) {
    return onStream(c10d::OpType::BROADCAST, "broadcast", t.device(), tensors, {buf},
                    {[&](strataStream_t s) {
                      return strataBroadcast(buf.data_ptr(), buf.data_ptr(), count(buf), type,
                                             root, comm_, s);
                    }},
                    copyBack(t, buf));
  }
  auto work = c10::make_intrusive<StrataWork>(rank_, c10d::OpType::BROADCAST, "broadcast",
                                              tensors, std::vector<at::Tensor>{buf});
  return track(work, "broadcast", [&](strataRequest_t* req) {
    return strataIBroadcast(buf.data_ptr(), buf.data_ptr(), count(buf), type, root, comm_, req);
  }, copyBack(t, buf));
}

Work ProcessGroupStrata::reduce(std::vector<at::Tensor>& tensors,
                                const c10d::ReduceOptions& opts) {
  const at::Tensor& t = single(tensors, "reduce");
  const strataDataType_t type = dataType(t, "reduce");
  const strataRedOp_t op = redOp(opts.reduceOp, "reduce");
  checkRank(opts.rootRank, size_, "reduce", "root");
  const at::Tensor in = contiguousBuffer(t);
  at::Tensor buf = preMultiply(in, opts.reduceOp, "reduce");
  const int root = static_cast<int>(opts.rootRank);
  // Off the root, t keeps its input: a pre-multiplied copy is not copied back.
  std::function<void()> after =
      rank_ == root || buf.is_same(in) ? copyBack(t, buf) : std::function<void()>();
  if (t.is_cuda()) {
    return onStream(c10d::OpType::REDUCE, "reduce", t.device(), tensors, {buf},
                    {[&](strataStream_t s) {
                      return strataReduce(buf.data_ptr(), buf.data_ptr(), count(buf), type, op,
                                          root, comm_, s);
                    }},
                    after);
  }
  auto work = c10::make_intrusive<StrataWork>(rank_, c10d::OpType::REDUCE, "reduce", tensors,
                                              std::vector<at::Tensor>{buf});
  return track(work, "reduce", [&](strataRequest_t* req) {
    return strataIReduce(buf.data_ptr(), buf.data_ptr(), count(buf), type, op, root, comm_, req);
  }, after);
}

Work ProcessGroupStrata::_allgather_base(at::Tensor& output, at::Tensor& input,
                                         const c10d::AllgatherOptions&) {
  checkDense(input, "_allgather_base", "input");
  checkDense(output, "_allgather_base", "output");
  const strataDataType_t type = dataType(input, "_allgather_base");
  TORCH_CHECK(output.scalar_type() == input.scalar_type(),
              "strata: _allgather_base: output dtype ", output.scalar_type(),
              " differs from input dtype ", input.scalar_type());
  TORCH_CHECK(output.numel() == input.numel() * size_, "strata: _allgather_base: output has ",
              output.numel(), " elements, expected world_size * input = ",
              input.numel() * size_);
  checkSameDevice({output}, input, "_allgather_base", "output");
  at::Tensor in = contiguousBuffer(input), out = contiguousBuffer(output);
  if (input.is_cuda()) {
    return onStream(c10d::OpType::_ALLGATHER_BASE, "_allgather_base", input.device(), {output},
                    {in, out},
                    {[&](strataStream_t s) {
                      return strataAllGather(in.data_ptr(), out.data_ptr(), count(in), type,
                                             comm_, s);
                    }},
                    copyBack(output, out));
  }
  auto work = c10::make_intrusive<StrataWork>(rank_, c10d::OpType::_ALLGATHER_BASE,
                                              "_allgather_base", std::vector<at::Tensor>{output},
                                              std::vector<at::Tensor>{in, out});
  return track(work, "_allgather_base", [&](strataRequest_t* req) {
    return strataIAllGather(in.data_ptr(), out.data_ptr(), count(in), type, comm_, req);
  }, copyBack(output, out));
}

Work ProcessGroupStrata::allgather(std::vector<std::vector<at::Tensor>>& outputs,
                                   std::vector<at::Tensor>& inputs,
                                   const c10d::AllgatherOptions&) {
  const at::Tensor& input = single(inputs, "allgather");
  const strataDataType_t type = dataType(input, "allgather");
  TORCH_CHECK(outputs.size() == 1 && static_cast<int>(outputs[0].size()) == size_,
              "strata: allgather takes one list of world_size (", size_, ") output tensors");
  checkSameShape(outputs[0], input, "allgather", "output");
  checkSameDevice(outputs[0], input, "allgather", "output");
  at::Tensor in = contiguousBuffer(input);
  at::Tensor flat = at::empty({input.numel() * size_}, input.options());
  std::function<void()> scatterOut = copyOut(outputs[0], flat);
  if (input.is_cuda()) {
    return onStream(c10d::OpType::ALLGATHER, "allgather", input.device(), outputs[0], {in, flat},
                    {[&](strataStream_t s) {
                      return strataAllGather(in.data_ptr(), flat.data_ptr(), count(in), type,
                                             comm_, s);
                    }},
                    scatterOut);
  }
  auto work = c10::make_intrusive<StrataWork>(rank_, c10d::OpType::ALLGATHER, "allgather",
                                              outputs[0], std::vector<at::Tensor>{in, flat});
  return track(work, "allgather", [&](strataRequest_t* req) {
    return strataIAllGather(in.data_ptr(), flat.data_ptr(), count(in), type, comm_, req);
  }, scatterOut);
}

Work ProcessGroupStrata::_reduce_scatter_base(at::Tensor& output, at::Tensor& input,
                                              const c10d::ReduceScatterOptions& opts) {
  checkDense(input, "_reduce_scatter_base", "input");
  checkDense(output, "_reduce_scatter_base", "output");
  const strataDataType_t type = dataType(input, "_reduce_scatter_base");
  const strataRedOp_t op = redOp(opts.reduceOp, "_reduce_scatter_base");
  TORCH_CHECK(output.scalar_type() == input.scalar_type(),
              "strata: _reduce_scatter_base: output dtype ", output.scalar_type(),
              " differs from input dtype ", input.scalar_type());
  TORCH_CHECK(input.numel() == output.numel() * size_, "strata: _reduce_scatter_base: input has ",
              input.numel(), " elements, expected world_size * output = ",
              output.numel() * size_);
  checkSameDevice({output}, input, "_reduce_scatter_base", "output");
  at::Tensor in = preMultiply(contiguousBuffer(input), opts.reduceOp, "_reduce_scatter_base");
  at::Tensor out = contiguousBuffer(output);
  if (input.is_cuda()) {
    return onStream(c10d::OpType::_REDUCE_SCATTER_BASE, "_reduce_scatter_base", input.device(),
                    {output}, {in, out},
                    {[&](strataStream_t s) {
                      return strataReduceScatter(in.data_ptr(), out.data_ptr(), count(out), type,
                                                 op, comm_, s);
                    }},
                    copyBack(output, out));
  }
  auto work = c10::make_intrusive<StrataWork>(rank_, c10d::OpType::_REDUCE_SCATTER_BASE,
                                              "_reduce_scatter_base",
                                              std::vector<at::Tensor>{output},
                                              std::vector<at::Tensor>{in, out});
  return track(work, "_reduce_scatter_base", [&](strataRequest_t* req) {
    return strataIReduceScatter(in.data_ptr(), out.data_ptr(), count(out), type, op, comm_, req);
  }, copyBack(output, out));
}

Work ProcessGroupStrata::reduce_scatter(std::vector<at::Tensor>& outputs,
                                        std::vector<std::vector<at::Tensor>>& inputs,
                                        const c10d::ReduceScatterOptions& opts) {
  const at::Tensor& output = single(outputs, "reduce_scatter");
  TORCH_CHECK(inputs.size() == 1 && static_cast<int>(inputs[0].size()) == size_,
              "strata: reduce_scatter takes one list of world_size (", size_, ") input tensors");
  checkSameShape(inputs[0], output, "reduce_scatter", "input");
  checkSameDevice(inputs[0], output, "reduce_scatter", "input");
  std::vector<at::Tensor> flat;
  for (const at::Tensor& t : inputs[0]) flat.push_back(t.reshape({-1}));
  at::Tensor in = at::cat(flat);
  return _reduce_scatter_base(outputs[0], in, opts);
}

Work ProcessGroupStrata::barrier(const c10d::BarrierOptions&) {
  // A one-element allreduce, queued after every call issued before it: when it completes,
  // they have completed on this rank, and every rank has reached the barrier.
  at::Tensor token = at::zeros({1}, at::kInt);
  auto work = c10::make_intrusive<StrataWork>(rank_, c10d::OpType::BARRIER, "barrier",
                                              std::vector<at::Tensor>{},
                                              std::vector<at::Tensor>{token});
  return track(work, "barrier", [&](strataRequest_t* req) {
    return strataIAllReduce(token.data_ptr(), token.data_ptr(), 1, strataInt32, strataSum, comm_,
                            req);
  });
}

}  // namespace strata::torch_backend
