// The control plane: what ranks exchange to set themselves up (host descriptions, agreement on
// settings and failures, the membership of sub-groups, a fabric's own bootstrap such as NCCL's
// unique id). NCCL's bootstrap.cc and gloo's rendezvous stores play this part; MPI is one
// implementation (mpi_bootstrap.h), and nothing above this interface needs to know which.
//
// Every operation is collective over the bootstrap's members, who must call it in the same
// order. A bootstrap is used by one thread at a time: strata sets up on the caller's thread and
// never sends a fabric's data over a bootstrap (fabrics that need a data channel of their own
// take it from the bootstrap once, at creation).
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "common/status.h"

namespace strata::boot {

class Bootstrap {
 public:
  virtual ~Bootstrap() = default;

  virtual int rank() const = 0;
  virtual int size() const = 0;

  // Every member's `bytes` bytes at `mine`, in member order, into `all` (size() * bytes).
  virtual Status allGather(const void* mine, void* all, size_t bytes) = 0;
  // `bytes` bytes of member `root`'s `buf` into every member's `buf`.
  virtual Status broadcast(void* buf, size_t bytes, int root) = 0;
  virtual Status barrier() = 0;
  // The members that pass the same color >= 0 form a new bootstrap, ordered by (key, rank);
  // a member passing a negative color gets null. Collective over this bootstrap.
  virtual StatusOr<std::unique_ptr<Bootstrap>> split(int color, int key) = 0;
  // strataCommShrink's control plane: the members that call it agree on who is excluded (the
  // union of every caller's `exclude`, indexed by member, and of the members any of them knows
  // lost; tcp_bootstrap.cc states the protocol) and form a bootstrap of the others, in member
  // order. `excluded` is the agreed set. Collective over the members not excluded; a caller the
  // agreement excludes gets strataInvalidUsage.
  struct Shrunk {
    std::unique_ptr<Bootstrap> boot;
    std::vector<bool> excluded;
  };
  virtual StatusOr<Shrunk> shrink(const std::vector<bool>& exclude) = 0;
  // Members known lost: `onLost(member, why)` is called (on any thread, the control plane's
  // watcher among them, so it must only record and signal) once per member whose process is
  // gone, and at once for those already known. Watching ends when the returned handle is
  // destroyed, which waits for a call in progress. A control plane that cannot tell (MPI: the
  // launcher ends the job) returns null and never calls it.
  class Watch {
   public:
    virtual ~Watch() = default;
  };
  using LostFn = std::function<void(int member, const std::string& why)>;
  virtual std::unique_ptr<Watch> watchMembers(LostFn onLost) {
    (void)onLost;
    return nullptr;
  }
  // Teardown without peers (strataCommAbort): after this the destructor frees only local
  // state and never waits on another member.
  virtual void abandon() = 0;
  // Whether this control plane is an MPI communicator (mpi_bootstrap.h), so that the fabrics
  // that run on MPI can be chosen for its groups. A property rather than a downcast: code that
  // only chooses (fabric::netFabric) need not know the implementations.
  virtual bool runsOnMpi() const = 0;
};

// Makes a local outcome collective: if any member's `local` failed, every member returns the
// failure of the lowest failing member (its code, and its message prefixed with its rank on the
// others). Collective.
Status agree(Bootstrap& b, const Status& local);

// One variable-length string per member (empty ones included), in member order. Collective.
StatusOr<std::vector<std::string>> allGatherStrings(Bootstrap& b, const std::string& mine);

// Whether `value` is the same on every member. Collective.
StatusOr<bool> sameEverywhere(Bootstrap& b, uint64_t value);

}  // namespace strata::boot
