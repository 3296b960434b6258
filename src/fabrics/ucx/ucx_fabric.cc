#include "fabrics/ucx/ucx_fabric.h"

#include "common/mpi_wait.h"
#include "fabrics/mpi/mpi_fabric.h"
#include "fabrics/p2p/p2p_collectives.h"
#include "fabrics/p2p/p2p_ring.h"
#include "fabrics/ucx/ucx_link.h"

namespace strata::fabric {
namespace {

class UcxFabric final : public Fabric {
 public:
  explicit UcxFabric(std::unique_ptr<UcxLink> link)
      : link_(std::move(link)), calls_(*link_), ring_(*link_, p2p::Channel::kRing) {}

  // After an abort, receives this fabric abandoned may still be written by a late peer's
  // rendezvous (UCX's cma or rendezvous get/put reach into this process's memory): strata's
  // own buffers they may name outlive the fabric (common/mpi_wait.h: keepUntilExit).
  ~UcxFabric() override {
    if (!abandoned_ || retired_) return;
    for (std::vector<char>& s : calls_.takeScratch()) keepUntilExit(std::move(s));
    keepUntilExit(ring_.takeScratch());
  }
  void abandon() override {
    abandoned_ = true;
    link_->abandon();
  }
  void retire() override {
    abandoned_ = retired_ = true;
    link_->retire();
  }

  const char* name() const override { return "ucx"; }
  int size() const override { return link_->size(); }
  int rank() const override { return link_->rank(); }

  Status reduceScatter(const void* in, void* out, const size_t* counts, const size_t* displs,
                       strataDataType_t type, strataRedOp_t op) override {
    return calls_.reduceScatter(in, out, counts, displs, type, op);
  }
  Status allGather(const void* in, void* out, const size_t* counts, const size_t* displs,
                   strataDataType_t type) override {
    return calls_.allGather(in, out, counts, displs, type);
  }
  Status allReduce(const void* in, void* out, size_t count, strataDataType_t type,
                   strataRedOp_t op) override {
    return calls_.allReduce(in, out, count, type, op);
  }
  Status broadcast(const void* in, void* out, size_t count, strataDataType_t type,
                   int root) override {
    return calls_.broadcast(in, out, count, type, root);
  }
  Status reduce(const void* in, void* out, size_t count, strataDataType_t type, strataRedOp_t op,
                int root) override {
    return calls_.reduce(in, out, count, type, op, root);
  }
  Status scatter(const void* in, void* out, const size_t* counts, const size_t* displs,
                 strataDataType_t type, int root) override {
    return calls_.scatter(in, out, counts, displs, type, root);
  }
  Status gather(const void* in, void* out, const size_t* counts, const size_t* displs,
                strataDataType_t type, int root) override {
    return calls_.gather(in, out, counts, displs, type, root);
  }
  Status exchange(const PeerOp* ops, size_t n) override { return calls_.exchange(ops, n); }
  Status probe(int peer, bool* found, int* source, size_t* bytes) override {
    return link_->probe(p2p::Channel::kExchange, peer, found, source, bytes);
  }

  // The ring, on its own channel (its messages never meet a blocking call's), advanced by
  // progress(). Whatever the size: the pipeline starts pieces it means to overlap, and a
  // started call that blocked until done would overlap nothing.
  Status allReduceStart(const void* in, void* out, size_t count, strataDataType_t type,
                        strataRedOp_t op) override {
    return ring_.start(in, out, count, type, op);
  }

  // A failure is kept for allReduceWait. Re-entered from this fabric's own wait for the ring
  // (the pipeline's IdleHook may name this fabric): the waiter advances it itself.
  void progress() override {
    if (busy_ || !testError_.isOk() || !ring_.active()) return;
    testError_ = ring_.test();
  }

  Status allReduceWait() override {
    busy_ = true;
    Status failed = testError_;
    testError_ = Status::ok();
    Status ring = ring_.wait();
    busy_ = false;
    return failed.isOk() ? ring : failed;
  }

 private:
  std::unique_ptr<UcxLink> link_;
  p2p::Collectives calls_;           // every blocking operation (channels kCall, kExchange)
  p2p::RingAllReduce ring_;          // the started allreduce (channel kRing)
  Status testError_ = Status::ok();  // a failed progress(), for allReduceWait
  bool busy_ = false;                // in allReduceWait
  bool abandoned_ = false;
  bool retired_ = false;  // Fabric::retire: nothing kept for late peers
};

}  // namespace

// mpi's traits and cost hints under another name. Not measured yet: within a host UCX goes
// through its shared-memory FIFOs (and cma where the kernel allows it), as MPI does, and
// between hosts both are messages on the same link.
FabricTraits ucxTraits() {
  FabricTraits t = mpiTraits();
  t.name = "ucx";
  // Its allreduce is p2p::Collectives': every vector to every member below kDirectBytes.
  t.smallAllReduce = SmallAllReduce::kDirect;
  t.smallAllReduceBytes = static_cast<double>(p2p::Collectives::kDirectBytes);
  return t;
}

StatusOr<std::unique_ptr<Fabric>> createUcxFabric(boot::Bootstrap& group, Fabric*,
                                                  const FabricOptions&) {
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<UcxLink> link, UcxLink::create(group));
  return std::unique_ptr<Fabric>(std::make_unique<UcxFabric>(std::move(link)));
}

}  // namespace strata::fabric
