// The control plane over MPI: a bootstrap is an MPI communicator strata owns (a duplicate of the
// user's, or a split of one), with MPI_ERRORS_RETURN so that a failure comes back as a Status.
// Fabrics that run on MPI (mpi, shm, mpi-cuda) take their group's communicator from here.
#pragma once

#include <mpi.h>

#include <memory>
#include <vector>

#include "bootstrap/bootstrap.h"

namespace strata::boot {

class MpiBootstrap final : public Bootstrap {
 public:
  // A bootstrap over a duplicate of `user` (the caller keeps `user`). Collective over `user`.
  static StatusOr<std::unique_ptr<MpiBootstrap>> duplicate(MPI_Comm user);
  // A bootstrap over `comm` itself, which the caller keeps and frees (tools that agree over
  // MPI_COMM_WORLD before any strata communicator exists).
  static StatusOr<std::unique_ptr<MpiBootstrap>> borrow(MPI_Comm comm);
  ~MpiBootstrap() override;
  MpiBootstrap(const MpiBootstrap&) = delete;
  MpiBootstrap& operator=(const MpiBootstrap&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  Status allGather(const void* mine, void* all, size_t bytes) override;
  Status broadcast(void* buf, size_t bytes, int root) override;
  Status barrier() override;
  StatusOr<std::unique_ptr<Bootstrap>> split(int color, int key) override;
  StatusOr<Shrunk> shrink(const std::vector<bool>& exclude) override;
  void abandon() override { collectiveFree_ = false; }
  bool runsOnMpi() const override { return true; }

  MPI_Comm comm() const { return comm_; }

 private:
  MpiBootstrap(MPI_Comm comm, bool owned) : comm_(comm), owned_(owned) {}
  Status init();

  // Once a collective failed (timed out), members may be at different points: later ones
  // would match the wrong peers' calls, so every later call fails fast.
  Status usable() const {
    return failed_ ? Status(Code::kRemoteError,
                            "the control plane failed earlier (a member timed out); it cannot be "
                            "used again")
                   : Status::ok();
  }
  Status wait(MPI_Request& r, const char* call, size_t bytes);

  MPI_Comm comm_;  // when owned, freed (collectively) by the destructor unless abandoned
  bool owned_;
  int rank_ = 0, size_ = 0;
  bool collectiveFree_ = true;
  bool failed_ = false;  // a collective failed or timed out (see usable())
};

// The MPI communicator behind `b`, or MPI_COMM_NULL when it is not an MpiBootstrap.
MPI_Comm mpiCommOf(Bootstrap& b);

// agree() over an MPI communicator the caller owns. Collective over `comm`.
Status agreeOver(MPI_Comm comm, const Status& local);

}  // namespace strata::boot
