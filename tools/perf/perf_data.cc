#include "perf_data.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>

#include "common/datatype.h"
#include "common/half.h"

namespace strata::tools {
namespace {

// The largest integer up to which every integer is exact in `t` and no sum overflows.
double maxExact(strataDataType_t t) {
  switch (t) {
    case strataInt8:
      return 127;
    case strataUint8:
      return 255;
    case strataInt32:
      return 2147483647.0;
    case strataUint32:
      return 4294967295.0;
    case strataFloat16:
      return 2048;
    case strataBfloat16:
      return 256;
    case strataFloat32:
      return 16777216.0;
    default:  // int64, uint64, double: as far as a double computes exactly
      return 9007199254740992.0;
  }
}

template <typename T>
void put(unsigned char* dst, T v) {
  std::memcpy(dst, &v, sizeof(T));
}

void encode(strataDataType_t t, double v, unsigned char* dst) {
  switch (t) {
    case strataInt8:
      return put(dst, static_cast<int8_t>(v));
    case strataUint8:
      return put(dst, static_cast<uint8_t>(v));
    case strataInt32:
      return put(dst, static_cast<int32_t>(v));
    case strataUint32:
      return put(dst, static_cast<uint32_t>(v));
    case strataInt64:
      return put(dst, static_cast<int64_t>(v));
    case strataUint64:
      return put(dst, static_cast<uint64_t>(v));
    case strataFloat16:
      return put(dst, floatToHalf(static_cast<float>(v)));
    case strataBfloat16:
      return put(dst, floatToBf16(static_cast<float>(v)));
    case strataFloat32:
      return put(dst, static_cast<float>(v));
    case strataFloat64:
      return put(dst, v);
    default:
      return;
  }
}

}  // namespace

Pattern::Pattern(Collective coll, strataDataType_t type, strataRedOp_t op, int nranks)
    : coll_(coll),
      type_(type),
      op_(op),
      nranks_(nranks),
      typeSize_(dataTypeSize(type)),
      signed_(type != strataUint8 && type != strataUint32 && type != strataUint64) {
  const double top = maxExact(type);
  const double n = nranks;
  contributors_ = static_cast<int>(std::min(n, top / 3));
  if (op == strataAvg) {
    // Values nranks * (q % m) on K ranks: the sum is at most nranks * (m - 1) * K.
    avgModulus_ = 4;
    double k = std::floor(top / (n * 3));
    if (k < 1) {
      avgModulus_ = 2;
      k = std::floor(top / n);
    }
    if (k < 1) avgModulus_ = 1;  // too many ranks for an exact average: all zeros
    contributors_ = static_cast<int>(std::min(n, std::max(k, 1.0)));
  }
  std::vector<double> reduced(kPeriod);
  for (size_t p = 0; p < kPeriod; ++p) {
    double acc = input(0, p);
    for (int r = 1; r < nranks; ++r) {
      const double v = input(r, p);
      switch (op) {
        case strataProd:
          acc *= v;
          break;
        case strataMax:
          acc = std::max(acc, v);
          break;
        case strataMin:
          acc = std::min(acc, v);
          break;
        default:  // sum, avg
          acc += v;
      }
    }
    if (op == strataAvg) acc /= n;  // exact: the sum is a multiple of nranks
    reduced[p] = acc;
  }
  expected_ = encodeRow(reduced);
}

double Pattern::input(int rank, size_t phase) const {
  const size_t r = static_cast<size_t>(rank);
  const double q = static_cast<double>((phase * (r + 1) + r) % kPeriod);
  const auto qi = static_cast<long long>(q);
  if (coll_ == Collective::kAllGather || coll_ == Collective::kBroadcast) return q;
  switch (op_) {
    case strataSum:
      return rank < contributors_ ? static_cast<double>(qi % 4) : 0;
    case strataAvg:
      return rank < contributors_ ? static_cast<double>(nranks_) * (qi % avgModulus_) : 0;
    case strataMax:
    case strataMin: {
      // One rank owns each element and always wins it, with a value that varies by element;
      // the others lose with theirs. So the result shows every rank's input, at any rank count.
      const bool owner = static_cast<size_t>(rank) == phase % static_cast<size_t>(nranks_);
      const double shift = signed_ ? 0 : 3;
      if (op_ == strataMax) return shift + (owner ? qi % 5 - 1 : -3 + qi % 2);
      return shift + (owner ? 1 - qi % 5 : 2 + qi % 2);
    }
    case strataProd:
      // At most six 2s per element (|product| <= 64): its owner's, and up to five more.
      if (static_cast<size_t>(rank) == phase % static_cast<size_t>(nranks_)) return 2;
      if (rank < 5 && qi % 3 == 0) return 2;
      return signed_ && qi % 5 == 1 ? -1 : 1;
    default:
      return 0;
  }
}

std::vector<unsigned char> Pattern::encodeRow(const std::vector<double>& values) const {
  std::vector<unsigned char> row(values.size() * typeSize_);
  for (size_t i = 0; i < values.size(); ++i) encode(type_, values[i], &row[i * typeSize_]);
  return row;
}

std::vector<unsigned char> Pattern::inputRow(int rank) const {
  std::vector<double> values(kPeriod);
  for (size_t p = 0; p < kPeriod; ++p) values[p] = input(rank, p);
  return encodeRow(values);
}

void Pattern::fill(int rank, void* buf, size_t first, size_t n) const {
  const std::vector<unsigned char> row = inputRow(rank);
  auto* dst = static_cast<unsigned char*>(buf);
  // Whole runs of the periodic row at a time, not one element at a time.
  for (size_t k = 0; k < n;) {
    const size_t phase = (first + k) % kPeriod;
    const size_t len = std::min(kPeriod - phase, n - k);
    std::memcpy(dst + k * typeSize_, row.data() + phase * typeSize_, len * typeSize_);
    k += len;
  }
}

size_t Pattern::wrong(const void* buf, const std::vector<unsigned char>& row, size_t first,
                      size_t n) const {
  const auto* got = static_cast<const unsigned char*>(buf);
  size_t bad = 0;
  for (size_t k = 0; k < n;) {
    const size_t phase = (first + k) % kPeriod;
    const size_t len = std::min(kPeriod - phase, n - k);
    const unsigned char* want = row.data() + phase * typeSize_;
    if (std::memcmp(got + k * typeSize_, want, len * typeSize_) != 0) {
      for (size_t j = 0; j < len; ++j) {
        bad += std::memcmp(got + (k + j) * typeSize_, want + j * typeSize_, typeSize_) != 0;
      }
    }
    k += len;
  }
  return bad;
}

size_t Pattern::wrongReduced(const void* buf, size_t first, size_t n) const {
  return wrong(buf, expected_, first, n);
}

size_t Pattern::wrongGathered(const void* buf, size_t sendCount) const {
  const auto* got = static_cast<const unsigned char*>(buf);
  size_t bad = 0;
  for (int b = 0; b < nranks_; ++b) {
    bad += wrong(got + static_cast<size_t>(b) * sendCount * typeSize_, inputRow(b), 0, sendCount);
  }
  return bad;
}

size_t Pattern::wrongBroadcast(const void* buf, int root, size_t n) const {
  return wrong(buf, inputRow(root), 0, n);
}

}  // namespace strata::tools
