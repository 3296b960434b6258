// Sparse allreduce (SUM of sparse COO tensors), as Gloo does it: every rank's coalesced indices
// and values are all-gathered (padded to the largest nnz), concatenated and coalesced, which
// sums the entries that share an index. The sizes travel first, so every rank sees the same
// metadata and all of them refuse tensors of different shapes together, before any payload
// moves. It runs on the alltoall lane (blocking strataAllGather calls on the lane's own
// communicator), in issue order with that lane's other operations.
#include <ATen/ATen.h>

#include <memory>
#include <string>

#include "args.h"
#include "backend.h"

namespace strata::torch_backend {
namespace {

// What a rank announces before its payload: nnz, sparse and dense dimensions, then the sizes
// (up to kMaxDims; a tensor with more dimensions is refused on the calling thread).
constexpr int64_t kMaxDims = 12;
constexpr int64_t kMeta = 3 + kMaxDims;

struct SparseState {
  at::Tensor result;
  std::string error;  // found by every rank alike (the metadata is everyone's)
};

strataResult_t gatherSparse(strataComm_t comm, const at::Tensor& in, int size,
                            SparseState& state) {
  const at::Tensor indices = in._indices().contiguous();
  const at::Tensor values = in._values().contiguous();
  at::Tensor meta = at::zeros({kMeta}, at::kLong);
  auto* m = meta.data_ptr<int64_t>();
  m[0] = in._nnz();
  m[1] = in.sparse_dim();
  m[2] = in.dense_dim();
  for (int64_t d = 0; d < in.dim(); ++d) m[3 + d] = in.size(d);
  at::Tensor metas = at::empty({size, kMeta}, at::kLong);
  strataResult_t r =
      strataAllGather(meta.data_ptr(), metas.data_ptr(), kMeta, strataInt64, comm, nullptr);
  if (r != strataSuccess) return r;
  int64_t maxNnz = 0;
  for (int rank = 0; rank < size; ++rank) {
    if (!at::equal(metas[rank].narrow(0, 1, kMeta - 1), meta.narrow(0, 1, kMeta - 1))) {
      state.error = "strata: sparse allreduce: rank " + std::to_string(rank) +
                    "'s tensor has other sizes or sparse/dense dimensions than this rank's";
      return strataSuccess;
    }
    maxNnz = std::max(maxNnz, metas[rank][0].item<int64_t>());
  }
  // Padded to maxNnz: one all-gather each for the indices and the values.
  const int64_t sparseDim = in.sparse_dim();
  at::Tensor idx = at::zeros({sparseDim, maxNnz}, at::kLong);
  idx.narrow(1, 0, in._nnz()).copy_(indices);
  std::vector<int64_t> valShape = values.sizes().vec();
  valShape[0] = maxNnz;
  at::Tensor val = at::zeros(valShape, values.options());
  val.narrow(0, 0, in._nnz()).copy_(values);
  at::Tensor idxAll = at::empty({size, sparseDim, maxNnz}, at::kLong);
  valShape.insert(valShape.begin(), size);
  at::Tensor valAll = at::empty(valShape, values.options());
  const strataDataType_t type = dataType(values, "allreduce (sparse)");
  r = strataAllGather(idx.data_ptr(), idxAll.data_ptr(), static_cast<size_t>(idx.numel()),
                      strataInt64, comm, nullptr);
  if (r != strataSuccess) return r;
  r = strataAllGather(val.data_ptr(), valAll.data_ptr(), static_cast<size_t>(val.numel()), type,
                      comm, nullptr);
  if (r != strataSuccess) return r;
  std::vector<at::Tensor> idxParts, valParts;
  for (int rank = 0; rank < size; ++rank) {
    const int64_t nnz = metas[rank][0].item<int64_t>();
    idxParts.push_back(idxAll[rank].narrow(1, 0, nnz));
    valParts.push_back(valAll[rank].narrow(0, 0, nnz));
  }
  state.result =
      at::sparse_coo_tensor(at::cat(idxParts, 1), at::cat(valParts, 0), in.sizes()).coalesce();
  return strataSuccess;
}

}  // namespace

c10::intrusive_ptr<c10d::Work> ProcessGroupStrata::sparseAllreduce(
    at::Tensor& tensor, const c10d::AllreduceOptions& opts) {
  TORCH_CHECK(tensor.layout() == at::kSparse, "strata: allreduce: layout ", tensor.layout(),
              " is not supported (dense strided and sparse COO are)");
  checkCpu(tensor, "allreduce (sparse)", "sparse tensors are reduced in host memory");
  TORCH_CHECK(opts.reduceOp == c10d::ReduceOp::SUM,
              "strata: sparse allreduce supports only ReduceOp.SUM (as Gloo)");
  TORCH_CHECK(tensor.dim() <= kMaxDims, "strata: sparse allreduce: at most ", kMaxDims,
              " dimensions; this tensor has ", tensor.dim());
  dataType(tensor, "allreduce (sparse)");  // refuses a dtype strata lacks, here
  at::Tensor in = tensor.coalesce();
  auto state = std::make_shared<SparseState>();
  auto work = c10::make_intrusive<StrataWork>(rank_, c10d::OpType::ALLREDUCE,
                                              "allreduce (sparse)",
                                              std::vector<at::Tensor>{tensor},
                                              std::vector<at::Tensor>{in});
  const int size = size_;
  return onLane(a2a_, work, "allreduce (sparse)",
                [in, size, state](strataComm_t comm) {
                  try {
                    return gatherSparse(comm, in, size, *state);
                  } catch (const std::exception& e) {  // ATen's; reported by the Work
                    state->error = std::string("strata: sparse allreduce: ") + e.what();
                    return strataSuccess;
                  }
                },
                [tensor, state]() mutable {
                  TORCH_CHECK(state->error.empty(), state->error);
                  tensor.copy_(state->result);
                });
}

}  // namespace strata::torch_backend
