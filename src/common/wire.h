// Wire types: the narrower type a float32 sum travels in over the slow links (STRATA_COMPRESS,
// a plan file's `wire:` key), and the conversions a compressed step does around its fabric
// call (core/wire_steps.h).
//
// fp16 is scaled by a power of two chosen per step from the largest magnitude every member
// holds (fp16ScaleExponent), so that neither the values nor their sums over the stage group
// overflow fp16's 65504, and small values stay out of its subnormal range as far as the largest
// allows. Scaling by a power of two is exact in float32, so it adds no rounding of its own.
// bf16 has float32's exponent range and is never scaled (exponent 0).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "strata/strata.h"

namespace strata {

enum class WireType { kNone, kFp16, kBf16 };

const char* wireTypeName(WireType w);  // "none", "fp16", "bf16"
// "none", "fp16" or "bf16"; false (and *out untouched) for anything else.
bool parseWireType(const std::string& text, WireType* out);
// strataFloat16 or strataBfloat16; strataFloat32 for kNone.
strataDataType_t wireDataType(WireType w);

// Whether a call of `type` and `op` is compressed on a stage whose wire type is `w`: float32
// sums and averages only (a product, max or min in a narrower type would change its meaning,
// and integers are exact).
bool wireApplies(WireType w, strataDataType_t type, strataRedOp_t op);

// The largest magnitude among the finite elements of x (0 when there is none). NaN and
// infinities stay what they are whatever the scale, so they do not choose it.
float maxAbsFinite(const float* x, size_t n);

// The scaling exponent k of an fp16 step that adds `terms` values, each at most `maxAbs` in
// magnitude: the k that brings terms * maxAbs * 2^k into [2^14, 2^15). The bound sits below
// fp16's largest finite value (65504), so the fp16 partial sums (which may round up) cannot
// overflow either. 0 when maxAbs is 0; clamped to [-126, 126] so that 2^k and 2^-k are normal
// floats (the bound then holds while terms * maxAbs <= 2^141: always for 8192 terms or fewer).
int fp16ScaleExponent(float maxAbs, int terms);

// dst[i] = the wire value of src[i] * 2^exp (round to nearest even); and back:
// dst[i] = wide(src[i]) * 2^-exp. exp must be 0 for bf16. Widening is exact unless the result
// underflows float32.
void narrowScaled(const float* src, uint16_t* dst, size_t n, WireType w, int exp);
void widenScaled(const uint16_t* src, float* dst, size_t n, WireType w, int exp);

}  // namespace strata
