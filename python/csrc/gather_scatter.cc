// gather, scatter and allgather_coalesced. gather and scatter are strataGather and
// strataScatter, which are groups of blocking sends and receives in strata's API: they run on
// the alltoall lane (backend.h), in issue order with alltoall's exchanges. allgather_coalesced
// is one all-gather of every input packed into one buffer, unpacked when it completes.
#include <ATen/ATen.h>

#include "args.h"
#include "backend.h"

namespace strata::torch_backend {
namespace {

using Work = c10::intrusive_ptr<c10d::Work>;

constexpr const char* kLaneWhy = "its point-to-point lanes run strata's blocking host calls";

// The root's list of world_size tensors, each of `ref`'s dtype and size, on the CPU.
void checkRootList(const std::vector<std::vector<at::Tensor>>& lists, const at::Tensor& ref,
                   int size, const char* op, const char* what) {
  TORCH_CHECK(lists.size() == 1 && static_cast<int>(lists[0].size()) == size, "strata: ", op,
              ": the root takes one list of world_size (", size, ") ", what, " tensors");
  checkSameShape(lists[0], ref, op, what);
  for (const at::Tensor& t : lists[0]) {
    checkDense(t, op, what);
    checkCpu(t, op, kLaneWhy);
  }
}

}  // namespace

Work ProcessGroupStrata::gather(std::vector<std::vector<at::Tensor>>& outputs,
                                std::vector<at::Tensor>& inputs,
                                const c10d::GatherOptions& opts) {
  const at::Tensor& input = single(inputs, "gather");
  checkCpu(input, "gather", kLaneWhy);
  const strataDataType_t type = dataType(input, "gather");
  checkRank(opts.rootRank, size_, "gather", "root");
  const int root = static_cast<int>(opts.rootRank);
  const bool isRoot = rank_ == root;
  if (isRoot) {
    checkRootList(outputs, input, size_, "gather", "output");
  } else {
    TORCH_CHECK(outputs.empty() || (outputs.size() == 1 && outputs[0].empty()),
                "strata: gather: only the root (rank ", root, ") takes output tensors");
  }
  at::Tensor in = contiguousBuffer(input);
  const int64_t n = input.numel();
  at::Tensor flat = isRoot ? at::empty({n * size_}, input.options()) : at::Tensor();
  std::vector<at::Tensor> outs = isRoot ? outputs[0] : std::vector<at::Tensor>{};
  auto work = c10::make_intrusive<StrataWork>(rank_, c10d::OpType::GATHER, "gather", outs,
                                              std::vector<at::Tensor>{in, flat});
  std::function<void()> after = isRoot ? copyOut(outs, flat) : std::function<void()>();
  return onLane(a2a_, work, "gather", [in, flat, n, type, root](strataComm_t comm) {
    return strataGather(in.data_ptr(), flat.defined() ? flat.data_ptr() : nullptr,
                        static_cast<size_t>(n), type, root, comm, nullptr);
  }, after);
}

Work ProcessGroupStrata::scatter(std::vector<at::Tensor>& outputs,
                                 std::vector<std::vector<at::Tensor>>& inputs,
                                 const c10d::ScatterOptions& opts) {
  const at::Tensor& output = single(outputs, "scatter");
  checkCpu(output, "scatter", kLaneWhy);
  const strataDataType_t type = dataType(output, "scatter");
  checkRank(opts.rootRank, size_, "scatter", "root");
  const int root = static_cast<int>(opts.rootRank);
  const bool isRoot = rank_ == root;
  at::Tensor flat;
  if (isRoot) {
    checkRootList(inputs, output, size_, "scatter", "input");
    std::vector<at::Tensor> parts;
    for (const at::Tensor& t : inputs[0]) parts.push_back(t.reshape({-1}));
    flat = at::cat(parts);
  } else {
    TORCH_CHECK(inputs.empty() || (inputs.size() == 1 && inputs[0].empty()),
                "strata: scatter: only the root (rank ", root, ") takes input tensors");
  }
  at::Tensor out = contiguousBuffer(output);
  const size_t n = static_cast<size_t>(output.numel());
  auto work = c10::make_intrusive<StrataWork>(rank_, c10d::OpType::SCATTER, "scatter", outputs,
                                              std::vector<at::Tensor>{out, flat});
  return onLane(a2a_, work, "scatter", [out, flat, n, type, root](strataComm_t comm) {
    return strataScatter(flat.defined() ? flat.data_ptr() : nullptr, out.data_ptr(), n, type,
                         root, comm, nullptr);
  }, copyBack(output, out));
}

Work ProcessGroupStrata::allgather_coalesced(std::vector<std::vector<at::Tensor>>& outputLists,
                                             std::vector<at::Tensor>& inputs,
                                             const c10d::AllgatherOptions&) {
  TORCH_CHECK(!inputs.empty(), "strata: allgather_coalesced takes at least one input tensor");
  TORCH_CHECK(static_cast<int>(outputLists.size()) == size_,
              "strata: allgather_coalesced takes world_size (", size_,
              ") output lists, one per rank; got ", outputLists.size());
  const at::Tensor& first = inputs[0];
  for (const at::Tensor& t : inputs) {
    checkDense(t, "allgather_coalesced", "input");
    checkCpu(t, "allgather_coalesced", "strata packs its tensors in host memory");
    TORCH_CHECK(t.scalar_type() == first.scalar_type(), "strata: allgather_coalesced: every "
                "tensor must have dtype ", first.scalar_type(), "; got ", t.scalar_type());
  }
  const strataDataType_t type = dataType(first, "allgather_coalesced");
  for (const std::vector<at::Tensor>& list : outputLists) {
    TORCH_CHECK(list.size() == inputs.size(), "strata: allgather_coalesced: each output list "
                "must hold one tensor per input (", inputs.size(), "); got ", list.size());
    for (size_t i = 0; i < list.size(); ++i) {
      checkSameShape({list[i]}, inputs[i], "allgather_coalesced", "output");
      checkCpu(list[i], "allgather_coalesced", "strata packs its tensors in host memory");
    }
  }
  std::vector<at::Tensor> parts;
  for (const at::Tensor& t : inputs) parts.push_back(t.reshape({-1}));
  at::Tensor packed = at::cat(parts);
  const int64_t n = packed.numel();
  at::Tensor flat = at::empty({n * size_}, packed.options());
  std::vector<at::Tensor> outs;
  for (const auto& list : outputLists) outs.insert(outs.end(), list.begin(), list.end());
  // Rank-major, each rank's block the inputs' packing: the outputs are consecutive pieces.
  std::function<void()> unpack = copyOut(outs, flat);
  auto work = c10::make_intrusive<StrataWork>(rank_, c10d::OpType::ALLGATHER_COALESCED,
                                              "allgather_coalesced", outs,
                                              std::vector<at::Tensor>{packed, flat});
  return track(work, "allgather_coalesced", [&](strataRequest_t* req) {
    return strataIAllGather(packed.data_ptr(), flat.data_ptr(), static_cast<size_t>(n), type,
                            comm_, req);
  }, unpack);
}

}  // namespace strata::torch_backend
