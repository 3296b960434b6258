// The control plane over TCP, for communicators made from a unique id (strataCommInitRank):
// no MPI anywhere. A TcpBootstrap is a group of a TcpWorld's members (all of them, or a split)
// with a group id of its own; its collectives are messages between members tagged with
// (group, the group's collective count, the step), so two groups of one world, or two
// collectives of one group, never take each other's messages.
//
// Algorithms (control messages are small; what matters is a few connections per member):
// allGather is a ring (member i sends to i+1 and receives from i-1, n-1 steps), broadcast a
// binomial tree from the root, barrier an allGather of nothing, split an allGather of (color,
// key) after which every member computes the same new groups. Every wait is bounded by the
// thread's deadline (STRATA_TIMEOUT outside a call); after one failed, every later call fails
// fast, as the MPI bootstrap's do.
#pragma once

#include <memory>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "bootstrap/tcp_world.h"
#include "bootstrap/unique_id.h"

namespace strata::boot {

class TcpBootstrap final : public Bootstrap {
 public:
  // Joins the communicator that `id` names as `rank` of `nranks` (tcp_world.h). Collective over
  // the nranks processes that pass the same id.
  static StatusOr<std::unique_ptr<TcpBootstrap>> create(const UniqueId& id, int rank, int nranks);

  int rank() const override { return me_; }
  int size() const override { return static_cast<int>(members_.size()); }
  Status allGather(const void* mine, void* all, size_t bytes) override;
  Status broadcast(void* buf, size_t bytes, int root) override;
  Status barrier() override;
  StatusOr<std::unique_ptr<Bootstrap>> split(int color, int key) override;
  // The agreement and the survivors' group (tcp_bootstrap.cc states the protocol); the
  // world's watcher's news of this group's members.
  StatusOr<Shrunk> shrink(const std::vector<bool>& exclude) override;
  std::unique_ptr<Watch> watchMembers(LostFn onLost) override;
  // Nothing of a TcpBootstrap ever waits on a peer at teardown.
  void abandon() override {}
  bool runsOnMpi() const override { return false; }

 private:
  TcpBootstrap(std::shared_ptr<TcpWorld> world, uint64_t group, std::vector<int> members, int me)
      : world_(std::move(world)), group_(group), members_(std::move(members)), me_(me) {}
  Status usable() const;
  uint64_t nextTag() { return ++collectives_ << 32; }
  Status failed(Status st) {
    if (!st.isOk()) failed_ = true;
    return st;
  }

  std::shared_ptr<TcpWorld> world_;
  uint64_t group_;
  std::vector<int> members_;  // world ranks, in this group's order
  int me_;
  uint64_t collectives_ = 0, splits_ = 0;
  uint64_t agreeRounds_ = 0;  // shrink agreement rounds so far: they go on across shrink calls
  bool failed_ = false;
};

}  // namespace strata::boot
