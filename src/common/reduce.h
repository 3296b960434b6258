// The local reduction: the arithmetic of combining buffers, written once per type and op.
//
// Loops are plain, branch-free and `restrict`-qualified so the compiler vectorises them; the
// type and op are resolved once per call (a switch to a template instance), never per element.
// fp16 and bf16 are widened to float, combined, and rounded once (round to nearest even).
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

// buf[i] = buf[i] / divisor: integer division for integer types (as NCCL's avg), float division
// (then one rounding) for floating types. Used to finish strataAvg. A divisor of 1 leaves buf
// untouched, bit for bit; a divisor below 1 does nothing (callers validate).
void scaleDown(void* buf, size_t count, strataDataType_t type, int divisor);

}  // namespace strata
