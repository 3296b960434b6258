#include "common/wire.h"

#include <cmath>
#include <limits>

#include "common/half_inline.h"
#include "common/reduce.h"
#include "common/reduce_ops.h"
#if STRATA_HAVE_AVX2_KERNELS
#include <immintrin.h>
#endif

namespace strata {

const char* wireTypeName(WireType w) {
  switch (w) {
    case WireType::kFp16:
      return "fp16";
    case WireType::kBf16:
      return "bf16";
    case WireType::kNone:
      break;
  }
  return "none";
}

bool parseWireType(const std::string& text, WireType* out) {
  for (WireType w : {WireType::kNone, WireType::kFp16, WireType::kBf16}) {
    if (text == wireTypeName(w)) {
      *out = w;
      return true;
    }
  }
  return false;
}

strataDataType_t wireDataType(WireType w) {
  switch (w) {
    case WireType::kFp16:
      return strataFloat16;
    case WireType::kBf16:
      return strataBfloat16;
    case WireType::kNone:
      break;
  }
  return strataFloat32;
}

bool wireApplies(WireType w, strataDataType_t type, strataRedOp_t op) {
  return w != WireType::kNone && type == strataFloat32 && (op == strataSum || op == strataAvg);
}

float maxAbsFinite(const float* x, size_t n) {
  float m = 0;
  for (size_t i = 0; i < n; ++i) {
    const float a = std::fabs(x[i]);
    // NaN compares false and infinity is excluded: neither chooses the scale.
    if (a > m && a <= std::numeric_limits<float>::max()) m = a;
  }
  return m;
}

int fp16ScaleExponent(float maxAbs, int terms) {
  if (!(maxAbs > 0) || terms < 1) return 0;
  // terms * maxAbs = m * 2^e with m in [0.5, 1), so it lies in [2^(e-1), 2^e): k = 15 - e brings
  // it into [2^14, 2^15). In double, so the product cannot overflow.
  int e = 0;
  (void)std::frexp(static_cast<double>(maxAbs) * terms, &e);
  const int k = 15 - e;
  return k < -126 ? -126 : (k > 126 ? 126 : k);
}

namespace {

#if STRATA_HAVE_AVX2_KERNELS
// F16C's conversions, 8 values at a time: round to nearest even, subnormals and infinities as
// IEEE 754 says, as detail::floatToHalf and halfToFloat do bit for bit (a unit test compares
// them; NaNs stay NaNs, their payload aside). The tail goes through the portable code.
STRATA_TARGET_AVX2 void narrowFp16Avx2(const float* src, uint16_t* dst, size_t n, float scale) {
  const __m256 s = _mm256_set1_ps(scale);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_mul_ps(_mm256_loadu_ps(src + i), s);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(dst + i),
                     _mm256_cvtps_ph(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC));
  }
  for (; i < n; ++i) dst[i] = detail::floatToHalf(src[i] * scale);
}

STRATA_TARGET_AVX2 void widenFp16Avx2(const uint16_t* src, float* dst, size_t n, float scale) {
  const __m256 s = _mm256_set1_ps(scale);
  size_t i = 0;
  for (; i + 8 <= n; i += 8) {
    const __m256 v = _mm256_cvtph_ps(_mm_loadu_si128(reinterpret_cast<const __m128i*>(src + i)));
    _mm256_storeu_ps(dst + i, _mm256_mul_ps(v, s));
  }
  for (; i < n; ++i) dst[i] = detail::halfToFloat(src[i]) * scale;
}
#endif

bool useAvx2() {
#if STRATA_HAVE_AVX2_KERNELS
  return detail::kernelIsa() == detail::KernelIsa::kAvx2;  // the reduction kernels' choice
#else
  return false;
#endif
}

}  // namespace

// The conversions run once per element of every compressed step, each way: at memory speed
// with F16C where the CPU has it (the portable loop is several times slower).
void narrowScaled(const float* src, uint16_t* dst, size_t n, WireType w, int exp) {
  if (w == WireType::kBf16) {
    for (size_t i = 0; i < n; ++i) dst[i] = detail::floatToBf16(src[i]);
    return;
  }
  const float scale = std::ldexp(1.0f, exp);  // a power of two: the product is exact
#if STRATA_HAVE_AVX2_KERNELS
  if (useAvx2()) return narrowFp16Avx2(src, dst, n, scale);
#endif
  for (size_t i = 0; i < n; ++i) dst[i] = detail::floatToHalf(src[i] * scale);
}

void widenScaled(const uint16_t* src, float* dst, size_t n, WireType w, int exp) {
  if (w == WireType::kBf16) {
    for (size_t i = 0; i < n; ++i) dst[i] = detail::bf16ToFloat(src[i]);
    return;
  }
  const float scale = std::ldexp(1.0f, -exp);
#if STRATA_HAVE_AVX2_KERNELS
  if (useAvx2()) return widenFp16Avx2(src, dst, n, scale);
#endif
  for (size_t i = 0; i < n; ++i) dst[i] = detail::halfToFloat(src[i]) * scale;
}

}  // namespace strata
