#include "common/wire.h"

#include <cmath>
#include <limits>

#include "common/half_inline.h"

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

}  // namespace strata
