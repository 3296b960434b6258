#include "bootstrap/mpi_bootstrap.h"

#include <climits>
#include <cstring>
#include <vector>

#include "common/deadline.h"
#include "common/mpi_check.h"
#include "common/mpi_wait.h"

namespace strata::boot {
namespace {

// MPI counts are ints: larger transfers go in pieces.
constexpr size_t kMaxPiece = INT_MAX;

}  // namespace

StatusOr<std::unique_ptr<MpiBootstrap>> MpiBootstrap::duplicate(MPI_Comm user) {
  // MPI_Comm_idup, polled: a rank that never calls strataCommInitMPI fails the others' init
  // within STRATA_TIMEOUT instead of hanging it. The user's communicator keeps its own error
  // handler, so the request's failure comes back only through MPI_Testall's code.
  deadline::DefaultScope scope;
  MPI_Comm dup = MPI_COMM_NULL;
  MPI_Request r = MPI_REQUEST_NULL;
  STRATA_MPI_CHECK(MPI_Comm_idup(user, &dup, &r));
  MpiWhat what;
  what.call = "MPI_Comm_idup";
  what.owner = "strataCommInitMPI";
  STRATA_RETURN_IF_ERROR(mpiWaitAll(1, &r, MPI_STATUSES_IGNORE, MpiRequestKind::kCollective, what));
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
  // After a failed (abandoned) collective the communicator may still have requests in flight
  // on peers that never came: freeing it could wait on them, so it is left as if abandoned.
  if (owned_ && comm_ != MPI_COMM_NULL && !finalized && collectiveFree_ && !failed_) {
    MPI_Comm_free(&comm_);
  }
}

// Every collective of the control plane is posted nonblocking and polled within the thread's
// deadline (common/mpi_wait.h), or STRATA_TIMEOUT when no call has installed one (init): a
// rank that never joins fails the setup instead of hanging it. An abandoned request may still
// be completed by MPI when a late peer arrives, so the data travel through a heap buffer of
// the bootstrap's that is copied out on success and deliberately leaked on a timeout (a few
// bytes, once per failed job), never through the caller's memory, which may be gone by then.
Status MpiBootstrap::wait(MPI_Request& r, const char* call, size_t bytes) {
  MpiWhat what;
  what.call = call;
  what.count = bytes;
  what.type = "bytes";
  what.owner = "bootstrap";
  what.rank = rank_;
  what.size = size_;
  Status st = mpiWaitAll(1, &r, MPI_STATUSES_IGNORE, MpiRequestKind::kCollective, what);
  if (!st.isOk()) failed_ = true;
  return st;
}

Status MpiBootstrap::allGather(const void* mine, void* all, size_t bytes) {
  if (bytes > kMaxPiece) return internalError("bootstrap allgather of more than 2 GiB a member");
  STRATA_RETURN_IF_ERROR(usable());
  deadline::DefaultScope scope;
  const size_t total = bytes * static_cast<size_t>(size_);
  auto* tmp = new std::vector<char>(2 * total + 1);  // [mine | all]
  if (bytes > 0) std::memcpy(tmp->data(), mine, bytes);
  MPI_Request r = MPI_REQUEST_NULL;
  const int rc = MPI_Iallgather(tmp->data(), static_cast<int>(bytes), MPI_BYTE, tmp->data() + total,
                                static_cast<int>(bytes), MPI_BYTE, comm_, &r);
  if (rc != MPI_SUCCESS) {
    delete tmp;
    return mpiRequestError("MPI_Iallgather (bootstrap)", rc);
  }
  STRATA_RETURN_IF_ERROR(wait(r, "MPI_Iallgather", bytes));  // on failure tmp stays MPI's
  if (total > 0) std::memcpy(all, tmp->data() + total, total);
  delete tmp;
  return Status::ok();
}

Status MpiBootstrap::broadcast(void* buf, size_t bytes, int root) {
  STRATA_RETURN_IF_ERROR(usable());
  deadline::DefaultScope scope;
  size_t off = 0;
  do {  // once even for 0 bytes: every member calls MPI_Ibcast the same number of times
    const size_t n = bytes - off < kMaxPiece ? bytes - off : kMaxPiece;
    auto* tmp = new std::vector<char>(n + 1);
    char* piece = static_cast<char*>(buf) + off;
    if (rank_ == root && n > 0) std::memcpy(tmp->data(), piece, n);
    MPI_Request r = MPI_REQUEST_NULL;
    const int rc = MPI_Ibcast(tmp->data(), static_cast<int>(n), MPI_BYTE, root, comm_, &r);
    if (rc != MPI_SUCCESS) {
      delete tmp;
      return mpiRequestError("MPI_Ibcast (bootstrap)", rc);
    }
    STRATA_RETURN_IF_ERROR(wait(r, "MPI_Ibcast", n));  // on failure tmp stays MPI's
    if (rank_ != root && n > 0) std::memcpy(piece, tmp->data(), n);
    delete tmp;
    off += n;
  } while (off < bytes);
  return Status::ok();
}

Status MpiBootstrap::barrier() {
  STRATA_RETURN_IF_ERROR(usable());
  deadline::DefaultScope scope;
  MPI_Request r = MPI_REQUEST_NULL;
  const int rc = MPI_Ibarrier(comm_, &r);
  if (rc != MPI_SUCCESS) return mpiRequestError("MPI_Ibarrier (bootstrap)", rc);
  return wait(r, "MPI_Ibarrier", 0);
}

// MPI_Comm_split has no nonblocking form: a polled barrier first makes sure every member is
// here, so the split itself waits on no one who stalls.
StatusOr<std::unique_ptr<Bootstrap>> MpiBootstrap::split(int color, int key) {
  STRATA_RETURN_IF_ERROR(barrier());
  MPI_Comm out = MPI_COMM_NULL;
  STRATA_MPI_CHECK(MPI_Comm_split(comm_, color < 0 ? MPI_UNDEFINED : color, key, &out));
  if (out == MPI_COMM_NULL) return std::unique_ptr<Bootstrap>();
  // Owned from here, so that a failure below still frees it.
  std::unique_ptr<MpiBootstrap> b(new MpiBootstrap(out, true));
  STRATA_MPI_CHECK(MPI_Comm_set_errhandler(out, MPI_ERRORS_RETURN));
  STRATA_RETURN_IF_ERROR(b->init());
  return std::unique_ptr<Bootstrap>(std::move(b));
}

// MPI without fault tolerance (Open MPI 4.1 by default) ends the job when a process is lost,
// so a shrink over MPI only leaves out ranks that are alive and do not call: MPI_Comm_create_group
// is collective over the new group alone. It cannot agree with ranks whose lists differ (their
// groups would differ, which MPI leaves undefined), so the members check that every one passed
// the same set once the communicator exists, and fail together if not.
StatusOr<Bootstrap::Shrunk> MpiBootstrap::shrink(const std::vector<bool>& exclude) {
  STRATA_RETURN_IF_ERROR(usable());
  if (exclude[rank_]) {
    return invalidUsage("strataCommShrink: this rank (" + std::to_string(rank_) +
                        ") is in its own excludeRanksList: an excluded rank does not call it");
  }
  std::vector<int> keep;
  uint64_t setHash = 0xcbf29ce484222325ull;
  for (int r = 0; r < size_; ++r) {
    setHash = (setHash ^ (exclude[r] ? 1u : 0u)) * 0x100000001b3ull;
    if (!exclude[r]) keep.push_back(r);
  }
  MPI_Group all = MPI_GROUP_NULL, part = MPI_GROUP_NULL;
  STRATA_MPI_CHECK(MPI_Comm_group(comm_, &all));
  const int incl = MPI_Group_incl(all, static_cast<int>(keep.size()), keep.data(), &part);
  MPI_Group_free(&all);
  STRATA_MPI_CHECK(incl);
  MPI_Comm out = MPI_COMM_NULL;
  const int made = MPI_Comm_create_group(comm_, part, 0x5348, &out);
  MPI_Group_free(&part);
  STRATA_MPI_CHECK(made);
  std::unique_ptr<MpiBootstrap> b(new MpiBootstrap(out, true));
  STRATA_MPI_CHECK(MPI_Comm_set_errhandler(out, MPI_ERRORS_RETURN));
  STRATA_RETURN_IF_ERROR(b->init());
  STRATA_ASSIGN_OR_RETURN(bool same, sameEverywhere(*b, setHash));
  if (!same) {
    return invalidUsage(
        "strataCommShrink on a communicator made from MPI: the ranks passed different "
        "excludeRanksList; MPI cannot agree on them, so every remaining rank must pass the same");
  }
  Shrunk s;
  s.boot = std::move(b);
  s.excluded = exclude;
  return s;
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
