// IEEE binary16 (fp16) and bfloat16 conversions.
//
// Both narrowings round to nearest, ties to even, keep NaN a (quiet) NaN and overflow to
// infinity, which is what CUDA's __float2half_rn / __float2bfloat16_rn do. Widening is exact.
#pragma once

#include <cstdint>

namespace strata {

float halfToFloat(uint16_t h);
uint16_t floatToHalf(float f);
float bf16ToFloat(uint16_t b);
uint16_t floatToBf16(float f);

}  // namespace strata
