// The local reduction kernels and the datatype table, checked element by element against a
// scalar reference written here: integers through 128-bit arithmetic reduced modulo 2^bits,
// fp16/bf16 through exact long double arithmetic and a nearest-value search for the rounding.
// Every kernel variant the CPU runs (portable, AVX2) is checked, and the variants are compared
// with each other bit for bit.
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <random>
#include <vector>

#include "unit/common/reduce_reference.h"

TEST_CASE("reduce matches the scalar reference for int8", "[reduce]") {
  checkType<IntSpec<int8_t>>(strataInt8);
}
TEST_CASE("reduce matches the scalar reference for uint8", "[reduce]") {
  checkType<IntSpec<uint8_t>>(strataUint8);
}
TEST_CASE("reduce matches the scalar reference for int32", "[reduce]") {
  checkType<IntSpec<int32_t>>(strataInt32);
}
TEST_CASE("reduce matches the scalar reference for uint32", "[reduce]") {
  checkType<IntSpec<uint32_t>>(strataUint32);
}
TEST_CASE("reduce matches the scalar reference for int64", "[reduce]") {
  checkType<IntSpec<int64_t>>(strataInt64);
}
TEST_CASE("reduce matches the scalar reference for uint64", "[reduce]") {
  checkType<IntSpec<uint64_t>>(strataUint64);
}
TEST_CASE("reduce matches the scalar reference for float16", "[reduce]") {
  checkType<HalfSpec>(strataFloat16);
}
TEST_CASE("reduce matches the scalar reference for float32", "[reduce]") {
  checkType<FloatSpec<float>>(strataFloat32);
}
TEST_CASE("reduce matches the scalar reference for float64", "[reduce]") {
  checkType<FloatSpec<double>>(strataFloat64);
}
TEST_CASE("reduce matches the scalar reference for bfloat16", "[reduce]") {
  checkType<Bf16Spec>(strataBfloat16);
}

TEST_CASE("signed integer sum and product wrap around", "[reduce]") {
  using I32 = std::numeric_limits<int32_t>;
  using I64 = std::numeric_limits<int64_t>;
  CHECK(reduced<int8_t>({127, -128, 16, -128}, {1, -1, 16, -1}, strataInt8, strataSum) ==
        std::vector<int8_t>{-128, 127, 32, 127});
  CHECK(reduced<int8_t>({127, -128, 16, -128}, {1, -1, 16, -1}, strataInt8, strataProd) ==
        std::vector<int8_t>{127, -128, 0, -128});
  CHECK(reduced<uint8_t>({255, 16}, {1, 16}, strataUint8, strataSum) ==
        std::vector<uint8_t>{0, 32});
  CHECK(reduced<uint8_t>({255, 16}, {255, 16}, strataUint8, strataProd) ==
        std::vector<uint8_t>{1, 0});
  CHECK(reduced<int32_t>({I32::max(), I32::min(), 65536}, {1, I32::min(), 65536}, strataInt32,
                         strataSum) == std::vector<int32_t>{I32::min(), 0, 131072});
  CHECK(reduced<int32_t>({I32::max(), I32::min(), 65536}, {2, -1, 65536}, strataInt32,
                         strataProd) == std::vector<int32_t>{-2, I32::min(), 0});
  CHECK(reduced<int64_t>({I64::max(), I64::min()}, {1, -1}, strataInt64, strataAvg) ==
        std::vector<int64_t>{I64::min(), I64::max()});
  CHECK(reduced<int64_t>({I64::max(), int64_t{1} << 62}, {I64::max(), 4}, strataInt64,
                         strataProd) == std::vector<int64_t>{1, 0});
}

TEST_CASE("avg's integer division truncates toward zero", "[reduce]") {
  CHECK(scaled<int32_t>({-7, 7, -8, 5, -1, 0}, strataInt32, 2) ==
        std::vector<int32_t>{-3, 3, -4, 2, 0, 0});
  CHECK(scaled<int8_t>({-7, 127, -128}, strataInt8, 2) == std::vector<int8_t>{-3, 63, -64});
  // A divisor above int8's range must not be narrowed to int8.
  CHECK(scaled<int8_t>({-128, 127}, strataInt8, 200) == std::vector<int8_t>{0, 0});
  CHECK(scaled<uint8_t>({255, 254}, strataUint8, 128) == std::vector<uint8_t>{1, 1});
  CHECK(scaled<uint32_t>({0xffffffffu}, strataUint32, 2) == std::vector<uint32_t>{0x7fffffffu});
  CHECK(scaled<int64_t>({-7, std::numeric_limits<int64_t>::min()}, strataInt64, 2) ==
        std::vector<int64_t>{-3, std::numeric_limits<int64_t>::min() / 2});
  CHECK(scaled<uint64_t>({~uint64_t{0}}, strataUint64, 3) ==
        std::vector<uint64_t>{~uint64_t{0} / 3});
  // Floating avg divides: 1 / 3 rounded once; fp16 0x3c00 is 1.0, 0x3555 is 1/3 to nearest.
  CHECK(scaled<float>({1.0f, -7.0f}, strataFloat32, 3) == std::vector<float>{1.0f / 3, -7.0f / 3});
  CHECK(scaled<uint16_t>({0x3c00, 0xc700}, strataFloat16, 2) ==
        std::vector<uint16_t>{0x3800, 0xc300});  // 1 / 2 and -7 / 2
  CHECK(scaled<uint16_t>({0x3c00}, strataFloat16, 3) == std::vector<uint16_t>{0x3555});
  CHECK(scaled<uint16_t>({0x3f80}, strataBfloat16, 3) == std::vector<uint16_t>{0x3eab});
}

TEST_CASE("scaleDown by 1 or less leaves the data untouched", "[reduce]") {
  // fp16 and bf16 signalling NaNs would be quietened by a conversion; divisor 1 must not touch.
  const std::vector<uint16_t> nans = {0x7c01, 0xfd23, 0x7f81};
  CHECK(scaled(nans, strataFloat16, 1) == nans);
  CHECK(scaled(nans, strataBfloat16, 1) == nans);
  CHECK(scaled<int32_t>({-7, 9}, strataInt32, 0) == std::vector<int32_t>{-7, 9});
  CHECK(scaled<int32_t>({-7, 9}, strataInt32, -2) == std::vector<int32_t>{-7, 9});
}

TEST_CASE("floating max and min propagate NaN from either side", "[reduce]") {
  const float nan = std::numeric_limits<float>::quiet_NaN();
  for (strataRedOp_t op : {strataMax, strataMin}) {
    const std::vector<float> r =
        reduced<float>({nan, 1.0f, 2.0f}, {1.0f, nan, 3.0f}, strataFloat32, op);
    CHECK(std::isnan(r[0]));
    CHECK(std::isnan(r[1]));
    CHECK(r[2] == (op == strataMax ? 3.0f : 2.0f));
    std::vector<double> d = {1.0, std::nan("")};
    std::vector<double> out(2);
    const std::vector<double> e = {std::nan(""), 1.0};
    strata::reduce2(out.data(), d.data(), e.data(), 2, strataFloat64, op);
    CHECK(std::isnan(out[0]));
    CHECK(std::isnan(out[1]));
    // fp16: NaN 0x7e00 against 1.0 (0x3c00), both orders.
    const std::vector<uint16_t> h =
        reduced<uint16_t>({0x7e00, 0x3c00}, {0x3c00, 0x7e00}, strataFloat16, op);
    CHECK((h[0] & 0x7c00) == 0x7c00);
    CHECK((h[0] & 0x03ff) != 0);
    CHECK((h[1] & 0x7c00) == 0x7c00);
    CHECK((h[1] & 0x03ff) != 0);
  }
}

TEST_CASE("fp16 and bf16 sums round once, to nearest even", "[reduce]") {
  // 2048 + 1 is a tie between 2048 (even) and 2050 in fp16; 2048 + 3 a tie between 2050 and
  // 2052 (even). 0x6800 is 2048, 0x3c00 is 1, 0x4200 is 3, 0x6801 is 2050, 0x6802 is 2052.
  CHECK(reduced<uint16_t>({0x6800, 0x6800}, {0x3c00, 0x4200}, strataFloat16, strataSum) ==
        std::vector<uint16_t>{0x6800, 0x6802});
  // 65504 + 16 reaches 65520, halfway to 2^16: overflow to infinity.
  CHECK(reduced<uint16_t>({0x7bff}, {0x4c00}, strataFloat16, strataSum) ==
        std::vector<uint16_t>{0x7c00});
  // bf16: 256 + 1 ties to 256 (0x4380); 256 + 3 ties to 260 (0x4382).
  CHECK(reduced<uint16_t>({0x4380, 0x4380}, {0x3f80, 0x4040}, strataBfloat16, strataSum) ==
        std::vector<uint16_t>{0x4380, 0x4382});
}

TEST_CASE("an invalid type or op leaves the buffers untouched", "[reduce]") {
  // Only the strataNum* sentinels are tried: casting a value outside an unscoped enum's range
  // (-1, 42) to it is itself undefined behaviour, so callers must validate the int first.
  std::vector<int32_t> a = {1, 2, 3};
  const std::vector<int32_t> b = {4, 5, 6};
  strata::reduceInto(a.data(), b.data(), 3, strataNumTypes, strataSum);
  strata::reduceInto(a.data(), b.data(), 3, strataInt32, strataNumOps);
  strata::reduce2(a.data(), a.data(), b.data(), 3, strataNumTypes, strataMax);
  strata::scaleDown(a.data(), 3, strataNumTypes, 2);
  CHECK(a == std::vector<int32_t>{1, 2, 3});
}

// reduceMany over buffers of one element each: {a0, b0, ...} -> the one result.
template <typename T>
T manyOf(const std::vector<T>& values, strataDataType_t type, strataRedOp_t op) {
  std::vector<const void*> ptrs;
  for (const T& v : values) ptrs.push_back(&v);
  T out{};
  strata::reduceMany(&out, ptrs.data(), static_cast<int>(ptrs.size()), 1, type, op);
  return out;
}

// The same, the pairwise way: reduceInto chained left to right (rounding at every step).
template <typename T>
T chainOf(const std::vector<T>& values, strataDataType_t type, strataRedOp_t op) {
  T acc = values[0];
  for (size_t i = 1; i < values.size(); ++i) strata::reduceInto(&acc, &values[i], 1, type, op);
  return acc;
}

std::vector<uint8_t> randomBytes(size_t n, std::mt19937_64& rng) {
  std::vector<uint8_t> v(n);
  std::uniform_int_distribution<int> byte(0, 255);
  for (uint8_t& b : v) b = static_cast<uint8_t>(byte(rng));
  return v;
}

TEST_CASE("reduceMany rounds fp16 and bf16 once, at the end", "[reduce]") {
  for (KernelIsa isa : supportedIsas()) {
    IsaScope scope(isa);
    INFO("kernels " << strata::detail::kernelIsaName(isa));
    // fp16 2048 + 1 + 1: pairwise, 2048 + 1 ties back to 2048 (even) twice; in float the sum is
    // 2050, which fp16 holds (0x6801).
    const std::vector<uint16_t> h = {0x6800, 0x3c00, 0x3c00};
    CHECK(manyOf(h, strataFloat16, strataSum) == 0x6801);
    CHECK(chainOf(h, strataFloat16, strataSum) == 0x6800);
    // 1 + 7 x 2^-11 (0x1000): pairwise every step ties to 1.0; once, 1 + 3.5 x 2^-10 ties to
    // the even 1 + 4 x 2^-10 (0x3c04). Over 8 sources: the accumulator path.
    std::vector<uint16_t> h8(8, 0x1000);
    h8[0] = 0x3c00;
    CHECK(manyOf(h8, strataFloat16, strataSum) == 0x3c04);
    CHECK(chainOf(h8, strataFloat16, strataSum) == 0x3c00);
    // bf16 256 + 1 + 1 = 258 (0x4381); pairwise 256 + 1 ties to 256 (0x4380) twice.
    const std::vector<uint16_t> b = {0x4380, 0x3f80, 0x3f80};
    CHECK(manyOf(b, strataBfloat16, strataSum) == 0x4381);
    CHECK(chainOf(b, strataBfloat16, strataSum) == 0x4380);
    // 65504 + 8 + 8 = 65520 rounds to infinity once; pairwise, 65504 + 8 ties back to 65504.
    const std::vector<uint16_t> o = {0x7bff, 0x4800, 0x4800};
    CHECK(manyOf(o, strataFloat16, strataSum) == 0x7c00);
    CHECK(chainOf(o, strataFloat16, strataSum) == 0x7bff);
    // Two sources: the same single rounding as reduce2 (2048 + 3 ties to the even 2052).
    CHECK(manyOf<uint16_t>({0x6800, 0x4200}, strataFloat16, strataSum) == 0x6802);
  }
}

TEST_CASE("every fp16 and bf16 value widens and narrows back unchanged", "[reduce]") {
  // max(x, x, x) is x: the kernels' widening and narrowing must give every code back, and a
  // NaN back quiet (quiet bit 0x0200 in fp16, 0x0040 in bf16) with its payload.
  std::vector<uint16_t> all(0x10000);
  for (uint32_t c = 0; c < all.size(); ++c) all[c] = static_cast<uint16_t>(c);
  for (KernelIsa isa : supportedIsas()) {
    IsaScope scope(isa);
    for (strataDataType_t type : {strataFloat16, strataBfloat16}) {
      INFO("kernels " << strata::detail::kernelIsaName(isa) << ", type "
                      << strata::dataTypeName(type));
      const uint16_t quiet = type == strataFloat16 ? 0x0200 : 0x0040;
      auto isNan = [type](uint16_t c) {
        return type == strataFloat16 ? HalfSpec::isNan(c) : Bf16Spec::isNan(c);
      };
      std::vector<uint16_t> two(all.size()), three(all.size());
      strata::reduce2(two.data(), all.data(), all.data(), all.size(), type, strataMax);
      const void* srcs[] = {all.data(), all.data(), all.data()};
      strata::reduceMany(three.data(), srcs, 3, all.size(), type, strataMax);
      long bad = -1;
      for (size_t c = 0; c < all.size() && bad < 0; ++c) {
        const uint16_t want = isNan(all[c]) ? static_cast<uint16_t>(all[c] | quiet) : all[c];
        if (two[c] != want || three[c] != want) bad = static_cast<long>(c);
      }
      INFO("first wrong code 0x" << std::hex << bad);
      CHECK(bad == -1);
    }
  }
}

TEST_CASE("reduceMany propagates NaN from any source through max and min", "[reduce]") {
  const float nanf = std::numeric_limits<float>::quiet_NaN();
  const double nand = std::numeric_limits<double>::quiet_NaN();
  for (KernelIsa isa : supportedIsas()) {
    IsaScope scope(isa);
    for (strataRedOp_t op : {strataMax, strataMin}) {
      for (int nsrc : {3, 4, 8, 9}) {
        for (int at = 0; at < nsrc; ++at) {
          INFO("kernels " << strata::detail::kernelIsaName(isa) << ", op " << strata::redOpName(op)
                          << ", " << nsrc << " sources, NaN in " << at);
          std::vector<float> f(static_cast<size_t>(nsrc));
          std::vector<double> d(f.size());
          std::vector<uint16_t> h(f.size()), b(f.size());
          for (int s = 0; s < nsrc; ++s) {
            f[static_cast<size_t>(s)] = static_cast<float>(s) - 2;
            d[static_cast<size_t>(s)] = static_cast<double>(s) - 2;
            h[static_cast<size_t>(s)] = strata::floatToHalf(static_cast<float>(s) - 2);
            b[static_cast<size_t>(s)] = strata::floatToBf16(static_cast<float>(s) - 2);
          }
          const float want = op == strataMax ? static_cast<float>(nsrc) - 3 : -2.0f;
          CHECK(manyOf(f, strataFloat32, op) == want);  // no NaN yet: the plain max or min
          f[static_cast<size_t>(at)] = nanf;
          d[static_cast<size_t>(at)] = nand;
          h[static_cast<size_t>(at)] = 0x7e00;
          b[static_cast<size_t>(at)] = 0x7fc0;
          CHECK(std::isnan(manyOf(f, strataFloat32, op)));
          CHECK(std::isnan(manyOf(d, strataFloat64, op)));
          CHECK(HalfSpec::isNan(manyOf(h, strataFloat16, op)));
          CHECK(Bf16Spec::isNan(manyOf(b, strataBfloat16, op)));
        }
      }
    }
  }
}

TEST_CASE("reduceMany wraps integer sums and products", "[reduce]") {
  using I32 = std::numeric_limits<int32_t>;
  using I64 = std::numeric_limits<int64_t>;
  for (KernelIsa isa : supportedIsas()) {
    IsaScope scope(isa);
    INFO("kernels " << strata::detail::kernelIsaName(isa));
    CHECK(manyOf(std::vector<int8_t>(8, 100), strataInt8, strataSum) == 32);  // 800 mod 256
    CHECK(manyOf(std::vector<int8_t>(3, -128), strataInt8, strataAvg) == -128);
    CHECK(manyOf(std::vector<uint8_t>(8, 3), strataUint8, strataProd) == 161);  // 6561 mod 256
    CHECK(manyOf(std::vector<int32_t>(3, I32::max()), strataInt32, strataSum) == I32::max() - 2);
    CHECK(manyOf(std::vector<uint32_t>(5, 0x80000001u), strataUint32, strataSum) == 0x80000005u);
    CHECK(manyOf<int64_t>({I64::min(), I64::min(), 1}, strataInt64, strataSum) == 1);
    CHECK(manyOf<int64_t>({I64::max(), 2, 2, 2, -1}, strataInt64, strataProd) == 8);
    CHECK(manyOf(std::vector<uint64_t>(9, ~uint64_t{0}), strataUint64, strataSum) ==
          ~uint64_t{0} - 8);
  }
}

TEST_CASE("reduceMany copies one source bit for bit, and does nothing when invalid", "[reduce]") {
  // Signalling NaNs that a widening would quieten.
  const std::vector<uint16_t> nans = {0x7c01, 0xfd23, 0x7f81, 0x0001};
  for (strataDataType_t type : {strataFloat16, strataBfloat16}) {
    std::vector<uint16_t> out(nans.size());
    const void* src[] = {nans.data()};
    strata::reduceMany(out.data(), src, 1, nans.size(), type, strataSum);
    CHECK(out == nans);
    std::vector<uint16_t> same = nans;
    const void* self[] = {same.data()};
    strata::reduceMany(same.data(), self, 1, same.size(), type, strataMax);
    CHECK(same == nans);
  }
  std::vector<int32_t> a = {1, 2, 3};
  const std::vector<int32_t> b = {4, 5, 6};
  const void* srcs[] = {b.data(), b.data(), b.data()};
  strata::reduceMany(a.data(), srcs, 0, 3, strataInt32, strataSum);
  strata::reduceMany(a.data(), srcs, 3, 3, strataNumTypes, strataSum);
  strata::reduceMany(a.data(), srcs, 3, 3, strataInt32, strataNumOps);
  strata::reduceMany(a.data(), srcs, 3, 0, strataInt32, strataSum);
  strata::reduceMany(nullptr, nullptr, 3, 0, strataInt32, strataSum);
  CHECK(a == std::vector<int32_t>{1, 2, 3});
}

TEST_CASE("reduceMany's result does not depend on where a range is split", "[reduce]") {
  // The shm fabric reduces shards of a buffer at arbitrary offsets: every element must come
  // out the same whatever block or vector lane it falls in.
  std::mt19937_64 rng(99);
  for (strataDataType_t type : {strataFloat16, strataFloat32, strataBfloat16, strataInt8}) {
    const size_t ts = strata::dataTypeSize(type);
    const size_t n = 5000;
    const int nsrc = 7;
    std::vector<std::vector<uint8_t>> src;
    std::vector<const void*> ptrs;
    for (int s = 0; s < nsrc; ++s) src.push_back(randomBytes(n * ts, rng));
    for (const auto& v : src) ptrs.push_back(v.data());
    std::vector<uint8_t> whole(n * ts);
    strata::reduceMany(whole.data(), ptrs.data(), nsrc, n, type, strataSum);
    std::vector<uint8_t> pieces(n * ts);
    std::uniform_int_distribution<size_t> len(1, 700);
    for (size_t at = 0; at < n;) {
      const size_t m = std::min(len(rng), n - at);
      std::vector<const void*> part;
      for (const auto& v : src) part.push_back(v.data() + at * ts);
      strata::reduceMany(pieces.data() + at * ts, part.data(), nsrc, m, type, strataSum);
      at += m;
    }
    INFO("type " << strata::dataTypeName(type));
    CHECK(whole == pieces);
  }
}

// Equal bits, or, for sum and product, both NaN. Which payload a sum or product of several NaNs
// carries is the one thing the variants may disagree on: x86 passes on the first operand's,
// and the compiler may order the operands of a commutative operation differently for SSE2 and
// AVX2. Max and min pick one of their operands, so they must agree to the bit.
bool sameBits(strataDataType_t type, strataRedOp_t op, const uint8_t* a, const uint8_t* b) {
  const size_t ts = strata::dataTypeSize(type);
  if (std::memcmp(a, b, ts) == 0) return true;
  if (op == strataMax || op == strataMin) return false;
  if (type == strataFloat16 || type == strataBfloat16) {
    uint16_t x, y;
    std::memcpy(&x, a, 2);
    std::memcpy(&y, b, 2);
    return type == strataFloat16 ? HalfSpec::isNan(x) && HalfSpec::isNan(y)
                                 : Bf16Spec::isNan(x) && Bf16Spec::isNan(y);
  }
  if (type == strataFloat32) {
    float x, y;
    std::memcpy(&x, a, 4);
    std::memcpy(&y, b, 4);
    return std::isnan(x) && std::isnan(y);
  }
  if (type == strataFloat64) {
    double x, y;
    std::memcpy(&x, a, 8);
    std::memcpy(&y, b, 8);
    return std::isnan(x) && std::isnan(y);
  }
  return false;
}

TEST_CASE("the kernel variants give the same bits, NaN payloads aside", "[reduce]") {
  const std::vector<KernelIsa> isas = supportedIsas();
  if (isas.size() < 2) WARN("only the portable kernels run on this CPU: nothing to compare");
  std::mt19937_64 rng(2024);
  const size_t n = 4099;  // blocks, vector blocks and a tail
  for (int t = 0; t < strataNumTypes; ++t) {
    const auto type = static_cast<strataDataType_t>(t);
    const size_t ts = strata::dataTypeSize(type);
    // Every bit pattern is fair: NaNs with payloads, subnormals, infinities. Source 0 starts
    // one element in, so the variants also meet misaligned data.
    std::vector<std::vector<uint8_t>> src;
    for (int s = 0; s < 9; ++s) src.push_back(randomBytes((n + 1) * ts, rng));
    std::vector<const void*> ptrs;
    for (const auto& v : src) ptrs.push_back(v.data() + (ptrs.empty() ? ts : 0));
    for (strataRedOp_t op : kOps) {
      // Each kernel's output under each variant, in order: reduceMany for several source
      // counts, reduce2 and reduceInto, then scaleDown.
      std::vector<std::vector<uint8_t>> first;
      for (KernelIsa isa : isas) {
        IsaScope scope(isa);
        std::vector<std::vector<uint8_t>> outs;
        for (int nsrc : {2, 3, 4, 5, 6, 7, 8, 9}) {
          std::vector<uint8_t> out(n * ts);
          strata::reduceMany(out.data(), ptrs.data(), nsrc, n, type, op);
          outs.push_back(out);
        }
        std::vector<uint8_t> out(n * ts);
        strata::reduce2(out.data(), ptrs[0], ptrs[1], n, type, op);
        outs.push_back(out);
        std::memcpy(out.data(), ptrs[2], n * ts);
        strata::reduceInto(out.data(), ptrs[3], n, type, op);
        outs.push_back(out);
        strata::scaleDown(out.data(), n, type, 3);
        outs.push_back(out);
        if (first.empty()) {
          first = outs;
          continue;
        }
        for (size_t k = 0; k < outs.size(); ++k) {
          size_t i = 0;
          while (i < n && sameBits(type, k + 1 == outs.size() ? strataSum : op, &outs[k][i * ts],
                                   &first[k][i * ts]))
            ++i;
          std::ostringstream diff;
          for (size_t j = 0; i < n && j < ts; ++j) {
            diff << std::hex << static_cast<int>(outs[k][i * ts + ts - 1 - j]) << "/"
                 << static_cast<int>(first[k][i * ts + ts - 1 - j]) << " ";
          }
          INFO("type " << strata::dataTypeName(type) << ", op " << strata::redOpName(op)
                       << ", kernels " << strata::detail::kernelIsaName(isa) << " against "
                       << strata::detail::kernelIsaName(isas[0]) << ", output " << k
                       << " (reduceMany over 2..9 sources, reduce2, reduceInto, scaleDown)"
                       << ", first difference at element " << i
                       << " (bytes from the top, this/that: " << diff.str() << ")");
          CHECK(i == n);
        }
      }
    }
  }
}

TEST_CASE("datatype sizes, names and op names", "[reduce]") {
  struct Row {
    strataDataType_t type;
    size_t size;
    const char* name;
    bool is_float;
  };
  const Row rows[] = {{strataInt8, 1, "int8", false},      {strataUint8, 1, "uint8", false},
                      {strataInt32, 4, "int32", false},    {strataUint32, 4, "uint32", false},
                      {strataInt64, 8, "int64", false},    {strataUint64, 8, "uint64", false},
                      {strataFloat16, 2, "float16", true}, {strataFloat32, 4, "float32", true},
                      {strataFloat64, 8, "float64", true}, {strataBfloat16, 2, "bfloat16", true}};
  for (const Row& r : rows) {
    INFO("type " << static_cast<int>(r.type));
    CHECK(strata::dataTypeSize(r.type) == r.size);
    CHECK(std::string(strata::dataTypeName(r.type)) == r.name);
    CHECK(strata::isFloatType(r.type) == r.is_float);
    CHECK(strata::validDataType(r.type));
  }
  const strataDataType_t bad_type = strataNumTypes;
  CHECK(strata::dataTypeSize(bad_type) == 0);
  CHECK(std::string(strata::dataTypeName(bad_type)) == "unknown");
  CHECK_FALSE(strata::isFloatType(bad_type));
  CHECK_FALSE(strata::validDataType(strataNumTypes));

  CHECK(std::string(strata::redOpName(strataSum)) == "sum");
  CHECK(std::string(strata::redOpName(strataProd)) == "prod");
  CHECK(std::string(strata::redOpName(strataMax)) == "max");
  CHECK(std::string(strata::redOpName(strataMin)) == "min");
  CHECK(std::string(strata::redOpName(strataAvg)) == "avg");
  CHECK(std::string(strata::redOpName(strataNumOps)) == "unknown");
}
