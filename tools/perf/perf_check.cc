// strata-perf's check around one call (perf_check.h).
#include "perf_check.h"

#include <algorithm>
#include <cstring>

namespace strata::tools {
namespace {

constexpr unsigned char kPoison = 0xA5;  // an output byte no check pattern produces

// The poisoned elements of buf (n of them) that are no longer poisoned: a reduce's receive
// buffer off the root must stay as it was.
size_t unpoisoned(const unsigned char* buf, size_t n, size_t typeSize) {
  size_t bad = 0;
  for (size_t i = 0; i < n; ++i) {
    const unsigned char* e = buf + i * typeSize;
    bad += std::any_of(e, e + typeSize, [](unsigned char b) { return b != kPoison; });
  }
  return bad;
}

}  // namespace

void PerfCheck::prepare(Placement p, const Geometry& g, unsigned char* send,
                        unsigned char* recv) const {
  const size_t ts = typeSize_;
  const size_t shift = static_cast<size_t>(rank_) * g.count * ts;
  switch (coll_) {
    case Collective::kAllReduce:
    case Collective::kReduceScatter:
    case Collective::kReduce:
      if (p == kOutOfPlace) {
        pattern_.fill(rank_, send, 0, g.sendCount);
        std::memset(recv, kPoison, g.recvCount * ts);
      } else {
        pattern_.fill(rank_, recv, 0, g.sendCount);
      }
      break;
    case Collective::kAllGather:
      std::memset(recv, kPoison, g.recvCount * ts);
      pattern_.fill(rank_, p == kOutOfPlace ? send : recv + shift, 0, g.sendCount);
      break;
    case Collective::kBroadcast:
      // Every rank's send buffer holds its own input, so a broadcast from the wrong rank shows.
      std::memset(recv, kPoison, g.recvCount * ts);
      if (p == kOutOfPlace) {
        pattern_.fill(rank_, send, 0, g.sendCount);
      } else if (rank_ == root_) {
        pattern_.fill(rank_, recv, 0, g.sendCount);
      }
      break;
    default:
      break;
  }
}

long long PerfCheck::wrongIn(Impl impl, Placement p, const Geometry& g,
                             const unsigned char* recv) const {
  const size_t shift = static_cast<size_t>(rank_) * g.count;
  size_t wrong = 0;
  switch (coll_) {
    case Collective::kAllReduce:
      wrong = pattern_.wrongReduced(recv, 0, g.count);
      break;
    case Collective::kReduceScatter: {
      // strata in place leaves block `rank` where it was; MPI in place, at the start.
      const bool atShift = p == kInPlace && impl != kVs;
      const unsigned char* out = atShift ? recv + shift * typeSize_ : recv;
      wrong = pattern_.wrongReduced(out, shift, g.count);
      break;
    }
    case Collective::kAllGather:
      wrong = pattern_.wrongGathered(recv, g.count);
      break;
    case Collective::kBroadcast:
      wrong = pattern_.wrongBroadcast(recv, root_, g.count);
      break;
    case Collective::kReduce:
      // The root has the result; out of place, the others' receive buffers are not written.
      if (rank_ == root_) {
        wrong = pattern_.wrongReduced(recv, 0, g.count);
      } else if (p == kOutOfPlace) {
        wrong = unpoisoned(recv, g.count, typeSize_);
      }
      break;
    default:
      break;
  }
  return static_cast<long long>(wrong);
}

}  // namespace strata::tools
