#include "fabrics/shm/shm_fabric.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "common/buffer.h"
#include "common/datatype.h"
#include "common/log.h"
#include "common/reduce.h"
#include "fabrics/registry.h"
#include "fabrics/shm/shm_barrier.h"
#include "fabrics/shm/shm_segment.h"

// Protocol. Every operation on a piece ("round") uses one of the two slot buffers, alternating
// (round k uses buffer k % 2), and has at least one barrier (a direct allreduce, too). Within a
// round, writes to the shared buffers happen before a barrier and the reads they feed after it.
// Across rounds: a rank writes buffer b in round k only after leaving a barrier of round k-1, which
// every rank reached only after finishing round k-2 (the last use of b), reads included. So no rank
// overwrites what another still reads, with one barrier per round for reduce-scatter and
// all-gather and two for allreduce (whose reduced shards are read back by everyone).
//
// Every barrier also publishes the member's call (shm_barrier.h): after it, a member whose call
// differs from another's (count, type, op, operation, per-member counts) fails the call on every
// member with strataInvalidUsage before anyone reads another member's slot, instead of reducing
// mismatched ranges into a silent wrong answer.
//
// The segment is strata's own POSIX shared memory (shm_segment.h), not an MPI window: mapping
// and unmapping it is local, so strataCommAbort never waits on a peer, and its name is unlinked
// as soon as every member has mapped it, so /dev/shm holds nothing of strata's after init,
// whatever happens to the job later. Layout (every part page-aligned, so each member's slots are
// on pages of its own, first touched by their owner): the members' lines (ShmMemberLine, two
// cache lines each), then member j's two slots.

namespace strata::fabric {
namespace {

constexpr size_t kAlign = 64;
constexpr size_t kPage = 4096;
// Allreduces up to this size take the one-barrier path (allReduceDirect). Keep in step with
// the cost model (decompose/cost_model.cc, kShmDirectBytes).
constexpr size_t kDirectBytes = 16 << 10;
// Between blocks of this many bytes a copy or reduction lets the pipeline's other fabric
// progress (IdleHook): a 256 KiB block takes ~20-50 us, well under a network message's time.
constexpr size_t kIdleBlockBytes = 256 << 10;

// ShmCall::kind.
enum : uint32_t {
  kOpAllReduce = 1,
  kOpReduceScatter = 2,
  kOpAllGather = 3,
  kOpBroadcast = 4,
  kOpReduce = 5,
  kOpScatter = 6,
  kOpGather = 7
};

size_t roundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

void copy(void* dst, const void* src, size_t bytes) {
  for (size_t off = 0; off < bytes; off += kIdleBlockBytes) {
    std::memcpy(static_cast<char*>(dst) + off, static_cast<const char*>(src) + off,
                std::min(kIdleBlockBytes, bytes - off));
    IdleHook::idle();
  }
}

std::string describe(const ShmCall& c) {
  static const char* const kinds[] = {"?",         "allreduce", "reduce-scatter", "all-gather",
                                      "broadcast", "reduce",    "scatter",        "gather"};
  std::string s = kinds[c.kind <= kOpGather ? c.kind : 0];
  s += " of " + std::to_string(c.count) + " " + dataTypeName(static_cast<strataDataType_t>(c.type));
  if (c.kind == kOpAllReduce || c.kind == kOpReduceScatter || c.kind == kOpReduce) {
    s += std::string(" (") + redOpName(static_cast<strataRedOp_t>(c.op)) + ")";
  }
  if (c.root >= 0) s += " from root " + std::to_string(c.root);
  return s;
}

uint64_t hashCounts(const size_t* counts, int n) {
  uint64_t h = 1469598103934665603ull;  // FNV-1a over the counts
  for (int j = 0; j < n; ++j) {
    h = (h ^ static_cast<uint64_t>(counts[j])) * 1099511628211ull;
  }
  return h | 1;  // never 0 (0 means "no per-member counts")
}

class ShmFabric final : public Fabric {
 public:
  ShmFabric(int rank, int size, size_t slotBytes, std::unique_ptr<Fabric> p2p)
      : p2p_(std::move(p2p)),
        rank_(rank),
        size_(size),
        slotBytes_(slotBytes),
        slots_(2 * size),
        srcs_(size),
        blockSrcs_(size),
        pos_(size + 1) {}

  // Unmapping is local: nothing here waits on a peer, abandoned or not.
  ~ShmFabric() override = default;
  void abandon() override { p2p_->abandon(); }
  void retire() override { p2p_->retire(); }

  // Collective over `b`: maps the group's segment.
  Status init(boot::Bootstrap& b) {
    const size_t header = roundUp(sizeof(ShmMemberLine) * static_cast<size_t>(size_), kPage);
    const size_t perMember = roundUp(2 * slotBytes_, kPage);
    STRATA_ASSIGN_OR_RETURN(segment_,
                            ShmSegment::create(b, header + perMember * static_cast<size_t>(size_)));
    char* base = static_cast<char*>(segment_.data());
    lines_ = reinterpret_cast<ShmMemberLine*>(base);
    // Fresh tmpfs pages read as zero: every epoch starts at 0 (ShmMemberLine's own initial
    // state), with no constructor run that could race with a member already waiting.
    for (int j = 0; j < size_; ++j) {
      char* p = base + header + perMember * static_cast<size_t>(j);
      slots_[2 * j] = p;
      slots_[2 * j + 1] = p + slotBytes_;
    }
    return Status::ok();
  }

  const char* name() const override { return "shm"; }
  int size() const override { return size_; }
  int rank() const override { return rank_; }

  Status allReduce(const void* in, void* out, size_t count, strataDataType_t type,
                   strataRedOp_t op) override {
    const size_t ts = dataTypeSize(type);
    call_ =
        ShmCall{kOpAllReduce, static_cast<uint32_t>(type), static_cast<uint32_t>(op), -1, count, 0};
    if (count * ts <= kDirectBytes) return allReduceDirect(in, out, count, type, op);
    const size_t cap = slotBytes_ / ts;
    for (size_t off = 0; off < count; off += cap) {
      const size_t n = std::min(cap, count - off);
      const int b = nextBuffer();
      copy(slot(rank_, b), at(in, off, ts), n * ts);
      STRATA_RETURN_IF_ERROR(sync());
      // My shard, with boundaries on cache lines so no two ranks write one line of slot 0.
      const size_t lo = shardStart(rank_, n, ts), hi = shardStart(rank_ + 1, n, ts);
      if (hi > lo) {
        for (int j = 0; j < size_; ++j) srcs_[j] = at(slot(j, b), lo, ts);
        reduce(at(slot(0, b), lo, ts), hi - lo, type, op);
      }
      STRATA_RETURN_IF_ERROR(sync());
      copy(at(out, off, ts), slot(0, b), n * ts);
    }
    return Status::ok();
  }

  // Small calls: one barrier instead of two. Every member reduces the whole range from all
  // slots straight into its own output (p times the arithmetic, which is nothing at this size).
  // Same order of combination on every member, so every member gets the same bits.
  Status allReduceDirect(const void* in, void* out, size_t count, strataDataType_t type,
                         strataRedOp_t op) {
    const int b = nextBuffer();
    const size_t bytes = count * dataTypeSize(type);
    std::memcpy(slot(rank_, b), in, bytes);
    STRATA_RETURN_IF_ERROR(sync());
    for (int j = 0; j < size_; ++j) srcs_[j] = slot(j, b);
    reduceMany(out, srcs_.data(), size_, count, type, op);
    return Status::ok();
  }

  // The rooted operations and point-to-point go through the partner fabric (mpi on the group's
  // communicator, or ucx: STRATA_NET, registry.h's netFabric), over its shared-memory
  // transport: a broadcast of weights or a reduce to one rank is rare next to the allreduces,
  // reduce-scatters and all-gathers the slots serve.
  // Each first passes one shm barrier that publishes the call: the partner cannot tell members
  // that disagree on the root (each would move data from its own idea of it, and succeed), the
  // barrier can. One barrier is ~1 us next to the partner's call.
  Status broadcast(const void* in, void* out, size_t count, strataDataType_t type,
                   int root) override {
    STRATA_RETURN_IF_ERROR(agreeRooted(kOpBroadcast, type, 0, root, count, 0));
    return p2p_->broadcast(in, out, count, type, root);
  }
  Status reduce(const void* in, void* out, size_t count, strataDataType_t type, strataRedOp_t op,
                int root) override {
    STRATA_RETURN_IF_ERROR(agreeRooted(kOpReduce, type, op, root, count, 0));
    return p2p_->reduce(in, out, count, type, op, root);
  }
  Status scatter(const void* in, void* out, const size_t* counts, const size_t* displs,
                 strataDataType_t type, int root) override {
    STRATA_RETURN_IF_ERROR(
        agreeRooted(kOpScatter, type, 0, root, total(counts), hashCounts(counts, size_)));
    return p2p_->scatter(in, out, counts, displs, type, root);
  }
  Status gather(const void* in, void* out, const size_t* counts, const size_t* displs,
                strataDataType_t type, int root) override {
    STRATA_RETURN_IF_ERROR(
        agreeRooted(kOpGather, type, 0, root, total(counts), hashCounts(counts, size_)));
    return p2p_->gather(in, out, counts, displs, type, root);
  }
  Status exchange(const PeerOp* ops, size_t n) override { return p2p_->exchange(ops, n); }

  // Pieces take the same fraction of every block: round c of K holds elements
  // [counts[j]*c/K, counts[j]*(c+1)/K) of block j, packed in member order.
  Status reduceScatter(const void* in, void* out, const size_t* counts, const size_t* displs,
                       strataDataType_t type, strataRedOp_t op) override {
    const size_t ts = dataTypeSize(type);
    call_ = ShmCall{kOpReduceScatter, static_cast<uint32_t>(type), static_cast<uint32_t>(op), -1,
                    total(counts),    hashCounts(counts, size_)};
    const size_t rounds = roundsFor(counts, ts);
    for (size_t c = 0; c < rounds; ++c) {
      const int b = nextBuffer();
      layout(counts, c, rounds);
      for (int j = 0; j < size_; ++j) {
        copy(at(slot(rank_, b), pos_[j], ts), at(in, displs[j] + first(counts[j], c, rounds), ts),
             (pos_[j + 1] - pos_[j]) * ts);
      }
      STRATA_RETURN_IF_ERROR(sync());
      const size_t n = pos_[rank_ + 1] - pos_[rank_];
      if (n == 0) continue;
      for (int j = 0; j < size_; ++j) srcs_[j] = at(slot(j, b), pos_[rank_], ts);
      reduce(at(out, first(counts[rank_], c, rounds), ts), n, type, op);
    }
    return Status::ok();
  }

  Status allGather(const void* in, void* out, const size_t* counts, const size_t* displs,
                   strataDataType_t type) override {
    const size_t ts = dataTypeSize(type);
    call_ = ShmCall{kOpAllGather,  static_cast<uint32_t>(type), 0, -1,
                    total(counts), hashCounts(counts, size_)};
    const size_t rounds = roundsFor(counts, ts);
    for (size_t c = 0; c < rounds; ++c) {
      const int b = nextBuffer();
      layout(counts, c, rounds);
      copy(at(slot(0, b), pos_[rank_], ts), at(in, first(counts[rank_], c, rounds), ts),
           (pos_[rank_ + 1] - pos_[rank_]) * ts);
      STRATA_RETURN_IF_ERROR(sync());
      for (int j = 0; j < size_; ++j) {
        // In place, my own block already holds these bytes: skip the copy onto itself.
        char* dst = at(out, displs[j] + first(counts[j], c, rounds), ts);
        if (j == rank_ && dst == at(in, first(counts[j], c, rounds), ts)) continue;
        copy(dst, at(slot(0, b), pos_[j], ts), (pos_[j + 1] - pos_[j]) * ts);
      }
    }
    return Status::ok();
  }

 private:
  char* slot(int member, int buffer) { return slots_[2 * member + buffer]; }

  // dst = the reduction of srcs_[0..size_) (set by the caller), n elements, in idle blocks.
  void reduce(void* dst, size_t n, strataDataType_t type, strataRedOp_t op) {
    const size_t ts = dataTypeSize(type);
    const size_t block = std::max<size_t>(1, kIdleBlockBytes / ts);
    for (size_t off = 0; off < n; off += block) {
      const size_t m = std::min(block, n - off);
      for (int j = 0; j < size_; ++j) blockSrcs_[j] = at(srcs_[j], off, ts);
      reduceMany(at(dst, off, ts), blockSrcs_.data(), size_, m, type, op);
      IdleHook::idle();
    }
  }
  int nextBuffer() { return static_cast<int>(round_++ & 1); }
  Status agreeRooted(uint32_t kind, strataDataType_t type, int op, int root, size_t count,
                     uint64_t shape) {
    call_ =
        ShmCall{kind, static_cast<uint32_t>(type), static_cast<uint32_t>(op), root, count, shape};
    return sync();
  }
  // A barrier that also checks that every member is in the same call (shm_barrier.h).
  Status sync() {
    const uint64_t epoch = ++epoch_;
    STRATA_RETURN_IF_ERROR(shmBarrier(lines_, size_, rank_, epoch, call_));
    const int j = shmFirstDiffering(lines_, size_, epoch, call_);
    if (j < 0) return Status::ok();
    const ShmCall theirs = lines_[j].call[epoch & 1];
    return invalidUsage("the ranks disagree on a collective (shm fabric, barrier " +
                        std::to_string(epoch) + "): member " + std::to_string(j) + " runs " +
                        describe(theirs) + ", member " + std::to_string(rank_) + " runs " +
                        describe(call_) +
                        (theirs.shape != call_.shape ? " (with other per-member counts)" : "") +
                        "; every rank must make the same calls");
  }
  size_t total(const size_t* counts) const {
    size_t t = 0;
    for (int j = 0; j < size_; ++j) t += counts[j];
    return t;
  }

  size_t shardStart(int member, size_t n, size_t ts) const {
    if (member >= size_) return n;
    const size_t line = std::max<size_t>(1, kAlign / ts);
    const size_t x = n * static_cast<size_t>(member) / static_cast<size_t>(size_);
    return x / line * line;
  }

  // Rounds so that one round's pieces fit a slot: a round holds at most total/K + p elements
  // (each block's piece is its share rounded up by at most one).
  size_t roundsFor(const size_t* counts, size_t ts) const {
    const size_t all = total(counts);
    const size_t cap = slotBytes_ / ts - static_cast<size_t>(size_);  // slotBytes >> p * ts
    return all == 0 ? 0 : (all + cap - 1) / cap;
  }
  static size_t first(size_t count, size_t c, size_t rounds) {
    // floor(count * c / rounds) without overflowing: (count % rounds) * c < rounds^2.
    return count / rounds * c + count % rounds * c / rounds;
  }
  // pos_[j]: where block j's piece of round c starts in a slot; pos_[p] is the round's total.
  void layout(const size_t* counts, size_t c, size_t rounds) {
    pos_[0] = 0;
    for (int j = 0; j < size_; ++j) {
      pos_[j + 1] = pos_[j] + first(counts[j], c + 1, rounds) - first(counts[j], c, rounds);
    }
  }

  std::unique_ptr<Fabric> p2p_;  // the rooted operations and point-to-point (mpi or ucx)
  int rank_, size_;
  size_t slotBytes_;
  ShmSegment segment_;              // the mapping; unmapped (locally) with the fabric
  ShmMemberLine* lines_ = nullptr;  // every member's line, at the segment's start
  ShmCall call_;                    // the call this member is in, published at each barrier
  uint64_t epoch_ = 0;              // barriers so far
  std::vector<char*> slots_;        // [2 * member + buffer]
  std::vector<const void*> srcs_, blockSrcs_;  // reused: no allocation per call
  std::vector<size_t> pos_;
  uint64_t round_ = 0;
};

}  // namespace

FabricTraits shmTraits() {
  FabricTraits t;
  t.name = "shm";
  t.memory = MemoryKind::kHost;
  t.sameHost = true;
  t.cost = CostStyle::kSharedSlots;
  return t;
}

StatusOr<std::unique_ptr<Fabric>> createShmFabric(boot::Bootstrap& b, Fabric*,
                                                  const FabricOptions& options) {
  const int rank = b.rank(), size = b.size();
  const size_t slotBytes = std::max<size_t>(options.shmSlotBytes, 64 * 1024) / kAlign * kAlign;
  // The partner follows STRATA_NET (and is ucx on a control plane that is not MPI): with
  // STRATA_NET=ucx no strata data goes through MPI, and the shm+ucx pairing that non-MPI
  // communicators need is what mpirun tests exercise too.
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<Fabric> p2p,
                          createFabric(netFabric(b, options.net), b, options));
  auto f = std::make_unique<ShmFabric>(rank, size, slotBytes, std::move(p2p));
  STRATA_RETURN_IF_ERROR(f->init(b));
  STRATA_TRACE(kSubsysFabric, "shm fabric: %d members, 2 slots of %zu bytes each", size, slotBytes);
  return std::unique_ptr<Fabric>(std::move(f));
}

}  // namespace strata::fabric
