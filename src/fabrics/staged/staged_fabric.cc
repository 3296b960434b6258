#include "fabrics/staged/staged_fabric.h"

#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <string>
#include <vector>

#include "common/buffer.h"
#include "common/cuda_check.h"
#include "common/datatype.h"
#include "fabrics/staged/staging_plan.h"

namespace strata::fabric {
namespace {

using staging::Chunk;
using staging::Layout;

// Keeps the first failure; later ones are only logged (where they happened).
void keepFirst(Status& first, Status st) {
  if (first.isOk() && !st.isOk()) first = std::move(st);
}

class StagedFabric final : public Fabric {
 public:
  StagedFabric(Fabric* host, size_t slotBytes, cudaStream_t stream, SpanSink* spans)
      // A slot holds a column of every member, at the widest type (staging_plan.h).
      : host_(host),
        slotBytes_(std::max<size_t>(slotBytes, host->size() * sizeof(double))),
        stream_(stream),
        spans_(spans),
        name_(std::string(host->name()) + "-staged") {}

  ~StagedFabric() override {
    for (cudaStream_t s : {down_, up_}) {
      if (s != nullptr) {
        (void)cudaStreamSynchronize(s);
        (void)cudaStreamDestroy(s);
      }
    }
    for (auto* events : {&filled_, &drained_}) {
      for (cudaEvent_t e : *events) {
        if (e != nullptr) (void)cudaEventDestroy(e);
      }
    }
    if (start_ != nullptr) (void)cudaEventDestroy(start_);
    for (char* b : outgrown_) (void)cudaFreeHost(b);
    if (bounce_ != nullptr) (void)cudaFreeHost(bounce_);
    if (slots_ != nullptr) (void)cudaFreeHost(slots_);
  }

  Status init() {
    STRATA_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&slots_), kSlots * slotBytes_,
                                    cudaHostAllocPortable));
    STRATA_CUDA_CHECK(cudaStreamCreateWithFlags(&down_, cudaStreamNonBlocking));
    STRATA_CUDA_CHECK(cudaStreamCreateWithFlags(&up_, cudaStreamNonBlocking));
    STRATA_CUDA_CHECK(cudaEventCreateWithFlags(&start_, cudaEventDisableTiming));
    for (int s = 0; s < kSlots; ++s) {
      STRATA_CUDA_CHECK(cudaEventCreateWithFlags(&filled_[s], cudaEventDisableTiming));
      STRATA_CUDA_CHECK(cudaEventCreateWithFlags(&drained_[s], cudaEventDisableTiming));
    }
    return Status::ok();
  }

  const char* name() const override { return name_.c_str(); }
  int size() const override { return host_->size(); }
  int rank() const override { return host_->rank(); }

  Status allReduce(const void* in, void* out, size_t count, strataDataType_t type,
                   strataRedOp_t op) override {
    Layout l;
    l.kind = Collective::kAllReduce;
    l.count = count;
    return run(l, in, out, type, [&](char* slot, const Chunk& c) {
      return host_->allReduce(slot, slot, c.hostCount, type, op);
    });
  }

  Status reduceScatter(const void* in, void* out, const size_t* counts, const size_t* displs,
                       strataDataType_t type, strataRedOp_t op) override {
    const Layout l = blocks(Collective::kReduceScatter, counts, displs);
    const size_t ts = dataTypeSize(type);
    return run(l, in, out, type, [&](char* slot, const Chunk& c) {
      return host_->reduceScatter(slot, at(slot, c.hostDispls[l.me], ts), c.hostCounts.data(),
                                  c.hostDispls.data(), type, op);
    });
  }

  Status allGather(const void* in, void* out, const size_t* counts, const size_t* displs,
                   strataDataType_t type) override {
    const Layout l = blocks(Collective::kAllGather, counts, displs);
    const size_t ts = dataTypeSize(type);
    return run(l, in, out, type, [&](char* slot, const Chunk& c) {
      return host_->allGather(at(slot, c.hostDispls[l.me], ts), slot, c.hostCounts.data(),
                              c.hostDispls.data(), type);
    });
  }

  Status broadcast(const void* in, void* out, size_t count, strataDataType_t type,
                   int root) override {
    return run(range(Collective::kBroadcast, count, root), in, out, type,
               [&](char* slot, const Chunk& c) {
                 return host_->broadcast(slot, slot, c.hostCount, type, root);
               });
  }

  Status reduce(const void* in, void* out, size_t count, strataDataType_t type, strataRedOp_t op,
                int root) override {
    return run(range(Collective::kReduce, count, root), in, out, type,
               [&](char* slot, const Chunk& c) {
                 return host_->reduce(slot, slot, c.hostCount, type, op, root);
               });
  }

  Status scatter(const void* in, void* out, const size_t* counts, const size_t* displs,
                 strataDataType_t type, int root) override {
    Layout l = blocks(Collective::kScatter, counts, displs);
    l.root = root;
    const size_t ts = dataTypeSize(type);
    return run(l, in, out, type, [&](char* slot, const Chunk& c) {
      return host_->scatter(slot, at(slot, c.hostDispls[l.me], ts), c.hostCounts.data(),
                            c.hostDispls.data(), type, root);
    });
  }

  Status gather(const void* in, void* out, const size_t* counts, const size_t* displs,
                strataDataType_t type, int root) override {
    Layout l = blocks(Collective::kGather, counts, displs);
    l.root = root;
    const size_t ts = dataTypeSize(type);
    return run(l, in, out, type, [&](char* slot, const Chunk& c) {
      return host_->gather(at(slot, c.hostDispls[l.me], ts), slot, c.hostCounts.data(),
                           c.hostDispls.data(), type, root);
    });
  }

  // Point-to-point is not cut into chunks (the peers' operations need not line up): every
  // operation gets its own place in one pinned bounce buffer, sends are copied down, the host
  // fabric exchanges, receives are copied up.
  Status exchange(const PeerOp* ops, size_t n) override {
    size_t total = 0;
    for (size_t i = 0; i < n; ++i) total += ops[i].count * dataTypeSize(ops[i].type);
    STRATA_RETURN_IF_ERROR(ensureBounce(total));
    hostOps_.assign(ops, ops + n);
    size_t off = 0;
    for (PeerOp& op : hostOps_) {
      void* device = op.buf;
      op.buf = bounce_ + off;
      const size_t bytes = op.count * dataTypeSize(op.type);
      if (op.send && bytes > 0) {
        STRATA_CUDA_CHECK(cudaMemcpyAsync(op.buf, device, bytes, cudaMemcpyDeviceToHost, stream_));
      }
      off += bytes;
    }
    STRATA_CUDA_CHECK(cudaStreamSynchronize(stream_));  // after the stream's earlier work too
    STRATA_RETURN_IF_ERROR(host_->exchange(hostOps_.data(), hostOps_.size()));
    for (size_t i = 0; i < n; ++i) {
      const size_t bytes = ops[i].count * dataTypeSize(ops[i].type);
      if (!ops[i].send && bytes > 0) {
        STRATA_CUDA_CHECK(
            cudaMemcpyAsync(ops[i].buf, hostOps_[i].buf, bytes, cudaMemcpyHostToDevice, stream_));
      }
    }
    STRATA_CUDA_CHECK(cudaStreamSynchronize(stream_));
    return Status::ok();
  }

 private:
  static constexpr int kSlots = 3;

  Layout blocks(Collective kind, const size_t* counts, const size_t* displs) const {
    Layout l;
    l.kind = kind;
    l.members = host_->size();
    l.me = host_->rank();
    l.counts = counts;
    l.displs = displs;
    return l;
  }

  Layout range(Collective kind, size_t count, int root) const {
    Layout l;
    l.kind = kind;
    l.count = count;
    l.members = host_->size();
    l.me = host_->rank();
    l.root = root;
    return l;
  }

  // A pinned buffer of at least `bytes` for exchange(), kept for the next call. The one it
  // outgrows is freed only with the fabric: cudaFreeHost waits for the whole device, and this
  // runs on the progress thread while a stream gate's kernel spins waiting for it
  // (gpu/stream_gate.h), which would never end. Growth at least doubles, so the buffers kept
  // add up to less than twice the largest.
  Status ensureBounce(size_t bytes) {
    if (bytes <= bounceBytes_) return Status::ok();
    const size_t want = std::max(bytes, 2 * bounceBytes_);
    char* grown = nullptr;
    STRATA_CUDA_CHECK(cudaHostAlloc(reinterpret_cast<void**>(&grown), want, cudaHostAllocPortable));
    if (bounce_ != nullptr) outgrown_.push_back(bounce_);
    bounce_ = grown;
    bounceBytes_ = want;
    return Status::ok();
  }

  char* slot(size_t k) { return slots_ + (k % kSlots) * slotBytes_; }

  static uint64_t copiedBytes(const std::vector<staging::Copy>& copies, size_t ts) {
    uint64_t n = 0;
    for (const staging::Copy& cp : copies) n += cp.count * ts;
    return n;
  }

  // Queues chunk k's copies down into its slot (after the slot's previous copy up).
  Status fill(const Layout& l, size_t cols, size_t k, const void* in, size_t ts) {
    const int s = static_cast<int>(k % kSlots);
    staging::makeChunk(l, cols, k, &chunks_[s]);
    if (k >= kSlots) STRATA_CUDA_CHECK(cudaStreamWaitEvent(down_, drained_[s], 0));
    for (const staging::Copy& cp : chunks_[s].in) {
      STRATA_CUDA_CHECK(cudaMemcpyAsync(at(slot(k), cp.host, ts), at(in, cp.device, ts),
                                        cp.count * ts, cudaMemcpyDeviceToHost, down_));
    }
    STRATA_CUDA_CHECK(cudaEventRecord(filled_[s], down_));
    return Status::ok();
  }

  // Queues chunk k's copies up from its slot.
  Status drain(size_t k, void* out, size_t ts) {
    const int s = static_cast<int>(k % kSlots);
    for (const staging::Copy& cp : chunks_[s].out) {
      STRATA_CUDA_CHECK(cudaMemcpyAsync(at(out, cp.device, ts), at(slot(k), cp.host, ts),
                                        cp.count * ts, cudaMemcpyHostToDevice, up_));
    }
    STRATA_CUDA_CHECK(cudaEventRecord(drained_[s], up_));
    return Status::ok();
  }

  // The pipeline: step k queues chunk k's copy down, then runs chunk k-1's host collective
  // (while chunk k copies down and chunk k-2 copies up) and queues its copy up.
  template <typename HostOp>
  Status run(const Layout& l, const void* in, void* out, strataDataType_t type, HostOp hostOp) {
    const size_t ts = dataTypeSize(type);
    const size_t cols = staging::columnsPerChunk(l, slotBytes_ / ts);
    const size_t chunks = staging::numChunks(l, cols);
    if (chunks == 0) return Status::ok();
    Status cuda = [&]() -> Status {
      // Start after the work already queued on the communicator's stream (earlier steps).
      STRATA_CUDA_CHECK(cudaEventRecord(start_, stream_));
      STRATA_CUDA_CHECK(cudaStreamWaitEvent(down_, start_, 0));
      return Status::ok();
    }();
    Status hostFailed = Status::ok();
    for (size_t k = 0; k <= chunks && hostFailed.isOk(); ++k) {
      if (k < chunks && cuda.isOk()) keepFirst(cuda, fill(l, cols, k, in, ts));
      if (k == 0) continue;
      const size_t j = k - 1;
      const int s = static_cast<int>(j % kSlots);
      if (cuda.isOk()) {
        // On the timeline: how long the host collective waited for its chunk's copy down.
        const SpanSink::Open span =
            spans_ != nullptr ? spans_->openSpan("staging copy down") : SpanSink::Open{};
        const cudaError_t rc = cudaEventSynchronize(filled_[s]);
        if (spans_ != nullptr) spans_->closeSpan(span, copiedBytes(chunks_[s].in, ts));
        if (rc != cudaSuccess)
          keepFirst(cuda, cudaFailure("cudaEventSynchronize", rc, __FILE__, __LINE__));
      }
      if (!cuda.isOk()) staging::makeChunk(l, cols, j, &chunks_[s]);  // the host op's layout
      hostFailed = hostOp(slot(j), chunks_[s]);
      if (cuda.isOk()) keepFirst(cuda, drain(j, out, ts));
    }
    // Leave nothing in flight, whatever failed. On the timeline: the wait for the last copies
    // up, the one part of the call the pipeline does not overlap.
    const SpanSink::Open span =
        spans_ != nullptr ? spans_->openSpan("staging copy up") : SpanSink::Open{};
    for (cudaStream_t st : {down_, up_}) {
      const cudaError_t rc = cudaStreamSynchronize(st);
      if (rc != cudaSuccess)
        keepFirst(cuda, cudaFailure("cudaStreamSynchronize", rc, __FILE__, __LINE__));
    }
    if (spans_ != nullptr)
      spans_->closeSpan(span, copiedBytes(chunks_[(chunks - 1) % kSlots].out, ts));
    if (!hostFailed.isOk()) return hostFailed;
    return cuda;
  }

  Fabric* host_;  // not owned
  size_t slotBytes_;
  cudaStream_t stream_;  // the communicator's; not owned
  SpanSink* spans_;      // the communicator's timeline; null: none
  std::string name_;     // "mpi-staged", "shm-staged"
  char* slots_ = nullptr;
  cudaStream_t down_ = nullptr, up_ = nullptr;
  cudaEvent_t start_ = nullptr;
  std::array<cudaEvent_t, kSlots> filled_{}, drained_{};
  std::array<Chunk, kSlots> chunks_;  // the chunk each slot holds
  char* bounce_ = nullptr;            // exchange()'s pinned buffer
  size_t bounceBytes_ = 0;
  std::vector<char*> outgrown_;  // earlier bounce buffers, freed with the fabric
  std::vector<PeerOp> hostOps_;  // exchange()'s operations on the bounce buffer
};

}  // namespace

FabricTraits stagedTraits() {
  FabricTraits t;
  t.name = "staged";
  t.memory = MemoryKind::kDevice;
  t.wrapsHost = true;
  return t;
}

StatusOr<std::unique_ptr<Fabric>> createStagedFabric(boot::Bootstrap&, Fabric* host,
                                                     const FabricOptions& options) {
  auto f = std::make_unique<StagedFabric>(host, options.stagingBytes,
                                          static_cast<cudaStream_t>(options.stream), options.spans);
  STRATA_RETURN_IF_ERROR(f->init());
  return std::unique_ptr<Fabric>(std::move(f));
}

}  // namespace strata::fabric
