// The local reduction: the arithmetic of combining buffers, written once per type and op.
//
// Loops are plain, branch-free and `restrict`-qualified so the compiler vectorises them; the
// type and op are resolved once per call (a switch to a template instance), never per element.
// fp16 and bf16 are widened to float, combined, and rounded once (round to nearest even).
//
// Each kernel exists in two variants, picked at run time by what the CPU supports: one for the
// build's baseline instruction set, and one for AVX2 with F16C (reduce_kernels.h explains how).
// Both give the same bits, except for which payload a sum or product of several NaNs carries
// (IEEE leaves it open). Thread-safe: the kernels keep no state.
#pragma once

#include <cstddef>

#include "strata/strata.h"

namespace strata {

// dst[i] = dst[i] op src[i] for i < count. strataAvg combines as strataSum (the division by the
// rank count happens once, in scaleDown). dst and src must not overlap. Integer sum and prod
// wrap modulo 2^bits; floating max and min return NaN when either operand is NaN. An invalid
// type or op does nothing (callers validate).
void reduceInto(void* dst, const void* src, size_t count, strataDataType_t type, strataRedOp_t op);

// dst[i] = a[i] op b[i]. dst may equal a or b; otherwise no overlap.
void reduce2(void* dst, const void* a, const void* b, size_t count, strataDataType_t type,
             strataRedOp_t op);

// dst[i] = srcs[0][i] op srcs[1][i] op ... op srcs[nsrc-1][i] for i < count, combined left to
// right, so every rank that reduces the same sources gets the same bits. One pass over memory:
// each source is read once and dst written once, in blocks whose partial result stays in L1.
// nsrc >= 1; nsrc == 1 is a copy, bit for bit. dst may be srcs[0] (accumulating in place) but
// must not overlap any other source; sources may overlap each other. Semantics as reduceInto:
// avg combines as sum, integers wrap, floating max and min propagate NaN.
//
// fp16 and bf16 are widened to float, combined across all sources in float, and rounded to the
// narrow type once per element, at the end. That is more accurate than rounding after every
// pairwise step, as chained reduceInto calls do: a sum of k values then errs by at most half an
// ulp of the narrow type plus the float partial sums' error (at most (k - 1) * 2^-24 times the
// sum of the magnitudes), where pairwise rounding adds up to k - 1 half-ulps of the narrow type
// (2^-11 relative for fp16, 2^-8 for bf16, each). For k = 2 it is exactly reduce2's result.
void reduceMany(void* dst, const void* const* srcs, int nsrc, size_t count, strataDataType_t type,
                strataRedOp_t op);

// buf[i] = buf[i] / divisor: integer division for integer types (as NCCL's avg), float division
// (then one rounding) for floating types. Used to finish strataAvg. A divisor of 1 leaves buf
// untouched, bit for bit; a divisor below 1 does nothing (callers validate).
void scaleDown(void* buf, size_t count, strataDataType_t type, int divisor);

namespace detail {

// The instruction-set variants of the kernels above. kAvx2 exists on x86 builds and runs only
// on CPUs with AVX2 and F16C.
enum class KernelIsa { kPortable, kAvx2 };

// The variant in use: the best the CPU supports, unless setKernelIsa chose another.
KernelIsa kernelIsa();
bool kernelIsaSupported(KernelIsa isa);
// For tests and strata-kernels: makes every later call, in every thread, use `isa`. Returns
// false (and changes nothing) when the CPU or the build lacks it.
bool setKernelIsa(KernelIsa isa);
const char* kernelIsaName(KernelIsa isa);  // "portable", "avx2"

}  // namespace detail
}  // namespace strata
