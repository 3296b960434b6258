// Cases, inputs, reference and checking for the MPI tests: what a case is, the deterministic
// per-(case, rank, index) inputs, the locally computed expected results, and the verdict, element
// comparison and guarded buffers that check what the library wrote.
#pragma once

#include <mpi.h>

#include <algorithm>
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <limits>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "mpi/collective_types.h"
#include "strata/strata_mpi.h"

namespace strata_test {

// ----- Cases ----------------------------------------------------------------------------------

enum class Coll { kAllReduce, kReduceScatter, kAllGather, kBroadcast, kReduce };

inline const char* collName(Coll c) {
  switch (c) {
    case Coll::kAllReduce:
      return "allreduce";
    case Coll::kReduceScatter:
      return "reducescatter";
    case Coll::kAllGather:
      return "allgather";
    case Coll::kBroadcast:
      return "broadcast";
    case Coll::kReduce:
      return "reduce";
  }
  return "?";
}

inline bool hasOp(Coll c) { return c != Coll::kAllGather && c != Coll::kBroadcast; }
inline bool rooted(Coll c) { return c == Coll::kBroadcast || c == Coll::kReduce; }

// How a rooted case passes the buffers the root alone uses (broadcast's sendbuff, reduce's
// recvbuff) on the other ranks.
enum class Others {
  kBuffer,  // a real buffer, which the library must leave as it was
  kNull,    // NULL, which the API allows there
  kBcast,   // broadcast through strataBcast (in place by definition)
};

struct Case {
  Coll coll;
  strataDataType_t type;
  strataRedOp_t op;  // ignored by all-gather and broadcast
  size_t count;      // all-reduce, broadcast, reduce: count; reduce-scatter: recvcount;
                     // all-gather: sendcount
  bool inPlace;
  int root = 0;  // broadcast and reduce; negative counts from the end (-1: the last rank)
  Others others = Others::kBuffer;
};

// A negative root counted from the end of a communicator of `size` ranks.
inline int resolveRoot(int root, int size) { return root < 0 ? size + root : root; }

inline std::string describe(const Case& c) {
  std::string s = std::string(collName(c.coll)) + " " + typeName(c.type);
  if (hasOp(c.coll)) s += std::string(" ") + opName(c.op);
  s += " count=" + std::to_string(c.count) + (c.inPlace ? " in-place" : " out-of-place");
  if (!rooted(c.coll)) return s;
  s += " root=" + std::to_string(c.root);
  if (c.others == Others::kNull) {
    s += c.coll == Coll::kBroadcast ? " sendbuff=NULL elsewhere" : " recvbuff=NULL elsewhere";
  }
  if (c.others == Others::kBcast) s += " (strataBcast)";
  return s;
}

// A communicator under test.
struct Comm {
  strataComm_t comm = nullptr;
  MPI_Comm mpi = MPI_COMM_NULL;  // its MPI twin, for the MPI reference; may be null
  int rank = 0, size = 0;
  std::string name;
};

// A communicator's Comm description from strata's own answers; `mpi`: its MPI twin, if any.
inline Comm commOf(strataComm_t comm, MPI_Comm mpi, const std::string& name) {
  Comm cm;
  cm.comm = comm;
  cm.mpi = mpi;
  cm.name = name;
  strataCommUserRank(comm, &cm.rank);
  strataCommCount(comm, &cm.size);
  return cm;
}

enum class Reference { kLocal, kMpi };

// ----- Inputs ---------------------------------------------------------------------------------

inline uint64_t mix(uint64_t x) {  // splitmix64's finaliser
  x += 0x9e3779b97f4a7c15ull;
  x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
  x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
  return x ^ (x >> 31);
}

inline uint64_t hashString(const std::string& s) {  // FNV-1a
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
  if (!hasOp(c.coll) || c.op == strataMax || c.op == strataMin) return Pattern::kAny;
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
inline std::atomic<int> g_printedFailures{0};  // threads of one rank may fail cases at once

// Collects the failures of one case on this rank and prints them with the case description.
class Verdict {
 public:
  Verdict(int worldRank, std::string what) : worldRank_(worldRank), what_(std::move(what)) {}

  void fail(const std::string& why) {
    ok_ = false;
    const int printed = g_printedFailures++;
    if (printed < kMaxPrintedFailures) {
      std::fprintf(stderr, "FAIL rank %d: %s: %s\n", worldRank_, what_.c_str(), why.c_str());
    } else if (printed == kMaxPrintedFailures) {
      std::fprintf(stderr, "rank %d: further failures are counted, not printed\n", worldRank_);
    }
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
  if (!hasOp(c.coll)) return Compare::kBits;
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
    std::memset(data(), kSentinel, bytes);
  }

  static constexpr unsigned char kSentinel = 0xc3;  // the data region before any write

  unsigned char* data() { return storage_.data() + front_; }
  template <typename T>
  T* as() {
    return reinterpret_cast<T*>(data());
  }

  // The data region still holds the sentinel it was built with: nothing wrote it.
  void checkUnwritten(Verdict& v, const char* name) const {
    for (size_t j = 0; j < bytes_; ++j) {
      if (storage_[front_ + j] != kSentinel) {
        v.fail(std::string("wrote ") + name + " (byte " + std::to_string(j) + " of " +
               std::to_string(bytes_) + "), which it must leave alone");
        return;
      }
    }
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

inline void copyBytes(void* dst, const void* src, size_t bytes) {
  if (bytes) std::memcpy(dst, src, bytes);
}

inline bool checkResult(Verdict& v, strataResult_t rc, strataComm_t comm) {
  if (rc == strataSuccess) return true;
  v.fail("returned " + std::to_string(rc) + " (" + strataGetErrorString(rc) +
         "): " + strataGetLastError(comm));
  return false;
}

}  // namespace strata_test
