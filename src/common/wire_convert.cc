// The wire conversions (common/wire.h: narrowScaled, widenScaled), apart from wire.cc's names
// and scales so that the parsers (and their fuzz targets) need not link the kernels' CPU
// dispatch.
#include <cmath>

#include "common/half_inline.h"
#include "common/reduce.h"
#include "common/reduce_ops.h"
#include "common/wire.h"
#if STRATA_HAVE_AVX2_KERNELS
#include <immintrin.h>
#endif

namespace strata {

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
