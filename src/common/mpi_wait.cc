#include "common/mpi_wait.h"

#include <sched.h>

#include <mutex>
#include <vector>

#include "common/counted_scope.h"
#include "common/deadline.h"
#include "common/log.h"

namespace strata {
namespace {

// Polls before yielding the core: a message already on its way completes within a few polls,
// and spinning keeps small calls' latency; after that, peers are late and the core is better
// given to them (oversubscribed machines).
constexpr unsigned kSpinPolls = 256;

void abandon(int n, MPI_Request* reqs, MpiRequestKind kind) {
  for (int i = 0; i < n; ++i) {
    if (reqs[i] == MPI_REQUEST_NULL) continue;
    if (kind == MpiRequestKind::kPointToPoint) {
      MPI_Cancel(&reqs[i]);  // takes effect for receives; a send may still go out
      MPI_Request_free(&reqs[i]);
    }
    reqs[i] = MPI_REQUEST_NULL;  // never waited on again
  }
}

// Open MPI 4.1 reports a failed nonblocking collective (libnbc: a truncated piece when ranks
// disagree on a count) through MPI_COMM_WORLD's error handler, not the request's
// communicator's, and that handler is MPI_ERRORS_ARE_FATAL by default: the job would abort
// where strata can return an error. So while strata waits on collective requests, the world's
// handler is MPI_ERRORS_RETURN. Process-wide and counted: the first waiter saves the user's
// handler and sets it, the last one restores it (waits on several threads overlap). A user's
// own MPI call on another thread in that window gets an error code instead of aborting.
struct WorldErrorsReturnChange {
  static MPI_Errhandler& saved() {
    static MPI_Errhandler h = MPI_ERRHANDLER_NULL;
    return h;
  }
  static void apply() {
    MPI_Comm_get_errhandler(MPI_COMM_WORLD, &saved());
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  }
  static void undo() {
    MPI_Comm_set_errhandler(MPI_COMM_WORLD, saved());
    MPI_Errhandler_free(&saved());
  }
};
using WorldErrorsReturn = CountedScope<WorldErrorsReturnChange>;

Status waitLoop(int n, MPI_Request* reqs, MPI_Status* statuses, MpiRequestKind kind,
                const MpiWhat& what, void (*idle)());

}  // namespace

Status mpiRequestError(const std::string& what, int code) {
  int cls = code;
  MPI_Error_class(code, &cls);
  char text[MPI_MAX_ERROR_STRING];
  int len = 0;
  if (MPI_Error_string(code, text, &len) != MPI_SUCCESS) len = 0;
  text[len] = '\0';
  STRATA_WARN(kSubsysFabric, "%s failed: %s", what.c_str(), text);
  if (cls == MPI_ERR_TRUNCATE) {
    return invalidUsage(what + ": a peer sent more than this rank expects (" + text +
                        "); the ranks disagree on a collective's count or type");
  }
  return systemError(what + " failed: " + text);
}

std::string MpiWhat::describe() const {
  std::string s = call;
  if (count > 0 || type[0] != '\0') s += " of " + std::to_string(count) + " " + type;
  if (peer >= 0) s += std::string(" with member ") + std::to_string(peer);
  s += std::string(" (") + owner;
  if (size > 0) s += ", member " + std::to_string(rank) + " of " + std::to_string(size);
  return s + ")";
}

Status mpiWaitAll(int n, MPI_Request* reqs, MPI_Status* statuses, MpiRequestKind kind,
                  const MpiWhat& what, void (*idle)()) {
  // Statuses are needed to tell a truncation (ranks that disagree) from other failures: an
  // error of MPI_Testall is only MPI_ERR_IN_STATUS, the request's own code is in its status.
  constexpr int kLocal = 8;
  MPI_Status local[kLocal];
  std::vector<MPI_Status> many;
  if (statuses == MPI_STATUSES_IGNORE) {
    if (n > kLocal) many.resize(static_cast<size_t>(n));
    statuses = n > kLocal ? many.data() : local;
  }
  if (kind != MpiRequestKind::kCollective) return waitLoop(n, reqs, statuses, kind, what, idle);
  WorldErrorsReturn returnErrors;
  return waitLoop(n, reqs, statuses, kind, what, idle);
}

namespace {

Status waitLoop(int n, MPI_Request* reqs, MPI_Status* statuses, MpiRequestKind kind,
                const MpiWhat& what, void (*idle)()) {
  deadline::Poll poll;
  for (unsigned polls = 0;; ++polls) {
    int done = 0;
    const int rc = MPI_Testall(n, reqs, &done, statuses);
    if (rc != MPI_SUCCESS) {
      // With MPI_ERR_IN_STATUS the request's own code says what failed.
      int code = rc;
      if (rc == MPI_ERR_IN_STATUS && statuses != MPI_STATUSES_IGNORE) {
        for (int i = 0; i < n; ++i) {
          if (statuses[i].MPI_ERROR != MPI_SUCCESS && statuses[i].MPI_ERROR != MPI_ERR_PENDING) {
            code = statuses[i].MPI_ERROR;
            break;
          }
        }
      }
      abandon(n, reqs, kind);
      return mpiRequestError(what.describe(), code);
    }
    if (done) return Status::ok();
    if (idle != nullptr) idle();
    if (polls < kSpinPolls) {
      if (!poll.expired()) continue;
    } else {
      sched_yield();
      if (!poll.expiredNow()) continue;
    }
    abandon(n, reqs, kind);
    return deadline::expiredError("waiting for " + what.describe());
  }
}

}  // namespace

void keepUntilExit(std::vector<char>&& bytes) {
  if (bytes.empty()) return;
  static std::mutex m;
  static auto* kept = new std::vector<std::vector<char>>();  // never destroyed: MPI may outlive
  std::lock_guard<std::mutex> lock(m);                       // static destructors
  kept->push_back(std::move(bytes));
}

}  // namespace strata
