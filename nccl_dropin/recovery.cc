// Recovery from a lost rank, as NCCL 2.28 has it: ncclCommRevoke and ncclCommShrink, served by
// strataCommRevoke and strataCommShrink (docs/recovery.md gives the recipe). A survivor's call
// fails with ncclRemoteError naming the lost rank; the survivors revoke the communicator,
// shrink it without that rank (NCCL_SHRINK_ABORT) and go on with the new one.
//
// What strata adds to NCCL's contract: the survivors agree on who is excluded (the union of
// their lists and of the ranks any of them knows lost), so lists that differ still build one
// communicator. What it cannot do: shrink a communicator that also holds a real NCCL one
// (STRATA_NCCL_FALLBACK), whose members would have to be shrunk alike on the real side.
#include <string>

#include "dropin.h"

using namespace strata::nccl_dropin;  // NOLINT

static_assert(NCCL_SHRINK_DEFAULT == STRATA_SHRINK_DEFAULT &&
                  NCCL_SHRINK_ABORT == STRATA_SHRINK_ABORT,
              "NCCL's shrink flags are strata's");
static_assert(NCCL_REVOKE_DEFAULT == STRATA_REVOKE_DEFAULT, "NCCL's revoke flag is strata's");

namespace {

// NCCL_CONFIG_INITIALIZER's magic (nccl.h sets it; NCCL refuses a config without it).
constexpr unsigned int kNcclConfigMagic = 0xcafebeef;

// The real NCCL's ncclCommRevoke on comm->real: its in-flight calls end too.
ncclResult_t revokeReal(ncclComm_t comm, int revokeFlags) {
  std::string why;
  auto* f = reinterpret_cast<decltype(&::ncclCommRevoke)>(realFunction("ncclCommRevoke", &why));
  if (f == nullptr) {
    return fail(ncclInvalidUsage,
                "ncclCommRevoke: strata's communicator is revoked, but its real NCCL one "
                "(STRATA_NCCL_FALLBACK) is not: " +
                    why + "; abort it (ncclCommAbort)");
  }
  return f(comm->real, revokeFlags);
}

}  // namespace

extern "C" {

ncclResult_t ncclCommRevoke(ncclComm_t comm, int revokeFlags) {
  announce();
  if (comm == nullptr) return fail(ncclInvalidArgument, "ncclCommRevoke: comm is NULL");
  if (revokeFlags != NCCL_REVOKE_DEFAULT) {
    return fail(ncclInvalidArgument, "ncclCommRevoke: revokeFlags " + std::to_string(revokeFlags) +
                                         " must be NCCL_REVOKE_DEFAULT (0)");
  }
  const strataResult_t r = strataCommRevoke(comm->strata, STRATA_REVOKE_DEFAULT);
  if (r != strataSuccess) return fromStrata(r, comm->strata, "ncclCommRevoke");
  // From here ncclCommGetAsyncError says ncclInProgress until strata's calls have ended, then
  // ncclSuccess (strataCommGetAsyncError's state after a revoke), as NCCL's does.
  comm->revoked.store(true);
  if (comm->real != nullptr) return revokeReal(comm, revokeFlags);
  return ncclSuccess;
}

ncclResult_t ncclCommShrink(ncclComm_t comm, int* excludeRanksList, int excludeRanksCount,
                            ncclComm_t* newcomm, ncclConfig_t* config, int shrinkFlags) {
  announce();
  if (comm == nullptr) return fail(ncclInvalidArgument, "ncclCommShrink: comm is NULL");
  if (newcomm == nullptr) return fail(ncclInvalidArgument, "ncclCommShrink: newcomm is NULL");
  if (comm->real != nullptr) {
    return fail(ncclInvalidUsage,
                "ncclCommShrink of a communicator with STRATA_NCCL_FALLBACK forwarding is not "
                "supported: its real NCCL communicator cannot be shrunk to the members strata's "
                "survivors agree on; abort it (ncclCommAbort) and make a new one "
                "(ncclCommInitRank)");
  }
  if (config != nullptr && config->magic != kNcclConfigMagic) {
    return fail(ncclInvalidArgument,
                "ncclCommShrink: config was not initialised with NCCL_CONFIG_INITIALIZER");
  }
  // NCCL's config fields are its kernels' and resources' (CTAs, splitShare, shrinkShare, ...),
  // which strata has no use for: the new communicator keeps comm's settings, as with a NULL
  // config. blocking = 0 is served by returning once the new communicator is ready, with
  // ncclSuccess (which a nonblocking NCCL call may return too).
  strataComm_t child = nullptr;
  const strataResult_t r = strataCommShrink(comm->strata, excludeRanksList, excludeRanksCount,
                                            &child, nullptr, shrinkFlags);
  if (r != strataSuccess) return fromStrata(r, comm->strata, "ncclCommShrink");
  auto* made = new ncclComm();
  made->strata = child;
  strataCommUserRank(child, &made->rank);
  strataCommCount(child, &made->size);
  *newcomm = made;
  return ncclSuccess;
}

}  // extern "C"
