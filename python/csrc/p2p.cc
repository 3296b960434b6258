// Point-to-point operations and alltoall. strata's sends and receives are blocking, so each
// runs on a lane's thread (backend.h): messages between two ranks match in the order they were
// issued, as with NCCL; tags are accepted and ignored. A receive from any source: any_source.cc.
#include <ATen/ATen.h>

#include <cstring>
#include <numeric>

#include "args.h"
#include "backend.h"

namespace strata::torch_backend {
namespace {

using Work = c10::intrusive_ptr<c10d::Work>;

// Elements per peer: `splits` as given, or an even split of `total` (alltoall_base's default).
std::vector<int64_t> perPeer(const std::vector<int64_t>& splits, int64_t total, int64_t rowElems,
                             int size, const char* what) {
  if (splits.empty()) {
    TORCH_CHECK(total % size == 0, "strata: alltoall_base: ", what, " has ", total / rowElems,
                " rows, not divisible by world_size ", size, "; pass split sizes");
    return std::vector<int64_t>(size, total / size);
  }
  TORCH_CHECK(static_cast<int>(splits.size()) == size, "strata: alltoall_base: ", what,
              " split sizes have ", splits.size(), " entries, expected world_size ", size);
  std::vector<int64_t> counts;
  for (int64_t rows : splits) {
    TORCH_CHECK(rows >= 0, "strata: alltoall_base: negative split size ", rows);
    counts.push_back(rows * rowElems);
  }
  TORCH_CHECK(std::accumulate(counts.begin(), counts.end(), int64_t{0}) == total,
              "strata: alltoall_base: ", what, " split sizes do not add up to its length");
  return counts;
}

}  // namespace

Work ProcessGroupStrata::send(std::vector<at::Tensor>& tensors, int dstRank, int) {
  const at::Tensor& t = single(tensors, "send");
  checkCpu(t, "send", "its point-to-point lanes run strata's blocking host calls");
  const strataDataType_t type = dataType(t, "send");
  checkRank(dstRank, size_, "send", "destination");
  TORCH_CHECK(dstRank != rank_, "strata: send to itself (rank ", rank_, ")");
  at::Tensor buf = contiguousBuffer(t);
  auto work = c10::make_intrusive<StrataWork>(rank_, c10d::OpType::SEND, "send",
                                              std::vector<at::Tensor>{},
                                              std::vector<at::Tensor>{buf});
  Lane& lane = dstRank > rank_ ? up_ : down_;
  return onLane(lane, work, "send", [buf, type, dstRank](strataComm_t comm) {
    return strataSend(buf.data_ptr(), static_cast<size_t>(buf.numel()), type, dstRank, comm,
                      nullptr);
  });
}

Work ProcessGroupStrata::recv(std::vector<at::Tensor>& tensors, int srcRank, int) {
  const at::Tensor& t = single(tensors, "recv");
  checkCpu(t, "recv", "its point-to-point lanes run strata's blocking host calls");
  const strataDataType_t type = dataType(t, "recv");
  checkRank(srcRank, size_, "recv", "source");
  TORCH_CHECK(srcRank != rank_, "strata: recv from itself (rank ", rank_, ")");
  at::Tensor buf = contiguousBuffer(t);
  auto work = c10::make_intrusive<StrataWork>(rank_, c10d::OpType::RECV, "recv", tensors,
                                              std::vector<at::Tensor>{buf});
  work->setSourceRank(srcRank);
  // The sender's lane: a send to a higher rank travels on the lane of receives from below.
  Lane& lane = srcRank < rank_ ? up_ : down_;
  return onLane(lane, work, "recv", [buf, type, srcRank](strataComm_t comm) {
    return strataRecv(buf.data_ptr(), static_cast<size_t>(buf.numel()), type, srcRank, comm,
                      nullptr);
  }, copyBack(t, buf));
}

Work ProcessGroupStrata::alltoall_base(at::Tensor& output, at::Tensor& input,
                                       std::vector<int64_t>& outputSplits,
                                       std::vector<int64_t>& inputSplits,
                                       const c10d::AllToAllOptions&) {
  checkDense(input, "alltoall_base", "input");
  checkDense(output, "alltoall_base", "output");
  checkCpu(input, "alltoall_base", "its point-to-point lanes run strata's blocking host calls");
  checkCpu(output, "alltoall_base", "its point-to-point lanes run strata's blocking host calls");
  const strataDataType_t type = dataType(input, "alltoall_base");
  TORCH_CHECK(output.scalar_type() == input.scalar_type(), "strata: alltoall_base: output dtype ",
              output.scalar_type(), " differs from input dtype ", input.scalar_type());
  const int64_t inRow = input.dim() > 0 && input.size(0) > 0 ? input.numel() / input.size(0) : 1;
  const int64_t outRow =
      output.dim() > 0 && output.size(0) > 0 ? output.numel() / output.size(0) : 1;
  const std::vector<int64_t> sends = perPeer(inputSplits, input.numel(), inRow, size_, "input");
  const std::vector<int64_t> recvs =
      perPeer(outputSplits, output.numel(), outRow, size_, "output");
  at::Tensor in = contiguousBuffer(input), out = contiguousBuffer(output);
  auto work = c10::make_intrusive<StrataWork>(rank_, c10d::OpType::ALLTOALL_BASE,
                                              "alltoall_base", std::vector<at::Tensor>{output},
                                              std::vector<at::Tensor>{in, out});
  std::function<void()> after = copyBack(output, out);
  const int me = rank_, size = size_;
  const size_t elem = input.element_size();
  // Every pair's send and receive posted together in one strata group: no order deadlocks.
  return onLane(a2a_, work, "alltoall_base", [=](strataComm_t comm) {
    auto* src = static_cast<const char*>(in.data_ptr());
    auto* dst = static_cast<char*>(out.data_ptr());
    int64_t sendOff = 0, recvOff = 0;
    strataGroupStart();
    for (int peer = 0; peer < size; ++peer) {
      const size_t s = static_cast<size_t>(sends[peer]), r = static_cast<size_t>(recvs[peer]);
      if (peer == me) {
        if (s > 0) std::memcpy(dst + recvOff * elem, src + sendOff * elem, s * elem);
      } else {
        if (s > 0) strataSend(src + sendOff * elem, s, type, peer, comm, nullptr);
        if (r > 0) strataRecv(dst + recvOff * elem, r, type, peer, comm, nullptr);
      }
      sendOff += sends[peer];
      recvOff += recvs[peer];
    }
    return strataGroupEnd();
  }, after);
}

Work ProcessGroupStrata::alltoall(std::vector<at::Tensor>& outputs,
                                  std::vector<at::Tensor>& inputs,
                                  const c10d::AllToAllOptions& opts) {
  TORCH_CHECK(static_cast<int>(outputs.size()) == size_ &&
                  static_cast<int>(inputs.size()) == size_,
              "strata: alltoall takes world_size (", size_, ") input and output tensors");
  TORCH_CHECK(!inputs.empty(), "strata: alltoall with no tensors");
  std::vector<int64_t> inSplits, outSplits;
  std::vector<at::Tensor> in, out;
  for (int r = 0; r < size_; ++r) {
    checkDense(inputs[r], "alltoall", "input");
    checkDense(outputs[r], "alltoall", "output");
    checkCpu(inputs[r], "alltoall", "its point-to-point lanes run strata's blocking host calls");
    checkCpu(outputs[r], "alltoall", "its point-to-point lanes run strata's blocking host calls");
    TORCH_CHECK(inputs[r].scalar_type() == inputs[0].scalar_type() &&
                    outputs[r].scalar_type() == inputs[0].scalar_type(),
                "strata: alltoall: every tensor must have dtype ", inputs[0].scalar_type());
    in.push_back(inputs[r].reshape({-1}));
    out.push_back(outputs[r].reshape({-1}));
    inSplits.push_back(inputs[r].numel());
    outSplits.push_back(outputs[r].numel());
  }
  at::Tensor flatIn = at::cat(in);
  at::Tensor flatOut = at::empty({std::accumulate(outSplits.begin(), outSplits.end(),
                                                  int64_t{0})},
                                 inputs[0].options());
  // The flat output is scattered into the caller's tensors afterwards, by a second work that
  // completes the one returned.
  auto inner = alltoall_base(flatOut, flatIn, outSplits, inSplits, opts);
  auto work = c10::make_intrusive<StrataWork>(rank_, c10d::OpType::ALLTOALL, "alltoall",
                                              outputs, std::vector<at::Tensor>{flatOut});
  std::vector<at::Tensor> dests = outputs;
  inner->getFuture()->addCallback([work, dests, flatOut, outSplits](c10::ivalue::Future& f) mutable {
    if (f.hasError()) {
      work->complete(f.exception_ptr());
      return;
    }
    work->complete(nullptr, [&] {
      int64_t off = 0;
      for (size_t r = 0; r < dests.size(); ++r) {
        dests[r].copy_(flatOut.narrow(0, off, outSplits[r]).view_as(dests[r]));
        off += outSplits[r];
      }
    });
  });
  return work;
}

}  // namespace strata::torch_backend
