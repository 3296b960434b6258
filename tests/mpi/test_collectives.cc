// MPI integration test of strata's collectives: all-reduce, reduce-scatter and all-gather over
// every datatype, op, a sweep of counts, in place and out of place.
//
// Every rank's input is a deterministic function of (case, rank, index), so each rank computes the
// exact expected result by itself; the reference shares no code and no communication with the
// library. The inputs keep every result exact whatever order the library combines them in (sums
// of bounded multiples of a power of two, products of small factors or of powers of two), so any
// difference is a bug, not rounding; only avg on floating types is compared with a tolerance,
// because the library divides in float and rounds once. A subset is cross-checked against plain
// MPI collectives on the same inputs. Each case also checks that a guard region on both sides of
// every buffer is untouched and that the send buffer (or, in place, the rest of it) is unchanged.
//
// Cases are not separated by any synchronisation of the test's own, so a library that lets one
// collective's messages leak into the next fails here too. A watchdog turns a hang into a failure
// that names the case.
//
//   mpiexec -n 8 strata_mpi_collectives [--quick] [--max-count N] [--timeout S] [--two-comms]

#include <mpi.h>

#include <CLI/CLI.hpp>
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/watchdog.h"
#include "strata/strata_mpi.h"

namespace {

using strata::test::Watchdog;

// ----- fp16 and bf16 --------------------------------------------------------------------------

uint32_t floatBits(float f) {
  uint32_t u;
  std::memcpy(&u, &f, sizeof u);
  return u;
}

float bitsToFloat(uint32_t u) {
  float f;
  std::memcpy(&f, &u, sizeof f);
  return f;
}

float halfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000u) << 16;
  const uint32_t exp = (h >> 10) & 0x1fu, mant = h & 0x3ffu;
  if (exp == 0x1f) return bitsToFloat(sign | 0x7f800000u | (mant << 13));
  if (exp == 0) {  // subnormal: mant * 2^-24
    const float v = std::ldexp(static_cast<float>(mant), -24);
    return sign ? -v : v;
  }
  return bitsToFloat(sign | ((exp + 112u) << 23) | (mant << 13));
}

// Round to nearest, ties to even (what the library's one rounding of an avg does).
uint16_t floatToHalf(float f) {
  uint32_t x = floatBits(f);
  const uint16_t sign = static_cast<uint16_t>((x >> 16) & 0x8000u);
  x &= 0x7fffffffu;
  if (x > 0x7f800000u) return sign | 0x7e00u;   // NaN
  if (x >= 0x477ff000u) return sign | 0x7c00u;  // 65520 and up round to infinity
  if (x < 0x38800000u) {                        // below 2^-14: a multiple of 2^-24
    return sign | static_cast<uint16_t>(std::nearbyint(bitsToFloat(x) * 16777216.0f));
  }
  x += 0xfffu + ((x >> 13) & 1u);
  return sign | static_cast<uint16_t>((x - (112u << 23)) >> 13);
}

float bf16ToFloat(uint16_t b) { return bitsToFloat(static_cast<uint32_t>(b) << 16); }

uint16_t floatToBf16(float f) {
  uint32_t x = floatBits(f);
  if ((x & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((x >> 16) | 0x40u);
  x += 0x7fffu + ((x >> 16) & 1u);
  return static_cast<uint16_t>(x >> 16);
}

struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

// ----- Element types --------------------------------------------------------------------------

// Integers are computed in their own type (unsigned wrap-around is the defined behaviour the
// library must match); floating types in double, where every input and result here is exact.
template <typename T>
struct Traits {
  static constexpr bool kFloat = false;
  using Math = T;
  static Math toMath(T v) { return v; }
  static T fromMath(Math v) { return v; }
};

// kDigits: significand bits. Sum inputs are multiples of 2^-kFracBits bounded so that
// nranks * bound <= 2^kDigits: then every partial sum, in any order, is exactly representable.
template <>
struct Traits<float> {
  static constexpr bool kFloat = true;
  using Math = double;
  using Bits = uint32_t;
  static constexpr int kDigits = 24, kFracBits = 3;
  static constexpr Bits kExpMask = 0x7f800000u, kExpLsb = 0x00800000u;
  static constexpr double kAvgTolerance = 1e-6;
  static double toMath(float v) { return v; }
  static float fromMath(double v) { return static_cast<float>(v); }
};

template <>
struct Traits<double> {
  static constexpr bool kFloat = true;
  using Math = double;
  using Bits = uint64_t;
  static constexpr int kDigits = 53, kFracBits = 4;
  static constexpr Bits kExpMask = 0x7ff0000000000000ull, kExpLsb = 0x0010000000000000ull;
  static constexpr double kAvgTolerance = 1e-12;
  static double toMath(double v) { return v; }
  static double fromMath(double v) { return v; }
};

template <>
struct Traits<Half> {
  static constexpr bool kFloat = true;
  using Math = double;
  using Bits = uint16_t;
  static constexpr int kDigits = 11, kFracBits = 2;
  static constexpr Bits kExpMask = 0x7c00u, kExpLsb = 0x0400u;
  static constexpr double kAvgTolerance = 1e-2;
  static double toMath(Half v) { return halfToFloat(v.bits); }
  static Half fromMath(double v) { return Half{floatToHalf(static_cast<float>(v))}; }
};

template <>
struct Traits<BFloat16> {
  static constexpr bool kFloat = true;
  using Math = double;
  using Bits = uint16_t;
  static constexpr int kDigits = 8, kFracBits = 1;
  static constexpr Bits kExpMask = 0x7f80u, kExpLsb = 0x0080u;
  static constexpr double kAvgTolerance = 1e-2;
  static double toMath(BFloat16 v) { return bf16ToFloat(v.bits); }
  static BFloat16 fromMath(double v) { return BFloat16{floatToBf16(static_cast<float>(v))}; }
};

template <typename T>
std::string show(T v) {
  char s[96];
  if constexpr (Traits<T>::kFloat) {
    typename Traits<T>::Bits b;
    std::memcpy(&b, &v, sizeof b);
    std::snprintf(s, sizeof s, "%.17g (0x%llx)", Traits<T>::toMath(v),
                  static_cast<unsigned long long>(b));
  } else if constexpr (std::is_signed_v<T>) {
    std::snprintf(s, sizeof s, "%lld", static_cast<long long>(v));
  } else {
    std::snprintf(s, sizeof s, "%llu", static_cast<unsigned long long>(v));
  }
  return s;
}

template <typename T>
MPI_Datatype mpiType() {
  if constexpr (std::is_same_v<T, int8_t>) return MPI_INT8_T;
  if constexpr (std::is_same_v<T, uint8_t>) return MPI_UINT8_T;
  if constexpr (std::is_same_v<T, int32_t>) return MPI_INT32_T;
  if constexpr (std::is_same_v<T, uint32_t>) return MPI_UINT32_T;
  if constexpr (std::is_same_v<T, int64_t>) return MPI_INT64_T;
  if constexpr (std::is_same_v<T, uint64_t>) return MPI_UINT64_T;
  if constexpr (std::is_same_v<T, float>) return MPI_FLOAT;
  if constexpr (std::is_same_v<T, double>) return MPI_DOUBLE;
  return MPI_DATATYPE_NULL;  // fp16, bf16: MPI has none
}

MPI_Op mpiOp(strataRedOp_t op) {
  switch (op) {
    case strataSum:
      return MPI_SUM;
    case strataProd:
      return MPI_PROD;
    case strataMax:
      return MPI_MAX;
    case strataMin:
      return MPI_MIN;
    default:
      return MPI_OP_NULL;  // avg: MPI has none
  }
}

// Calls f(T{}) with the C++ type that stores `type`.
template <typename F>
void withType(strataDataType_t type, F&& f) {
  switch (type) {
    case strataInt8:
      f(int8_t{});
      break;
    case strataUint8:
      f(uint8_t{});
      break;
    case strataInt32:
      f(int32_t{});
      break;
    case strataUint32:
      f(uint32_t{});
      break;
    case strataInt64:
      f(int64_t{});
      break;
    case strataUint64:
      f(uint64_t{});
      break;
    case strataFloat16:
      f(Half{});
      break;
    case strataFloat32:
      f(float{});
      break;
    case strataFloat64:
      f(double{});
      break;
    case strataBfloat16:
      f(BFloat16{});
      break;
    default:
      break;
  }
}

const strataDataType_t kAllTypes[] = {strataInt8,    strataUint8,   strataInt32,   strataUint32,
                                      strataInt64,   strataUint64,  strataFloat16, strataFloat32,
                                      strataFloat64, strataBfloat16};
const strataRedOp_t kAllOps[] = {strataSum, strataProd, strataMax, strataMin, strataAvg};

const char* typeName(strataDataType_t t) {
  static const char* const kNames[] = {"int8",   "uint8", "int32", "uint32", "int64",
                                       "uint64", "fp16",  "fp32",  "fp64",   "bf16"};
  return t >= 0 && t < strataNumTypes ? kNames[t] : "?";
}

const char* opName(strataRedOp_t op) {
  static const char* const kNames[] = {"sum", "prod", "max", "min", "avg"};
  return op >= 0 && op < strataNumOps ? kNames[op] : "?";
}

// ----- Cases ----------------------------------------------------------------------------------

enum class Coll { kAllReduce, kReduceScatter, kAllGather };

const char* collName(Coll c) {
  switch (c) {
    case Coll::kAllReduce:
      return "allreduce";
    case Coll::kReduceScatter:
      return "reducescatter";
    case Coll::kAllGather:
      return "allgather";
  }
  return "?";
}

struct Case {
  Coll coll;
  strataDataType_t type;
  strataRedOp_t op;  // ignored by all-gather
  size_t count;      // all-reduce: count; reduce-scatter: recvcount; all-gather: sendcount
  bool inPlace;
};

std::string describe(const Case& c) {
  std::string s = std::string(collName(c.coll)) + " " + typeName(c.type);
  if (c.coll != Coll::kAllGather) s += std::string(" ") + opName(c.op);
  return s + " count=" + std::to_string(c.count) + (c.inPlace ? " in-place" : " out-of-place");
}

// A communicator under test.
struct Comm {
  strataComm_t comm = nullptr;
  MPI_Comm mpi = MPI_COMM_NULL;  // its MPI twin, for the MPI reference; may be null
  int rank = 0, size = 0;
  std::string name;
};

enum class Reference { kLocal, kMpi };

// ----- Inputs ---------------------------------------------------------------------------------

uint64_t mix(uint64_t x) {  // splitmix64's finaliser
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

uint64_t hashString(const std::string& s) {  // FNV-1a
  uint64_t h = 0xcbf29ce484222325ull;
  for (unsigned char ch : s) h = (h ^ ch) * 0x100000001b3ull;
  return h;
}

// kAny: arbitrary values (max/min, all-gather, and unsigned sums, whose wrap-around is defined).
// kBounded: |value| <= limit / nranks, so no partial sum overflows or rounds (sum, avg).
// kProd: small factors, few enough per element that the product neither overflows nor rounds.
enum class Pattern { kAny, kBounded, kProd };

template <typename T>
Pattern patternFor(const Case& c) {
  if (c.coll == Coll::kAllGather || c.op == strataMax || c.op == strataMin) return Pattern::kAny;
  if (c.op == strataProd) return Pattern::kProd;
  if (c.op == strataSum && std::is_unsigned_v<T>) return Pattern::kAny;
  return Pattern::kBounded;
}

// How many ranks may contribute a factor > 1 to one element: factor^budget fits in T.
template <typename T>
int prodBudget(uint64_t factor) {
  const uint64_t limit = static_cast<uint64_t>(std::numeric_limits<T>::max());
  uint64_t v = 1;
  int budget = 0;
  while (v <= limit / factor) {
    v *= factor;
    ++budget;
  }
  return budget;
}

template <typename T>
T genInt(Pattern pat, int nranks, int rank, size_t i, uint64_t h) {
  using L = std::numeric_limits<T>;
  switch (pat) {
    case Pattern::kAny:
      if ((h >> 59) == 0) return L::max();
      if ((h >> 59) == 1) return L::min();
      return static_cast<T>(h);
    case Pattern::kBounded: {
      uint64_t bound = static_cast<uint64_t>(L::max()) / static_cast<uint64_t>(nranks);
      if (((h >> 56) & 3) == 0) bound = std::min<uint64_t>(bound, 9);  // sums often cross zero
      if constexpr (std::is_signed_v<T>) {
        const uint64_t v = h % (2 * bound + 1) - bound;  // in [-bound, bound], two's complement
        return static_cast<T>(static_cast<int64_t>(v));
      } else {
        return static_cast<T>(bound == L::max() ? h : h % (bound + 1));
      }
    }
    case Pattern::kProd: {
      if ((h >> 40) % 61 == 0) return 0;
      const uint64_t factor = sizeof(T) == 1 ? 2 : 3;
      // Of the ranks, only min(budget, nranks) give this element a factor above 1.
      const bool grows =
          static_cast<int>((static_cast<uint64_t>(rank) + i) % nranks) < prodBudget<T>(factor);
      const T mag = static_cast<T>(grows ? 1 + h % factor : 1);
      if constexpr (std::is_signed_v<T>) {
        if ((h >> 8) % 3 == 0) return static_cast<T>(-mag);
      }
      return mag;
    }
  }
  return 0;
}

template <typename T>
T genFloat(Pattern pat, int nranks, uint64_t h) {
  using Tr = Traits<T>;
  switch (pat) {
    case Pattern::kAny: {  // any finite value: subnormals, zeros of both signs, extremes
      auto bits = static_cast<typename Tr::Bits>(h);
      if ((bits & Tr::kExpMask) == Tr::kExpMask) bits ^= Tr::kExpLsb;
      T v;
      std::memcpy(&v, &bits, sizeof v);
      return v;
    }
    case Pattern::kBounded: {
      int64_t bound = (int64_t{1} << Tr::kDigits) / nranks;
      if (((h >> 56) & 3) == 0) bound = std::min<int64_t>(bound, 9);
      const int64_t k = static_cast<int64_t>(h % static_cast<uint64_t>(2 * bound + 1)) - bound;
      return Tr::fromMath(std::ldexp(static_cast<double>(k), -Tr::kFracBits));
    }
    case Pattern::kProd: {  // 0 or +-2^e, e in {-1, 0, 1}: every product is a power of two
      if ((h >> 40) % 61 == 0) return Tr::fromMath(0.0);
      const double v = std::ldexp(1.0, static_cast<int>(h % 3) - 1);
      return Tr::fromMath((h >> 8) & 1 ? -v : v);
    }
  }
  return Tr::fromMath(0.0);
}

// Rank `rank`'s input element i for a case with seed `seed`.
template <typename T>
T genValue(Pattern pat, int nranks, int rank, size_t i, uint64_t seed) {
  const uint64_t h = mix(seed ^ (static_cast<uint64_t>(rank) << 40) ^ i);
  if constexpr (Traits<T>::kFloat) {
    return genFloat<T>(pat, nranks, h);
  } else {
    return genInt<T>(pat, nranks, rank, i, h);
  }
}

// ----- Reference ------------------------------------------------------------------------------

template <typename T>
typename Traits<T>::Math combine(strataRedOp_t op, typename Traits<T>::Math a,
                                 typename Traits<T>::Math b) {
  using M = typename Traits<T>::Math;
  switch (op) {
    case strataSum:
    case strataAvg:
      return static_cast<M>(a + b);
    case strataProd:
      return static_cast<M>(a * b);
    case strataMax:
      return a < b ? b : a;
    case strataMin:
      return b < a ? b : a;
    default:
      return a;
  }
}

template <typename T>
typename Traits<T>::Math divide(typename Traits<T>::Math a, int n) {
  if constexpr (Traits<T>::kFloat) {
    return a / n;
  } else if constexpr (std::is_signed_v<T>) {
    return static_cast<T>(static_cast<int64_t>(a) / n);  // truncates toward zero, as C and NCCL
  } else {
    return static_cast<T>(static_cast<uint64_t>(a) / static_cast<uint64_t>(n));
  }
}

// The reduction over all ranks of element i, computed from the inputs alone.
template <typename T>
T expectedReduction(strataRedOp_t op, Pattern pat, int nranks, size_t i, uint64_t seed) {
  using Tr = Traits<T>;
  auto acc = Tr::toMath(genValue<T>(pat, nranks, 0, i, seed));
  for (int q = 1; q < nranks; ++q) {
    acc = combine<T>(op, acc, Tr::toMath(genValue<T>(pat, nranks, q, i, seed)));
  }
  if (op == strataAvg) acc = divide<T>(acc, nranks);
  return Tr::fromMath(acc);
}

// ----- Checking -------------------------------------------------------------------------------

constexpr int kMaxPrintedFailures = 40;
int g_printedFailures = 0;

// Collects the failures of one case on this rank and prints them with the case description.
class Verdict {
 public:
  Verdict(int worldRank, std::string what) : worldRank_(worldRank), what_(std::move(what)) {}

  void fail(const std::string& why) {
    ok_ = false;
    if (g_printedFailures < kMaxPrintedFailures) {
      std::fprintf(stderr, "FAIL rank %d: %s: %s\n", worldRank_, what_.c_str(), why.c_str());
    } else if (g_printedFailures == kMaxPrintedFailures) {
      std::fprintf(stderr, "rank %d: further failures are counted, not printed\n", worldRank_);
    }
    ++g_printedFailures;
  }

  bool ok() const { return ok_; }

 private:
  int worldRank_;
  std::string what_;
  bool ok_ = true;
};

enum class Compare { kBits, kValue, kTolerance };

template <typename T>
Compare compareFor(const Case& c) {
  if (c.coll == Coll::kAllGather) return Compare::kBits;
  if (c.op == strataAvg && Traits<T>::kFloat) return Compare::kTolerance;
  return Compare::kValue;  // exact; for floats +0 == -0 (max/min of zeros may pick either)
}

template <typename T>
bool matches(const T& got, const T& want, Compare how) {
  if (how == Compare::kBits) return std::memcmp(&got, &want, sizeof(T)) == 0;
  if constexpr (Traits<T>::kFloat) {
    const double g = Traits<T>::toMath(got), w = Traits<T>::toMath(want);
    if (how == Compare::kTolerance)
      return std::fabs(g - w) <= Traits<T>::kAvgTolerance * std::fabs(w);
    return g == w;  // NaN never matches
  } else {
    return got == want;
  }
}

// got[i] against want[i] for i < n; `first` is the index of got[0] in what the message names.
template <typename T>
void compareElements(Verdict& v, const char* what, const T* got, const T* want, size_t n,
                     Compare how, size_t first = 0) {
  size_t wrong = 0, firstWrong = 0, lastWrong = 0;
  for (size_t i = 0; i < n; ++i) {
    if (matches(got[i], want[i], how)) continue;
    if (wrong++ == 0) firstWrong = i;
    lastWrong = i;
  }
  if (wrong == 0) return;
  v.fail(std::string(what) + ": " + std::to_string(wrong) + " of " + std::to_string(n) +
         " elements wrong; first at index " + std::to_string(first + firstWrong) + ": got " +
         show(got[firstWrong]) + ", expected " + show(want[firstWrong]) + "; last at index " +
         std::to_string(first + lastWrong));
}

// A buffer with a guard region on each side, filled with a pattern the library must not touch,
// and a data region prefilled with a sentinel (so a result that is never written shows). `shift`
// bytes of padding in front vary the data's alignment (vector loops must not assume any beyond
// the element's own).
class GuardedBuffer {
 public:
  static constexpr size_t kGuard = 64;  // bytes

  GuardedBuffer(size_t bytes, size_t shift)
      : bytes_(bytes), front_(shift + kGuard), storage_(front_ + bytes + kGuard) {
    for (size_t j = 0; j < kGuard; ++j) {
      storage_[shift + j] = guardByte(j);
      storage_[front_ + bytes + j] = guardByte(kGuard + j);
    }
    std::memset(data(), 0xc3, bytes);
  }

  unsigned char* data() { return storage_.data() + front_; }
  template <typename T>
  T* as() {
    return reinterpret_cast<T*>(data());
  }

  void checkGuards(Verdict& v, const char* name) const {
    for (size_t j = 0; j < kGuard; ++j) {
      if (storage_[front_ - kGuard + j] != guardByte(j)) {
        v.fail(std::string("wrote ") + std::to_string(kGuard - j) + " bytes before " + name);
        break;
      }
    }
    for (size_t j = 0; j < kGuard; ++j) {
      if (storage_[front_ + bytes_ + j] != guardByte(kGuard + j)) {
        v.fail(std::string("wrote past the end of ") + name + " (byte " + std::to_string(j) +
               " of the guard)");
        break;
      }
    }
  }

 private:
  static unsigned char guardByte(size_t j) { return static_cast<unsigned char>(0xa5 ^ (j * 29)); }

  size_t bytes_, front_;
  std::vector<unsigned char> storage_;
};

// Padding for a case's buffer `which`: 0 to 3 elements, from the case's seed.
template <typename T>
size_t shiftFor(uint64_t seed, int which) {
  return ((seed >> (8 * which)) & 3) * sizeof(T);
}

void copyBytes(void* dst, const void* src, size_t bytes) {
  if (bytes) std::memcpy(dst, src, bytes);
}

bool checkResult(Verdict& v, strataResult_t rc, strataComm_t comm) {
  if (rc == strataSuccess) return true;
  v.fail("returned " + std::to_string(rc) + " (" + strataGetErrorString(rc) +
         "): " + strataGetLastError(comm));
  return false;
}

// ----- The three collectives ------------------------------------------------------------------

// Each computes the expected result before calling the library, so an MPI reference (a
// collective itself) is never skipped by one rank while another waits in it.

template <typename T>
void runAllReduce(const Comm& cm, const Case& c, Reference ref, uint64_t seed, Verdict& v) {
  const size_t n = c.count, bytes = n * sizeof(T);
  const Pattern pat = patternFor<T>(c);
  std::vector<T> input(n), want(n);
  for (size_t i = 0; i < n; ++i) input[i] = genValue<T>(pat, cm.size, cm.rank, i, seed);
  if (ref == Reference::kMpi) {
    MPI_Allreduce(input.data(), want.data(), static_cast<int>(n), mpiType<T>(), mpiOp(c.op),
                  cm.mpi);
  } else {
    for (size_t i = 0; i < n; ++i) want[i] = expectedReduction<T>(c.op, pat, cm.size, i, seed);
  }

  GuardedBuffer send(bytes, shiftFor<T>(seed, 0)), recv(bytes, shiftFor<T>(seed, 1));
  copyBytes(c.inPlace ? recv.data() : send.data(), input.data(), bytes);
  const void* sendPtr = c.inPlace ? recv.data() : send.data();
  if (!checkResult(v, strataAllReduce(sendPtr, recv.data(), n, c.type, c.op, cm.comm, nullptr),
                   cm.comm)) {
    return;
  }
  recv.checkGuards(v, "recvbuff");
  if (!c.inPlace) {
    send.checkGuards(v, "sendbuff");
    compareElements(v, "sendbuff changed", send.as<T>(), input.data(), n, Compare::kBits);
  }
  compareElements(v, "result", recv.as<T>(), want.data(), n, compareFor<T>(c));
}

template <typename T>
void runReduceScatter(const Comm& cm, const Case& c, Reference ref, uint64_t seed, Verdict& v) {
  const size_t n = c.count, total = n * cm.size, mine = n * cm.rank;
  const Pattern pat = patternFor<T>(c);
  std::vector<T> input(total), want(n);
  for (size_t j = 0; j < total; ++j) input[j] = genValue<T>(pat, cm.size, cm.rank, j, seed);
  if (ref == Reference::kMpi) {
    MPI_Reduce_scatter_block(input.data(), want.data(), static_cast<int>(n), mpiType<T>(),
                             mpiOp(c.op), cm.mpi);
  } else {
    for (size_t k = 0; k < n; ++k) {
      want[k] = expectedReduction<T>(c.op, pat, cm.size, mine + k, seed);
    }
  }

  GuardedBuffer send(total * sizeof(T), shiftFor<T>(seed, 0));
  GuardedBuffer recv(n * sizeof(T), shiftFor<T>(seed, 1));
  copyBytes(send.data(), input.data(), total * sizeof(T));
  T* recvPtr = c.inPlace ? send.as<T>() + mine : recv.as<T>();
  if (!checkResult(v, strataReduceScatter(send.data(), recvPtr, n, c.type, c.op, cm.comm, nullptr),
                   cm.comm)) {
    return;
  }
  send.checkGuards(v, "sendbuff");
  if (c.inPlace) {
    compareElements(v, "sendbuff before this rank's block changed", send.as<T>(), input.data(),
                    mine, Compare::kBits);
    compareElements(v, "sendbuff after this rank's block changed", send.as<T>() + mine + n,
                    input.data() + mine + n, total - mine - n, Compare::kBits, mine + n);
  } else {
    recv.checkGuards(v, "recvbuff");
    compareElements(v, "sendbuff changed", send.as<T>(), input.data(), total, Compare::kBits);
  }
  compareElements(v, "result block", recvPtr, want.data(), n, compareFor<T>(c));
}

template <typename T>
void runAllGather(const Comm& cm, const Case& c, Reference ref, uint64_t seed, Verdict& v) {
  const size_t n = c.count, total = n * cm.size, mine = n * cm.rank;
  std::vector<T> input(n), want(total);
  for (size_t k = 0; k < n; ++k) input[k] = genValue<T>(Pattern::kAny, cm.size, cm.rank, k, seed);
  if (ref == Reference::kMpi) {
    MPI_Allgather(input.data(), static_cast<int>(n), mpiType<T>(), want.data(), static_cast<int>(n),
                  mpiType<T>(), cm.mpi);
  } else {
    for (int q = 0; q < cm.size; ++q) {
      for (size_t k = 0; k < n; ++k)
        want[q * n + k] = genValue<T>(Pattern::kAny, cm.size, q, k, seed);
    }
  }

  GuardedBuffer send(n * sizeof(T), shiftFor<T>(seed, 0));
  GuardedBuffer recv(total * sizeof(T), shiftFor<T>(seed, 1));
  copyBytes(c.inPlace ? recv.as<T>() + mine : send.as<T>(), input.data(), n * sizeof(T));
  const T* sendPtr = c.inPlace ? recv.as<T>() + mine : send.as<T>();
  if (!checkResult(v, strataAllGather(sendPtr, recv.data(), n, c.type, cm.comm, nullptr),
                   cm.comm)) {
    return;
  }
  recv.checkGuards(v, "recvbuff");
  if (!c.inPlace) {
    send.checkGuards(v, "sendbuff");
    compareElements(v, "sendbuff changed", send.as<T>(), input.data(), n, Compare::kBits);
  }
  compareElements(v, "result", recv.as<T>(), want.data(), total, Compare::kBits);
}

// ----- Driver ---------------------------------------------------------------------------------

struct Options {
  bool quick = false;
  size_t maxCount = std::numeric_limits<size_t>::max();
  double timeout = 300;
  bool twoComms = false;
  bool verbose = false;
  uint64_t seed = 0;
  std::vector<std::string> colls, types, ops;  // filters; empty: all
};

bool selected(const std::vector<std::string>& filter, const char* name) {
  return filter.empty() || std::find(filter.begin(), filter.end(), name) != filter.end();
}

// Runs cases and records one local verdict per case, in the same order on every rank.
class Runner {
 public:
  Runner(const Options& opt, Watchdog& watchdog, int worldRank)
      : opt_(opt), watchdog_(watchdog), worldRank_(worldRank) {}

  const Options& options() const { return opt_; }
  int worldRank() const { return worldRank_; }

  bool wanted(const Case& c) const {
    return c.count <= opt_.maxCount && selected(opt_.colls, collName(c.coll)) &&
           selected(opt_.types, typeName(c.type)) &&
           (c.coll == Coll::kAllGather || selected(opt_.ops, opName(c.op)));
  }

  void run(const Comm& cm, const Case& c, Reference ref) {
    if (!wanted(c)) return;
    const std::string what =
        describe(c) + " on " + cm.name + (ref == Reference::kMpi ? " vs MPI" : "");
    watchdog_.setStep(what);
    if (opt_.verbose && worldRank_ == 0) std::printf("%s\n", what.c_str());
    Verdict v(worldRank_, what);
    const uint64_t seed = hashString(what) ^ mix(opt_.seed);
    withType(c.type, [&](auto tag) {
      using T = decltype(tag);
      switch (c.coll) {
        case Coll::kAllReduce:
          runAllReduce<T>(cm, c, ref, seed, v);
          break;
        case Coll::kReduceScatter:
          runReduceScatter<T>(cm, c, ref, seed, v);
          break;
        case Coll::kAllGather:
          runAllGather<T>(cm, c, ref, seed, v);
          break;
      }
    });
    record(v.ok());
  }

  // For checks that are not a collective case.
  void check(bool ok, const std::string& what) {
    if (!ok) Verdict(worldRank_, what).fail("check failed");
    record(ok);
  }

  const std::vector<unsigned char>& results() const { return results_; }

 private:
  void record(bool ok) { results_.push_back(ok ? 1 : 0); }

  const Options& opt_;
  Watchdog& watchdog_;
  int worldRank_;
  std::vector<unsigned char> results_;
};

std::vector<size_t> sweepCounts(int nranks, bool quick) {
  const size_t p = static_cast<size_t>(nranks);
  std::vector<size_t> counts =
      quick ? std::vector<size_t>{0, 1, 3, 13, p - 1, p, p + 1, 1021}
            : std::vector<size_t>{0, 1, 2, 3, 7, 13, p - 1, p, p + 1, 1021, 65537};
  std::sort(counts.begin(), counts.end());
  counts.erase(std::unique(counts.begin(), counts.end()), counts.end());
  return counts;
}

// The full sweep: every collective, type, op, count, in place and out of place.
void runMatrix(Runner& runner, const Comm& world) {
  const bool quick = runner.options().quick;
  const std::vector<size_t> counts = sweepCounts(world.size, quick);
  for (Coll coll : {Coll::kAllReduce, Coll::kReduceScatter, Coll::kAllGather}) {
    for (strataDataType_t type : kAllTypes) {
      // In quick mode 65537 elements (pieces at every chunk size) for one type of each width.
      std::vector<size_t> typeCounts = counts;
      if (quick && (type == strataInt8 || type == strataBfloat16 || type == strataFloat32 ||
                    type == strataUint64)) {
        typeCounts.push_back(65537);
      }
      for (strataRedOp_t op : kAllOps) {
        if (coll == Coll::kAllGather && op != strataSum) continue;  // no op: run once
        for (size_t count : typeCounts) {
          for (bool inPlace : {false, true})
            runner.run(world, {coll, type, op, count, inPlace}, Reference::kLocal);
        }
      }
    }
  }
  // About 4 MiB per rank: many pieces at any chunk size, and the bandwidth path.
  const size_t big = (size_t{1} << 20) + 3, bigPerRank = (size_t{1} << 20) / world.size + 3;
  for (bool inPlace : {false, true}) {
    runner.run(world, {Coll::kAllReduce, strataFloat32, strataSum, big, inPlace},
               Reference::kLocal);
    runner.run(world, {Coll::kReduceScatter, strataBfloat16, strataSum, bigPerRank, inPlace},
               Reference::kLocal);
    runner.run(world, {Coll::kAllGather, strataFloat64, strataSum, bigPerRank, inPlace},
               Reference::kLocal);
    if (!quick) {
      runner.run(world, {Coll::kAllReduce, strataInt8, strataMax, big, inPlace}, Reference::kLocal);
    }
  }
}

// The same inputs through plain MPI collectives: the library must agree with them exactly.
void runMpiCrossCheck(Runner& runner, const Comm& world) {
  const size_t p = static_cast<size_t>(world.size);
  const size_t counts[] = {1, p + 1, 1021, 65537};
  int k = 0;
  for (Coll coll : {Coll::kAllReduce, Coll::kReduceScatter, Coll::kAllGather}) {
    for (strataDataType_t type : {strataInt32, strataUint64, strataFloat32, strataFloat64}) {
      for (strataRedOp_t op : {strataSum, strataProd, strataMax, strataMin}) {
        if (coll == Coll::kAllGather && op != strataSum) continue;
        for (size_t count : counts) {
          runner.run(world, {coll, type, op, count, (k++ % 2) == 1}, Reference::kMpi);
        }
      }
    }
  }
}

// Creates a strata communicator over `mpi`; records a failure and returns false if it fails.
bool makeComm(Runner& runner, MPI_Comm mpi, const std::string& name, Comm* out) {
  Comm cm;
  cm.name = name;
  MPI_Comm_rank(mpi, &cm.rank);
  MPI_Comm_size(mpi, &cm.size);
  const strataResult_t rc = strataCommInitMPI(&cm.comm, mpi);
  int count = -1, rank = -1;
  const bool ok = rc == strataSuccess && strataCommCount(cm.comm, &count) == strataSuccess &&
                  strataCommUserRank(cm.comm, &rank) == strataSuccess && count == cm.size &&
                  rank == cm.rank;
  if (rc != strataSuccess) {
    Verdict(runner.worldRank(), "strataCommInitMPI for " + name)
        .fail(std::string(strataGetErrorString(rc)) + ": " + strataGetLastError(nullptr));
  }
  runner.check(ok, "strataCommInitMPI for " + name + ", count " + std::to_string(count) +
                       " and rank " + std::to_string(rank) + " (MPI: " + std::to_string(cm.size) +
                       ", " + std::to_string(cm.rank) + ")");
  *out = cm;
  return rc == strataSuccess;
}

// Three more communicators alive together with `world`: halves of MPI_COMM_WORLD (contiguous
// ranks), its even and odd ranks (strided), and a second one over all ranks. Collectives
// alternate between them, each with its own inputs, so crossed messages or shared state show.
void runTwoComms(Runner& runner, const Comm& world, Watchdog& watchdog) {
  const int rank = world.rank, size = world.size;
  const int halfColor = rank < (size + 1) / 2 ? 0 : 1, parityColor = rank % 2;
  MPI_Comm halfMpi, parityMpi;
  watchdog.setStep("two comms: creating the communicators");
  MPI_Comm_split(MPI_COMM_WORLD, halfColor, rank, &halfMpi);
  MPI_Comm_split(MPI_COMM_WORLD, parityColor, rank, &parityMpi);
  Comm half, parity, world2;
  bool ok = makeComm(runner, halfMpi, "half " + std::to_string(halfColor), &half);
  ok = makeComm(runner, parityMpi, "parity " + std::to_string(parityColor), &parity) && ok;
  ok = makeComm(runner, MPI_COMM_WORLD, "world#2", &world2) && ok;
  // strata duplicates the MPI communicator, so freeing ours must not matter.
  MPI_Comm_free(&halfMpi);
  MPI_Comm_free(&parityMpi);
  half.mpi = parity.mpi = MPI_COMM_NULL;
  int allOk = ok ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &allOk, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  if (!allOk) {  // abort is local: safe even if a peer's init failed
    for (Comm* cm : {&half, &parity, &world2}) {
      if (cm->comm) strataCommAbort(cm->comm);
    }
    return;
  }

  const Case cases[] = {
      {Coll::kAllReduce, strataInt32, strataSum, 0, false},
      {Coll::kReduceScatter, strataFloat32, strataMax, 0, false},
      {Coll::kAllGather, strataFloat16, strataSum, 0, false},
      {Coll::kAllReduce, strataBfloat16, strataAvg, 0, false},
      {Coll::kReduceScatter, strataInt64, strataProd, 0, false},
      {Coll::kAllReduce, strataUint8, strataMin, 0, false},
      {Coll::kAllGather, strataInt8, strataSum, 0, false},
      {Coll::kReduceScatter, strataFloat64, strataAvg, 0, false},
  };
  int k = 0;
  for (Case c : cases) {
    for (size_t count : {size_t{1}, size_t{13}, size_t{1021}}) {
      c.count = count;
      c.inPlace = (k++ % 2) == 1;
      const Comm* const comms[] = {&half, &parity, &world2, &world};
      for (const Comm* cm : comms) runner.run(*cm, c, Reference::kLocal);
    }
  }

  // Destroyed in another order than created; `world` must not notice.
  for (Comm* cm : {&parity, &world2, &half}) {
    watchdog.setStep("strataCommDestroy(" + cm->name + ")");
    const strataResult_t rc = strataCommDestroy(cm->comm);
    runner.check(rc == strataSuccess, "strataCommDestroy(" + cm->name + ") returned " +
                                          std::to_string(rc) + ": " + strataGetLastError(nullptr));
  }
  runner.run(world, {Coll::kAllReduce, strataFloat32, strataSum, 1021, false}, Reference::kLocal);
}

}  // namespace

int main(int argc, char** argv) {
  MPI_Init(&argc, &argv);
  int rank = 0, size = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);

  Options opt;
  CLI::App app{"strata collectives against a local reference and MPI (run under mpiexec)"};
  app.add_flag("--quick", opt.quick, "fewer counts (65537 for one type per width only)");
  app.add_option("--max-count", opt.maxCount, "skip cases with a larger count");
  app.add_option("--timeout", opt.timeout, "seconds before the watchdog fails a hung run")
      ->capture_default_str();
  app.add_flag("--two-comms", opt.twoComms,
               "also run collectives on several live communicators (split MPI_COMM_WORLD); not "
               "with a STRATA_TOPO_FILE, which fits one communicator size");
  app.add_flag("-v,--verbose", opt.verbose, "rank 0 prints every case as it starts");
  app.add_option("--seed", opt.seed, "varies every input")->capture_default_str();
  app.add_option("--coll", opt.colls, "only these collectives")
      ->delimiter(',')
      ->check(CLI::IsMember({"allreduce", "reducescatter", "allgather"}));
  app.add_option("--dtype", opt.types, "only these types")
      ->delimiter(',')
      ->check(CLI::IsMember(
          {"int8", "uint8", "int32", "uint32", "int64", "uint64", "fp16", "fp32", "fp64", "bf16"}));
  app.add_option("--op", opt.ops, "only these ops")
      ->delimiter(',')
      ->check(CLI::IsMember({"sum", "prod", "max", "min", "avg"}));
  try {
    app.parse(argc, argv);
  } catch (const CLI::ParseError& e) {
    const int rc = rank == 0 ? app.exit(e) : e.get_exit_code();
    MPI_Finalize();
    return rc;
  }

  const double start = MPI_Wtime();
  Watchdog watchdog;
  watchdog.start(opt.timeout, "rank " + std::to_string(rank) + " stuck in ", "startup");
  Runner runner(opt, watchdog, rank);
  if (rank == 0) {
    int version = 0;
    strataGetVersion(&version);
    const char* topo = std::getenv("STRATA_TOPO_FILE");
    const char* chunk = std::getenv("STRATA_CHUNK_BYTES");
    std::printf("strata %d, %d ranks, STRATA_TOPO_FILE=%s STRATA_CHUNK_BYTES=%s%s\n", version, size,
                topo ? topo : "", chunk ? chunk : "", opt.quick ? ", quick" : "");
    std::fflush(stdout);
  }

  watchdog.setStep("strataCommInitMPI(MPI_COMM_WORLD)");
  Comm world;
  if (!makeComm(runner, MPI_COMM_WORLD, "world", &world)) {
    // Every rank gets the same result from a failed init, so all of them end here.
    MPI_Finalize();
    return 1;
  }
  world.mpi = MPI_COMM_WORLD;

  runMatrix(runner, world);
  runMpiCrossCheck(runner, world);
  if (opt.twoComms) runTwoComms(runner, world, watchdog);

  watchdog.setStep("strataCommDestroy(world)");
  const strataResult_t rc = strataCommDestroy(world.comm);
  runner.check(rc == strataSuccess, "strataCommDestroy(world) returned " + std::to_string(rc));

  // A case passes when it passed on every rank. Every rank ran the same cases in the same order.
  watchdog.setStep("collecting the results");
  std::vector<unsigned char> results = runner.results();
  int n = static_cast<int>(results.size()), minN = 0, maxN = 0;
  MPI_Allreduce(&n, &minN, 1, MPI_INT, MPI_MIN, MPI_COMM_WORLD);
  MPI_Allreduce(&n, &maxN, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  int passed = 0, failed = 0;
  if (minN != maxN) {
    if (rank == 0) std::printf("ranks ran different numbers of cases (%d..%d)\n", minN, maxN);
    failed = 1;
  } else {
    MPI_Allreduce(MPI_IN_PLACE, results.data(), n, MPI_UNSIGNED_CHAR, MPI_MIN, MPI_COMM_WORLD);
    for (unsigned char r : results) (r ? passed : failed)++;
  }
  if (rank == 0) {
    std::printf("%d passed, %d failed (%d ranks, %.1f s)\n", passed, failed, size,
                MPI_Wtime() - start);
    std::fflush(stdout);
  }
  watchdog.setStep("MPI_Finalize");
  MPI_Finalize();
  return failed == 0 ? 0 : 1;
}
