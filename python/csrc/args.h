// Checks and conversions between torch.distributed's arguments and strata's C API. Every
// refusal throws a c10::Error (a RuntimeError in Python) that names the operation and says
// what to do instead.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include "strata/strata.h"
#include "torch_api.h"

namespace strata::torch_backend {

// strata's element type for `t`'s dtype; refuses dtypes strata has no type for.
strataDataType_t dataType(const at::Tensor& t, const char* op);
// strata's operation for `op`; refuses the bitwise ops. PREMUL_SUM is strata's SUM of inputs
// that preMultiply scaled: every reduction takes its input through preMultiply.
strataRedOp_t redOp(const c10d::ReduceOp& op, const char* name);
// The input a reduction with `op` works on: for PREMUL_SUM (FSDP's gradient pre-division),
// `input` times the op's factor, a new tensor (the caller's is left as it was); else `input`.
at::Tensor preMultiply(const at::Tensor& input, const c10d::ReduceOp& op, const char* name);

// The one tensor of a single-tensor operation (one device per process): dense, on the CPU (or
// a CUDA device, see checkDense), contiguous or not. Refuses anything else.
const at::Tensor& single(const std::vector<at::Tensor>& tensors, const char* op);
// A dense tensor on the CPU, or on a CUDA device in a build with CUDA (STRATA_TORCH_CUDA);
// `what` names it in messages.
void checkDense(const at::Tensor& t, const char* op, const char* what);
// Refuses a CUDA tensor for an operation served on host memory only; `why` says why.
void checkCpu(const at::Tensor& t, const char* op, const char* why);
// All of `list` are on `ref`'s device.
void checkSameDevice(const std::vector<at::Tensor>& list, const at::Tensor& ref, const char* op,
                     const char* what);
// All of `list` have `ref`'s dtype and number of elements.
void checkSameShape(const std::vector<at::Tensor>& list, const at::Tensor& ref, const char* op,
                    const char* what);
// A root or peer rank within [0, size).
void checkRank(int64_t rank, int size, const char* op, const char* what);

// The buffer strata works on for `t`: `t` itself when contiguous, else a contiguous copy (the
// caller copies the result back, with copyBack).
at::Tensor contiguousBuffer(const at::Tensor& t);
// What completes a call on `buffer` (from contiguousBuffer(t)): copying it into `t` when it is
// a copy; empty when it is `t` itself.
std::function<void()> copyBack(const at::Tensor& t, const at::Tensor& buffer);
// What completes a call that gathered into the flat `flat`: copying its consecutive pieces into
// `outs`, in order, each piece as many elements as its tensor.
std::function<void()> copyOut(std::vector<at::Tensor> outs, const at::Tensor& flat);

}  // namespace strata::torch_backend
