#include "fabrics/shm/shm_fabric.h"

#include <algorithm>
#include <cstring>
#include <new>
#include <string>
#include <vector>

#include "bootstrap/mpi_bootstrap.h"
#include "common/buffer.h"
#include "common/datatype.h"
#include "common/log.h"
#include "common/mpi_check.h"
#include "common/reduce.h"
#include "fabrics/mpi/mpi_fabric.h"
#include "fabrics/shm/shm_barrier.h"

// Protocol. Every operation on a piece ("round") uses one of the two slot buffers, alternating
// (round k uses buffer k % 2), and has at least one barrier (a direct allreduce, too). Within a
// round, writes to the shared buffers happen before a barrier and the reads they feed after it.
// Across rounds: a rank writes buffer b in round k only after leaving a barrier of round k-1, which
// every rank reached only after finishing round k-2 (the last use of b), reads included. So no rank
// overwrites what another still reads, with one barrier per round for reduce-scatter and
// all-gather and two for allreduce (whose reduced shards are read back by everyone).
//
// Layout of the window: member 0's segment starts with the barrier state; every member's
// segment then holds its two slots, 64-byte aligned.

namespace strata::fabric {
namespace {

constexpr size_t kHeader = sizeof(ShmBarrierState) > 64 ? sizeof(ShmBarrierState) : 64;
constexpr size_t kAlign = 64;
// Allreduces up to this size take the one-barrier path (allReduceDirect). Keep in step with
// the cost model (decompose/cost_model.cc, kShmDirectBytes).
constexpr size_t kDirectBytes = 16 << 10;
// Between blocks of this many bytes a copy or reduction lets the pipeline's other fabric
// progress (IdleHook): a 256 KiB block takes ~20-50 us, well under a network message's time.
constexpr size_t kIdleBlockBytes = 256 << 10;

void copy(void* dst, const void* src, size_t bytes) {
  for (size_t off = 0; off < bytes; off += kIdleBlockBytes) {
    std::memcpy(static_cast<char*>(dst) + off, static_cast<const char*>(src) + off,
                std::min(kIdleBlockBytes, bytes - off));
    IdleHook::idle();
  }
}

class ShmFabric final : public Fabric {
 public:
  ShmFabric(MPI_Comm comm, int rank, int size, size_t slotBytes, std::unique_ptr<Fabric> mpi)
      : mpi_(std::move(mpi)),
        comm_(comm),
        rank_(rank),
        size_(size),
        slotBytes_(slotBytes),
        slots_(2 * size),
        srcs_(size),
        blockSrcs_(size),
        pos_(size + 1) {}

  // MPI_Win_free is collective: an abandoned fabric leaves its window to MPI's own cleanup
  // rather than wait for members that may never free theirs.
  ~ShmFabric() override {
    if (win_ != MPI_WIN_NULL && !abandoned_) MPI_Win_free(&win_);
  }
  void abandon() override {
    abandoned_ = true;
    mpi_->abandon();
  }

  Status init() {
    const size_t mine = (rank_ == 0 ? kHeader : 0) + 2 * slotBytes_;
    MPI_Info info;
    STRATA_MPI_CHECK(MPI_Info_create(&info));
    // Each member's segment on its own pages (first touch by its owner), not one block.
    MPI_Info_set(info, "alloc_shared_noncontig", "true");
    void* base = nullptr;
    const int rc =
        MPI_Win_allocate_shared(static_cast<MPI_Aint>(mine), 1, info, comm_, &base, &win_);
    MPI_Info_free(&info);
    STRATA_MPI_CHECK(rc);
    for (int j = 0; j < size_; ++j) {
      MPI_Aint bytes = 0;
      int disp = 0;
      void* seg = nullptr;
      STRATA_MPI_CHECK(MPI_Win_shared_query(win_, j, &bytes, &disp, &seg));
      char* p = static_cast<char*>(seg);
      if (j == 0) {
        barrier_ = reinterpret_cast<ShmBarrierState*>(p);
        p += kHeader;
      }
      slots_[2 * j] = p;
      slots_[2 * j + 1] = p + slotBytes_;
    }
    if (rank_ == 0) new (barrier_) ShmBarrierState();
    STRATA_MPI_CHECK(MPI_Barrier(comm_));  // the barrier state exists before anyone uses it
    return Status::ok();
  }

  const char* name() const override { return "shm"; }
  int size() const override { return size_; }
  int rank() const override { return rank_; }

  Status allReduce(const void* in, void* out, size_t count, strataDataType_t type,
                   strataRedOp_t op) override {
    const size_t ts = dataTypeSize(type);
    if (count * ts <= kDirectBytes) return allReduceDirect(in, out, count, type, op);
    const size_t cap = slotBytes_ / ts;
    for (size_t off = 0; off < count; off += cap) {
      const size_t n = std::min(cap, count - off);
      const int b = nextBuffer();
      copy(slot(rank_, b), at(in, off, ts), n * ts);
      sync();
      // My shard, with boundaries on cache lines so no two ranks write one line of slot 0.
      const size_t lo = shardStart(rank_, n, ts), hi = shardStart(rank_ + 1, n, ts);
      if (hi > lo) {
        for (int j = 0; j < size_; ++j) srcs_[j] = at(slot(j, b), lo, ts);
        reduce(at(slot(0, b), lo, ts), hi - lo, type, op);
      }
      sync();
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
    sync();
    for (int j = 0; j < size_; ++j) srcs_[j] = slot(j, b);
    reduceMany(out, srcs_.data(), size_, count, type, op);
    return Status::ok();
  }

  // The rooted operations and point-to-point go through MPI on the group's communicator (its
  // shared-memory transport): a broadcast of weights or a reduce to one rank is rare next to
  // the allreduces, reduce-scatters and all-gathers the slots serve.
  Status broadcast(const void* in, void* out, size_t count, strataDataType_t type,
                   int root) override {
    return mpi_->broadcast(in, out, count, type, root);
  }
  Status reduce(const void* in, void* out, size_t count, strataDataType_t type, strataRedOp_t op,
                int root) override {
    return mpi_->reduce(in, out, count, type, op, root);
  }
  Status scatter(const void* in, void* out, const size_t* counts, const size_t* displs,
                 strataDataType_t type, int root) override {
    return mpi_->scatter(in, out, counts, displs, type, root);
  }
  Status gather(const void* in, void* out, const size_t* counts, const size_t* displs,
                strataDataType_t type, int root) override {
    return mpi_->gather(in, out, counts, displs, type, root);
  }
  Status exchange(const PeerOp* ops, size_t n) override { return mpi_->exchange(ops, n); }

  // Pieces take the same fraction of every block: round c of K holds elements
  // [counts[j]*c/K, counts[j]*(c+1)/K) of block j, packed in member order.
  Status reduceScatter(const void* in, void* out, const size_t* counts, const size_t* displs,
                       strataDataType_t type, strataRedOp_t op) override {
    const size_t ts = dataTypeSize(type);
    const size_t rounds = roundsFor(counts, ts);
    for (size_t c = 0; c < rounds; ++c) {
      const int b = nextBuffer();
      layout(counts, c, rounds);
      for (int j = 0; j < size_; ++j) {
        copy(at(slot(rank_, b), pos_[j], ts), at(in, displs[j] + first(counts[j], c, rounds), ts),
             (pos_[j + 1] - pos_[j]) * ts);
      }
      sync();
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
    const size_t rounds = roundsFor(counts, ts);
    for (size_t c = 0; c < rounds; ++c) {
      const int b = nextBuffer();
      layout(counts, c, rounds);
      copy(at(slot(0, b), pos_[rank_], ts), at(in, first(counts[rank_], c, rounds), ts),
           (pos_[rank_ + 1] - pos_[rank_]) * ts);
      sync();
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
  void sync() { shmBarrier(*barrier_, size_); }

  size_t shardStart(int member, size_t n, size_t ts) const {
    if (member >= size_) return n;
    const size_t line = std::max<size_t>(1, kAlign / ts);
    const size_t x = n * static_cast<size_t>(member) / static_cast<size_t>(size_);
    return x / line * line;
  }

  // Rounds so that one round's pieces fit a slot: a round holds at most total/K + p elements
  // (each block's piece is its share rounded up by at most one).
  size_t roundsFor(const size_t* counts, size_t ts) const {
    size_t total = 0;
    for (int j = 0; j < size_; ++j) total += counts[j];
    const size_t cap = slotBytes_ / ts - static_cast<size_t>(size_);  // slotBytes >> p * ts
    return total == 0 ? 0 : (total + cap - 1) / cap;
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

  std::unique_ptr<Fabric> mpi_;  // the rooted operations and point-to-point
  MPI_Comm comm_;                // the group's bootstrap's
  int rank_, size_;
  size_t slotBytes_;
  MPI_Win win_ = MPI_WIN_NULL;
  ShmBarrierState* barrier_ = nullptr;
  bool abandoned_ = false;
  std::vector<char*> slots_;                   // [2 * member + buffer]
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
  const MPI_Comm group = boot::mpiCommOf(b);
  if (group == MPI_COMM_NULL) return invalidArgument("fabric shm needs an MPI control plane");
  const int rank = b.rank(), size = b.size();
  int local = 0;
  size_t slotBytes = options.shmSlotBytes;
  MPI_Comm node = MPI_COMM_NULL;
  STRATA_MPI_CHECK(MPI_Comm_split_type(group, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node));
  MPI_Comm_size(node, &local);
  MPI_Comm_free(&node);
  if (local != size) {
    return invalidArgument("shm fabric: the group's " + std::to_string(size) +
                           " ranks do not all share memory (" + std::to_string(local) +
                           " of them share this rank's host); use fabric mpi for this level");
  }
  slotBytes = std::max<size_t>(slotBytes, 64 * 1024) / kAlign * kAlign;
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<Fabric> mpi, createMpiFabric(b, nullptr, options));
  auto f = std::make_unique<ShmFabric>(group, rank, size, slotBytes, std::move(mpi));
  STRATA_RETURN_IF_ERROR(f->init());
  STRATA_TRACE(kSubsysFabric, "shm fabric: %d members, 2 slots of %zu bytes each", size, slotBytes);
  return std::unique_ptr<Fabric>(std::move(f));
}

}  // namespace strata::fabric
