#include "args.h"

#include <c10/util/Exception.h>

namespace strata::torch_backend {

strataDataType_t dataType(const at::Tensor& t, const char* op) {
  switch (t.scalar_type()) {
    case at::kChar:
      return strataInt8;
    case at::kByte:
      return strataUint8;
    case at::kInt:
      return strataInt32;
    case at::kLong:
      return strataInt64;
    case at::kHalf:
      return strataFloat16;
    case at::kFloat:
      return strataFloat32;
    case at::kDouble:
      return strataFloat64;
    case at::kBFloat16:
      return strataBfloat16;
    default:
      TORCH_CHECK(false, "strata: ", op, " does not support dtype ", t.scalar_type(),
                  " (strata has int8, uint8, int32, int64, float16, bfloat16, float32, "
                  "float64)");
  }
}

strataRedOp_t redOp(const c10d::ReduceOp& op, const char* name) {
  switch (static_cast<c10d::ReduceOp::RedOpType>(op)) {
    case c10d::ReduceOp::SUM:
      return strataSum;
    case c10d::ReduceOp::PRODUCT:
      return strataProd;
    case c10d::ReduceOp::MIN:
      return strataMin;
    case c10d::ReduceOp::MAX:
      return strataMax;
    case c10d::ReduceOp::AVG:
      return strataAvg;
    case c10d::ReduceOp::PREMUL_SUM:
      return strataSum;  // of the inputs preMultiply scaled
    default:
      TORCH_CHECK(false, "strata: ", name,
                  " supports ReduceOp SUM, PRODUCT, MIN, MAX, AVG and PREMUL_SUM; not the "
                  "bitwise ops");
  }
}

at::Tensor preMultiply(const at::Tensor& input, const c10d::ReduceOp& op, const char* name) {
  if (static_cast<c10d::ReduceOp::RedOpType>(op) != c10d::ReduceOp::PREMUL_SUM) return input;
  const auto* factor = dynamic_cast<const c10d::NCCLPreMulSumSupplement*>(op.supplement_.get());
  TORCH_CHECK(factor != nullptr, "strata: ", name, ": PREMUL_SUM without its factor");
#if TORCH_VERSION_MAJOR >= 2
  if (factor->tensor_factor.defined()) return input.mul(factor->tensor_factor.to(input.device()));
#else
  if (!factor->tensor_factors.empty()) {
    return input.mul(factor->tensor_factors[0].to(input.device()));
  }
#endif
  return input.mul(factor->double_factor);
}

void checkDense(const at::Tensor& t, const char* op, const char* what) {
  TORCH_CHECK(t.defined(), "strata: ", op, ": ", what, " is undefined");
  TORCH_CHECK(t.layout() == at::kStrided, "strata: ", op, ": ", what,
              " must be a dense tensor (sparse tensors are not supported)");
#ifdef STRATA_TORCH_CUDA
  TORCH_CHECK(t.device().is_cpu() || t.device().is_cuda(), "strata: ", op, ": ", what,
              " is on ", t.device(), "; the strata backend takes CPU and CUDA tensors");
#else
  TORCH_CHECK(t.device().is_cpu(), "strata: ", op, ": ", what, " is on ", t.device(),
              "; this build of the strata backend takes CPU tensors (it was built against a "
              "PyTorch without CUDA)");
#endif
}

void checkCpu(const at::Tensor& t, const char* op, const char* why) {
  TORCH_CHECK(!t.device().is_cuda(), "strata: ", op, " does not support CUDA tensors (", why,
              "); use CPU tensors");
}

void checkSameDevice(const std::vector<at::Tensor>& list, const at::Tensor& ref, const char* op,
                     const char* what) {
  for (size_t i = 0; i < list.size(); ++i) {
    TORCH_CHECK(list[i].device() == ref.device(), "strata: ", op, ": ", what, "[", i,
                "] is on ", list[i].device(), ", expected ", ref.device(),
                " (one device per process)");
  }
}

const at::Tensor& single(const std::vector<at::Tensor>& tensors, const char* op) {
  TORCH_CHECK(tensors.size() == 1, "strata: ", op, " takes exactly one tensor per process, got ",
              tensors.size());
  checkDense(tensors[0], op, "the tensor");
  return tensors[0];
}

void checkSameShape(const std::vector<at::Tensor>& list, const at::Tensor& ref, const char* op,
                    const char* what) {
  for (size_t i = 0; i < list.size(); ++i) {
    checkDense(list[i], op, what);
    TORCH_CHECK(list[i].scalar_type() == ref.scalar_type(), "strata: ", op, ": ", what, "[", i,
                "] has dtype ", list[i].scalar_type(), ", expected ", ref.scalar_type());
    TORCH_CHECK(list[i].numel() == ref.numel(), "strata: ", op, ": ", what, "[", i, "] has ",
                list[i].numel(), " elements, expected ", ref.numel());
  }
}

void checkRank(int64_t rank, int size, const char* op, const char* what) {
  TORCH_CHECK(rank >= 0 && rank < size, "strata: ", op, ": ", what, " ", rank,
              " is not a rank of this group (size ", size, ")");
}

at::Tensor contiguousBuffer(const at::Tensor& t) {
  return t.is_contiguous() ? t : t.contiguous();
}

std::function<void()> copyBack(const at::Tensor& t, const at::Tensor& buffer) {
  if (t.is_same(buffer)) return {};
  return [t, buffer]() mutable { t.copy_(buffer.view_as(t)); };
}

std::function<void()> copyOut(std::vector<at::Tensor> outs, const at::Tensor& flat) {
  return [outs = std::move(outs), flat]() mutable {
    int64_t off = 0;
    for (at::Tensor& out : outs) {
      out.copy_(flat.narrow(0, off, out.numel()).view_as(out));
      off += out.numel();
    }
  };
}

}  // namespace strata::torch_backend
