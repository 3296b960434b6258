// The device kernels (gpu/kernels.h) against the host kernels (common/reduce.h), bit for bit:
// every type and op, odd and even counts, 1 to 8 sources, aligned and unaligned buffers, in
// place and not; the average's division; waitCounter holding a stream until the host counts up;
// and the arguments they refuse. Two NaNs count as equal: the host keeps a NaN's payload, the
// device conversions and arithmetic may not, and IEEE leaves it open.
#include <cuda_runtime.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "common/datatype.h"
#include "common/half.h"
#include "common/reduce.h"
#include "gpu/kernels.h"
#include "gpu/mapped_counter.h"

namespace {

using Bytes = std::vector<unsigned char>;

constexpr strataDataType_t kTypes[] = {strataInt8,    strataUint8,   strataInt32,   strataUint32,
                                       strataInt64,   strataUint64,  strataFloat16, strataFloat32,
                                       strataFloat64, strataBfloat16};
// 1000003 is odd and a multiple of no pack width; 4097 is one past a power of two.
constexpr size_t kCounts[] = {1, 3, 7, 1000003, 4097};
constexpr int kSourceCounts[] = {1, 2, 3, 8};
// Room for the largest count, an element of offset and a guard element after the result.
constexpr size_t kCapacity = 1000003 + 16;

#define REQUIRE_CUDA(call)                          \
  do {                                              \
    const cudaError_t rc_ = (call);                 \
    INFO(#call << ": " << cudaGetErrorString(rc_)); \
    REQUIRE(rc_ == cudaSuccess);                    \
  } while (0)

struct DeviceBuffer {
  explicit DeviceBuffer(size_t bytes) { REQUIRE_CUDA(cudaMalloc(&p, bytes)); }
  ~DeviceBuffer() { cudaFree(p); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  unsigned char* at(size_t byte) const { return static_cast<unsigned char*>(p) + byte; }
  void* p = nullptr;
};

struct Stream {
  Stream() { REQUIRE_CUDA(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking)); }
  ~Stream() { cudaStreamDestroy(s); }
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;
  cudaStream_t s = nullptr;
};

uint64_t mix(uint64_t x) {  // splitmix64's finaliser: deterministic, well spread bits
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

// What the values of a data set are chosen to exercise.
enum class Kind {
  kSum,     // sums: wrapping integers, float sums that round, overflow to infinity
  kProd,    // products: floats near 1 in magnitude, so that 8 of them stay finite
  kMaxMin,  // max and min: the above plus NaNs and signed zeros
};

// Exponent range of a floating type: the largest binary exponent and that of the smallest
// subnormal.
struct Range {
  int maxExp;
  int minSubExp;
};

// A floating value (computed in F, then narrowed by the caller) from 64 random bits: mostly
// ordinary numbers with random mantissas (so sums and products must round), some zeros of
// either sign, infinities, subnormals, values near the largest finite one, and for max/min
// NaNs.
template <typename F>
F floating(uint64_t r, Kind kind, Range range) {
  const unsigned special = r % 64;
  r >>= 6;
  const F sign = (r & 1) ? F(-1) : F(1);
  r >>= 1;
  const F mant = F(1) + static_cast<F>(r & ((uint64_t{1} << 40) - 1)) / F(uint64_t{1} << 40);
  r >>= 40;
  switch (special) {
    case 0:
      if (kind == Kind::kMaxMin) return std::numeric_limits<F>::quiet_NaN();
      break;
    case 1:
      return sign * F(0);
    case 2:
      return sign * std::numeric_limits<F>::infinity();
    case 3:  // below the smallest normal of the stored type (up to 100 of its steps)
      return sign * std::ldexp(F(static_cast<int>(r % 100) + 1), range.minSubExp);
    case 4:  // within a factor of 2 of the largest finite value: sums overflow, some round up
      if (kind != Kind::kProd) return sign * std::ldexp(mant, range.maxExp);
      break;
    default:
      break;
  }
  const int exp = kind == Kind::kProd ? static_cast<int>(r % 2) - 1 : static_cast<int>(r % 9) - 4;
  return sign * std::ldexp(mant, exp);
}

template <typename T>
void put(Bytes& out, size_t i, T v) {
  std::memcpy(out.data() + i * sizeof(T), &v, sizeof(T));
}

// `count` elements of `type`, deterministic in (type, kind, seed).
Bytes makeData(strataDataType_t type, Kind kind, int seed, size_t count) {
  Bytes out(count * strata::dataTypeSize(type));
  const uint64_t base = (static_cast<uint64_t>(type) << 48) ^ (static_cast<uint64_t>(kind) << 40) ^
                        (static_cast<uint64_t>(seed) << 32);
  for (size_t i = 0; i < count; ++i) {
    const uint64_t r = mix(base + i);
    // Integers: half full-range bits (sums and products wrap), half small signed values.
    const uint64_t bits =
        (r & 1) ? (r >> 1) : static_cast<uint64_t>(int64_t((r >> 8) & 0xff) - 128);
    switch (type) {
      case strataInt8:
      case strataUint8:
        put(out, i, static_cast<uint8_t>(bits));
        break;
      case strataInt32:
      case strataUint32:
        put(out, i, static_cast<uint32_t>(bits));
        break;
      case strataInt64:
      case strataUint64:
        put(out, i, bits);
        break;
      case strataFloat16:
        put(out, i, strata::floatToHalf(floating<float>(r, kind, {15, -24})));
        break;
      case strataBfloat16:
        put(out, i, strata::floatToBf16(floating<float>(r, kind, {127, -133})));
        break;
      case strataFloat32:
        put(out, i, floating<float>(r, kind, {127, -149}));
        break;
      case strataFloat64:
        put(out, i, floating<double>(r, kind, {1023, -1074}));
        break;
      case strataNumTypes:
        break;
    }
  }
  return out;
}

bool isNaN(strataDataType_t type, const unsigned char* p) {
  uint16_t h;
  float f;
  double d;
  switch (type) {
    case strataFloat16:
      std::memcpy(&h, p, 2);
      return (h & 0x7fff) > 0x7c00;
    case strataBfloat16:
      std::memcpy(&h, p, 2);
      return (h & 0x7fff) > 0x7f80;
    case strataFloat32:
      std::memcpy(&f, p, 4);
      return std::isnan(f);
    case strataFloat64:
      std::memcpy(&d, p, 8);
      return std::isnan(d);
    default:
      return false;
  }
}

std::string hex(const unsigned char* p, size_t n) {
  std::string s = "0x";
  char buf[4];
  for (size_t i = n; i-- > 0;) {  // little endian: most significant byte last
    std::snprintf(buf, sizeof buf, "%02x", p[i]);
    s += buf;
  }
  return s;
}

// Checks got == want element by element (two NaNs are equal), reporting the first difference.
void checkSame(strataDataType_t type, const Bytes& got, const Bytes& want, size_t count) {
  const size_t ts = strata::dataTypeSize(type);
  size_t bad = 0, first = 0;
  for (size_t i = 0; i < count; ++i) {
    const unsigned char* g = got.data() + i * ts;
    const unsigned char* w = want.data() + i * ts;
    if (std::memcmp(g, w, ts) == 0 || (isNaN(type, g) && isNaN(type, w))) continue;
    if (bad++ == 0) first = i;
  }
  if (bad > 0) {
    INFO(bad << " of " << count << " elements differ; first at " << first << ": device "
             << hex(got.data() + first * ts, ts) << ", host " << hex(want.data() + first * ts, ts));
    CHECK(bad == 0);
  }
}

Bytes download(const void* src, size_t bytes, cudaStream_t stream) {
  Bytes out(bytes);
  REQUIRE_CUDA(cudaMemcpyAsync(out.data(), src, bytes, cudaMemcpyDeviceToHost, stream));
  REQUIRE_CUDA(cudaStreamSynchronize(stream));
  return out;
}

std::vector<strataRedOp_t> opsFor(Kind kind) {
  switch (kind) {
    case Kind::kSum:
      return {strataSum, strataAvg};
    case Kind::kProd:
      return {strataProd};
    case Kind::kMaxMin:
      return {strataMax, strataMin};
  }
  return {};
}

// One data set of one type on the device: kMaxReduceSources sources, a dst and a scratch
// buffer for the in-place runs.
struct Fixture {
  explicit Fixture(strataDataType_t t) : type(t), ts(strata::dataTypeSize(t)) {
    for (int s = 0; s < strata::gpu::kMaxReduceSources; ++s) {
      dev.push_back(std::make_unique<DeviceBuffer>(kCapacity * ts));
    }
  }
  void load(Kind kind) {
    host.clear();
    for (int s = 0; s < strata::gpu::kMaxReduceSources; ++s) {
      host.push_back(makeData(type, kind, s, kCapacity));
      // On the stream the kernels run on: a pageable cudaMemcpy on the legacy stream may return
      // before its data lands, and a non-blocking stream is not ordered after it.
      REQUIRE_CUDA(cudaMemcpyAsync(dev[s]->p, host[s].data(), kCapacity * ts,
                                   cudaMemcpyHostToDevice, stream.s));
    }
  }

  // Reduces the first nsrc sources from element `offset` on, on device and host, and compares.
  void run(strataRedOp_t op, size_t count, int nsrc, size_t offset, bool inPlace) {
    INFO(strata::dataTypeName(type)
         << " " << strata::redOpName(op) << ", count " << count << ", " << nsrc
         << " sources, offset " << offset << (inPlace ? ", in place" : ""));
    const size_t off = offset * ts, bytes = count * ts;
    std::vector<const void*> hsrc, dsrc;
    for (int s = 0; s < nsrc; ++s) {
      hsrc.push_back(host[s].data() + off);
      dsrc.push_back(dev[s]->at(off));
    }
    Bytes want(bytes);
    strata::reduceMany(want.data(), hsrc.data(), nsrc, count, type, op);
    if (op == strataAvg) strata::scaleDown(want.data(), count, type, nsrc);

    // A poisoned dst, so that an element the kernel skipped cannot match by chance, and a
    // guard element after the result that must stay poisoned.
    REQUIRE_CUDA(cudaMemsetAsync(dst.p, 0xa5, kCapacity * ts, stream.s));
    void* out = dst.at(off);
    if (inPlace) {
      REQUIRE_CUDA(cudaMemcpyAsync(out, dsrc[0], bytes, cudaMemcpyDeviceToDevice, stream.s));
      dsrc[0] = out;
    }
    strata::Status st = strata::gpu::reduceMany(out, dsrc.data(), nsrc, count, type, op, stream.s);
    INFO(st.message());
    REQUIRE(st.isOk());
    if (op == strataAvg) {
      st = strata::gpu::scaleDown(out, count, type, nsrc, stream.s);
      REQUIRE(st.isOk());
    }
    const Bytes got = download(out, bytes + ts, stream.s);
    checkSame(type, got, want, count);
    const Bytes poison(ts, 0xa5);
    CHECK(std::memcmp(got.data() + bytes, poison.data(), ts) == 0);
  }

  strataDataType_t type;
  size_t ts;
  Stream stream;
  std::vector<std::unique_ptr<DeviceBuffer>> dev;
  std::vector<Bytes> host;
  DeviceBuffer dst{kCapacity * ts};
};

}  // namespace

TEST_CASE("gpu reduceMany matches the host kernels bit for bit", "[gpu][kernels]") {
  for (strataDataType_t type : kTypes) {
    Fixture f(type);
    for (Kind kind : {Kind::kSum, Kind::kProd, Kind::kMaxMin}) {
      f.load(kind);
      for (strataRedOp_t op : opsFor(kind)) {
        for (size_t count : kCounts) {
          for (int nsrc : kSourceCounts) {
            // Offset 1 makes every pointer miss the 16-byte pack alignment (the scalar path).
            for (size_t offset : {size_t{0}, size_t{1}}) {
              f.run(op, count, nsrc, offset, false);
              f.run(op, count, nsrc, offset, true);
            }
          }
        }
      }
    }
  }
}

TEST_CASE("gpu scaleDown matches the host's division", "[gpu][kernels]") {
  Stream stream;
  for (strataDataType_t type : kTypes) {
    const size_t ts = strata::dataTypeSize(type);
    for (size_t count : {size_t{7}, size_t{1000003}}) {
      // Max/min data: NaNs, infinities, signed zeros and subnormals besides ordinary values.
      const Bytes in = makeData(type, Kind::kMaxMin, 11, count);
      DeviceBuffer buf(count * ts);
      for (int divisor : {1, 3, 7}) {
        INFO(strata::dataTypeName(type) << ", count " << count << ", divisor " << divisor);
        // Ordered on the kernel's stream (the GPU run's divisor-1 zeros: a legacy-stream
        // cudaMemcpy that had not landed when the non-blocking stream read the buffer).
        REQUIRE_CUDA(cudaMemcpyAsync(buf.p, in.data(), count * ts, cudaMemcpyHostToDevice,
                                     stream.s));
        const strata::Status st = strata::gpu::scaleDown(buf.p, count, type, divisor, stream.s);
        INFO(st.message());
        REQUIRE(st.isOk());
        Bytes want = in;
        strata::scaleDown(want.data(), count, type, divisor);
        checkSame(type, download(buf.p, count * ts, stream.s), want, count);
      }
    }
  }
}

TEST_CASE("gpu waitCounter holds its stream until the host counter reaches the target",
          "[gpu][kernels]") {
  Stream stream;
  MappedCounter counter;
  DeviceBuffer marker(64);
  REQUIRE_CUDA(cudaMemsetAsync(marker.p, 0, 64, stream.s));  // before the wait, on its stream

  REQUIRE(strata::gpu::waitCounter(counter.device, 5, stream.s).isOk());
  REQUIRE_CUDA(cudaMemsetAsync(marker.p, 1, 64, stream.s));  // queued behind the wait

  auto set = [&](unsigned long long v) { counter.set(v); };
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK(cudaStreamQuery(stream.s) == cudaErrorNotReady);
  set(4);  // one short of the target: still waiting
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  CHECK(cudaStreamQuery(stream.s) == cudaErrorNotReady);
  set(5);

  // Poll with a deadline instead of blocking in cudaStreamSynchronize, so a kernel that never
  // sees the store fails the test instead of hanging it; then release it for good.
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  cudaError_t q = cudaStreamQuery(stream.s);
  while (q == cudaErrorNotReady && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    q = cudaStreamQuery(stream.s);
  }
  if (q == cudaErrorNotReady) set(std::numeric_limits<unsigned long long>::max());
  CHECK(q == cudaSuccess);
  REQUIRE_CUDA(cudaStreamSynchronize(stream.s));
  unsigned char got[64];
  REQUIRE_CUDA(cudaMemcpy(got, marker.p, sizeof got, cudaMemcpyDeviceToHost));
  CHECK(got[0] == 1);
  CHECK(got[63] == 1);
}

TEST_CASE("gpu kernels refuse invalid arguments and enqueue nothing for count 0",
          "[gpu][kernels]") {
  Stream stream;
  DeviceBuffer a(64), b(64);
  const void* srcs[strata::gpu::kMaxReduceSources + 1] = {};
  for (const void*& s : srcs) s = b.p;
  using strata::Code;
  auto reduce = [&](int nsrc, strataDataType_t type, strataRedOp_t op, size_t count = 4) {
    return strata::gpu::reduceMany(a.p, srcs, nsrc, count, type, op, stream.s).code();
  };
  CHECK(reduce(0, strataFloat32, strataSum) == Code::kInvalidArgument);
  CHECK(reduce(9, strataFloat32, strataSum) == Code::kInvalidArgument);
  CHECK(reduce(-1, strataFloat32, strataSum) == Code::kInvalidArgument);
  CHECK(reduce(2, static_cast<strataDataType_t>(strataNumTypes), strataSum) ==
        Code::kInvalidArgument);
  CHECK(reduce(2, static_cast<strataDataType_t>(-1), strataSum) == Code::kInvalidArgument);
  CHECK(reduce(2, strataFloat32, static_cast<strataRedOp_t>(strataNumOps)) ==
        Code::kInvalidArgument);
  CHECK(reduce(8, strataFloat32, strataSum) == Code::kOk);
  CHECK(reduce(2, strataFloat32, strataSum, 0) == Code::kOk);
  CHECK(strata::gpu::reduceMany(nullptr, srcs, 2, 0, strataInt8, strataMax, stream.s).isOk());

  CHECK(strata::gpu::scaleDown(a.p, 4, strataFloat32, 0, stream.s).code() ==
        Code::kInvalidArgument);
  CHECK(strata::gpu::scaleDown(a.p, 4, strataFloat32, -3, stream.s).code() ==
        Code::kInvalidArgument);
  CHECK(strata::gpu::scaleDown(a.p, 4, static_cast<strataDataType_t>(strataNumTypes), 2, stream.s)
            .code() == Code::kInvalidArgument);
  CHECK(strata::gpu::scaleDown(nullptr, 0, strataFloat32, 2, stream.s).isOk());
  CHECK(strata::gpu::waitCounter(nullptr, 1, stream.s).code() == Code::kInvalidArgument);
  REQUIRE_CUDA(cudaStreamSynchronize(stream.s));
}
