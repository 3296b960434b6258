#include "core/csc_select.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>

#include "common/half_inline.h"

namespace strata::core::csc {
namespace {

// g = buff + r for one chunk of one element type, rounded once to the type; returns the L1 norm.
template <typename T, float (*toFloat)(T), T (*fromFloat)(float)>
float accumulateChunk(const T* buff, T* r, size_t n) {
  float norm = 0.0f;
  for (size_t i = 0; i < n; ++i) {
    const T g = fromFloat(toFloat(buff[i]) + toFloat(r[i]));
    r[i] = g;
    norm += std::fabs(toFloat(g));
  }
  return norm;
}

float f32ToFloat(float v) { return v; }
float f32FromFloat(float v) { return v; }
float f16ToFloat(uint16_t v) { return detail::halfToFloat(v); }
uint16_t f16FromFloat(float v) { return detail::floatToHalf(v); }
float b16ToFloat(uint16_t v) { return detail::bf16ToFloat(v); }
uint16_t b16FromFloat(float v) { return detail::floatToBf16(v); }

// The rank of a norm in the selection: NaN counts as +infinity (see selectTopK).
float rankKey(float norm) {
  return std::isnan(norm) ? std::numeric_limits<float>::infinity() : norm;
}

}  // namespace

bool cscTypeSupported(strataDataType_t type) {
  return type == strataFloat32 || type == strataFloat16 || type == strataBfloat16;
}

Chunking Chunking::of(size_t count, size_t chunkElems) {
  Chunking ch;
  ch.count = count;
  ch.chunkElems = chunkElems;
  ch.nchunks = count / chunkElems + (count % chunkElems != 0 ? 1 : 0);
  return ch;
}

size_t keptChunks(float density, size_t nchunks) {
  const double product = static_cast<double>(density) * static_cast<double>(nchunks);
  const double k = std::ceil(product * (1.0 - std::ldexp(1.0, -23)));
  return std::clamp<size_t>(static_cast<size_t>(k), 1, nchunks);
}

void accumulate(strataDataType_t type, const Chunking& ch, const void* buff, void* residual,
                float* norms) {
  for (size_t c = 0; c < ch.nchunks; ++c) {
    const size_t b = ch.begin(c), n = ch.size(c);
    switch (type) {
      case strataFloat32:
        norms[c] = accumulateChunk<float, f32ToFloat, f32FromFloat>(
            static_cast<const float*>(buff) + b, static_cast<float*>(residual) + b, n);
        break;
      case strataFloat16:
        norms[c] = accumulateChunk<uint16_t, f16ToFloat, f16FromFloat>(
            static_cast<const uint16_t*>(buff) + b, static_cast<uint16_t*>(residual) + b, n);
        break;
      default:  // strataBfloat16: the caller checked cscTypeSupported
        norms[c] = accumulateChunk<uint16_t, b16ToFloat, b16FromFloat>(
            static_cast<const uint16_t*>(buff) + b, static_cast<uint16_t*>(residual) + b, n);
        break;
    }
  }
}

void selectTopK(const float* norms, size_t nchunks, size_t k, uint32_t* order, uint32_t* selected) {
  for (size_t i = 0; i < nchunks; ++i) order[i] = static_cast<uint32_t>(i);
  // A strict total order (key descending, then index ascending): the first k entries after
  // nth_element are the same set on every rank that holds the same norms, whatever the
  // algorithm's internal order.
  auto before = [norms](uint32_t a, uint32_t b) {
    const float ka = rankKey(norms[a]), kb = rankKey(norms[b]);
    return ka > kb || (ka == kb && a < b);
  };
  if (k < nchunks) std::nth_element(order, order + k, order + nchunks, before);
  std::copy(order, order + k, selected);
  std::sort(selected, selected + k);
}

size_t pack(size_t typeSize, const Chunking& ch, const uint32_t* selected, size_t k, void* residual,
            void* packed) {
  auto* r = static_cast<char*>(residual);
  auto* out = static_cast<char*>(packed);
  size_t elems = 0;
  for (size_t i = 0; i < k; ++i) {
    const size_t b = ch.begin(selected[i]) * typeSize, bytes = ch.size(selected[i]) * typeSize;
    std::memcpy(out + elems * typeSize, r + b, bytes);
    std::memset(r + b, 0, bytes);  // +0.0 in all three types: the chunk was sent
    elems += bytes / typeSize;
  }
  return elems;
}

void unpack(size_t typeSize, const Chunking& ch, const uint32_t* selected, size_t k,
            const void* packed, void* buff) {
  auto* out = static_cast<char*>(buff);
  const auto* in = static_cast<const char*>(packed);
  // Walk the chunks in order, so every byte of buff is written once: a gap before each
  // selected chunk is zeroed, then the chunk copied.
  size_t next = 0, offset = 0;  // next: first element not yet written; offset: into packed
  for (size_t i = 0; i < k; ++i) {
    const size_t b = ch.begin(selected[i]), n = ch.size(selected[i]);
    std::memset(out + next * typeSize, 0, (b - next) * typeSize);
    std::memcpy(out + b * typeSize, in + offset * typeSize, n * typeSize);
    offset += n;
    next = b + n;
  }
  std::memset(out + next * typeSize, 0, (ch.count - next) * typeSize);
}

}  // namespace strata::core::csc
