#include "bootstrap/mpi_bootstrap.h"

#include <climits>

#include "common/mpi_check.h"

namespace strata::boot {
namespace {

// MPI counts are ints: larger transfers go in pieces.
constexpr size_t kMaxPiece = INT_MAX;

}  // namespace

StatusOr<std::unique_ptr<MpiBootstrap>> MpiBootstrap::duplicate(MPI_Comm user) {
  MPI_Comm dup = MPI_COMM_NULL;
  STRATA_MPI_CHECK(MPI_Comm_dup(user, &dup));
  std::unique_ptr<MpiBootstrap> b(new MpiBootstrap(dup, true));
  // From here on errors on our communicator come back as codes instead of aborting the job.
  STRATA_MPI_CHECK(MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN));
  STRATA_RETURN_IF_ERROR(b->init());
  return b;
}

StatusOr<std::unique_ptr<MpiBootstrap>> MpiBootstrap::borrow(MPI_Comm comm) {
  std::unique_ptr<MpiBootstrap> b(new MpiBootstrap(comm, false));
  STRATA_RETURN_IF_ERROR(b->init());
  return b;
}

Status MpiBootstrap::init() {
  STRATA_MPI_CHECK(MPI_Comm_rank(comm_, &rank_));
  STRATA_MPI_CHECK(MPI_Comm_size(comm_, &size_));
  return Status::ok();
}

MpiBootstrap::~MpiBootstrap() {
  int finalized = 0;
  MPI_Finalized(&finalized);
  // MPI_Comm_free is collective in the standard; an abandoned bootstrap leaves its communicator
  // to MPI's own cleanup rather than risk waiting on ranks that are gone.
  if (owned_ && comm_ != MPI_COMM_NULL && !finalized && collectiveFree_) MPI_Comm_free(&comm_);
}

Status MpiBootstrap::allGather(const void* mine, void* all, size_t bytes) {
  if (bytes > kMaxPiece) return internalError("bootstrap allgather of more than 2 GiB a member");
  STRATA_MPI_CHECK(MPI_Allgather(mine, static_cast<int>(bytes), MPI_BYTE, all,
                                 static_cast<int>(bytes), MPI_BYTE, comm_));
  return Status::ok();
}

Status MpiBootstrap::broadcast(void* buf, size_t bytes, int root) {
  size_t off = 0;
  do {  // once even for 0 bytes: every member calls MPI_Bcast the same number of times
    const size_t n = bytes - off < kMaxPiece ? bytes - off : kMaxPiece;
    STRATA_MPI_CHECK(
        MPI_Bcast(static_cast<char*>(buf) + off, static_cast<int>(n), MPI_BYTE, root, comm_));
    off += n;
  } while (off < bytes);
  return Status::ok();
}

Status MpiBootstrap::barrier() {
  STRATA_MPI_CHECK(MPI_Barrier(comm_));
  return Status::ok();
}

StatusOr<std::unique_ptr<Bootstrap>> MpiBootstrap::split(int color, int key) {
  MPI_Comm out = MPI_COMM_NULL;
  STRATA_MPI_CHECK(MPI_Comm_split(comm_, color < 0 ? MPI_UNDEFINED : color, key, &out));
  if (out == MPI_COMM_NULL) return std::unique_ptr<Bootstrap>();
  // Owned from here, so that a failure below still frees it.
  std::unique_ptr<MpiBootstrap> b(new MpiBootstrap(out, true));
  STRATA_MPI_CHECK(MPI_Comm_set_errhandler(out, MPI_ERRORS_RETURN));
  STRATA_RETURN_IF_ERROR(b->init());
  return std::unique_ptr<Bootstrap>(std::move(b));
}

MPI_Comm mpiCommOf(Bootstrap& b) {
  auto* m = dynamic_cast<MpiBootstrap*>(&b);
  return m != nullptr ? m->comm() : MPI_COMM_NULL;
}

Status agreeOver(MPI_Comm comm, const Status& local) {
  STRATA_ASSIGN_OR_RETURN(std::unique_ptr<MpiBootstrap> b, MpiBootstrap::borrow(comm));
  return agree(*b, local);
}

}  // namespace strata::boot
