// Out-of-line fp16/bf16 conversions; the bodies live in half_inline.h so that the reduction
// kernels can inline them.
#include "common/half.h"

#include "common/half_inline.h"

namespace strata {

float halfToFloat(uint16_t h) { return detail::halfToFloat(h); }
uint16_t floatToHalf(float f) { return detail::floatToHalf(f); }
float bf16ToFloat(uint16_t b) { return detail::bf16ToFloat(b); }
uint16_t floatToBf16(float f) { return detail::floatToBf16(f); }

}  // namespace strata
