// NCCL functions that take a communicator and that strata does not carry out itself: windows,
// the scalable init, and the device API's host calls (nccl_device.h); shrink and revoke are
// strata's own (recovery.cc). The
// generated stubs (forward_x86_64.S) cannot forward these: the ncclComm_t a program holds is
// strata's, and the real NCCL must get its own (comm->real, made when STRATA_NCCL_FALLBACK
// forwards anything) or nothing. So each is served here: forwarded with comm->real where there
// is one, answered by strata where the answer is plain arithmetic (the world team), refused
// with ncclInvalidUsage and a message otherwise. Functions of other return types refuse with a
// zeroed value and a WARN: the C API never aborts.
#include <cstddef>  // nccl_device.h uses size_t without including it
#include <string>

#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wpedantic"
#pragma GCC diagnostic ignored "-Wshadow"
#include <nccl_device.h>
#pragma GCC diagnostic pop

#include "dropin.h"

using namespace strata::nccl_dropin;  // NOLINT

namespace {

// The real NCCL's `name`, typed as strata's declaration of it, or null with the reason in *why.
template <typename Fn>
Fn* real(const char* name, std::string* why) {
  return reinterpret_cast<Fn*>(realFunction(name, why));
}

// Forwards a call of `fn` (of NCCL's type) with comm->real in place of the communicator, or
// refuses it: `fn` is ncclResult_t-valued.
#define STRATA_FORWARD_REAL(fn, comm, ...)                                         \
  do {                                                                             \
    if ((comm) == nullptr) return fail(ncclInvalidArgument, #fn ": comm is NULL"); \
    if ((comm)->real == nullptr) {                                                 \
      return fail(ncclInvalidUsage, #fn ": " + std::string(kNeedsReal));           \
    }                                                                              \
    std::string why;                                                               \
    auto* f = real<decltype(::fn)>(#fn, &why);                                     \
    if (f == nullptr) return fail(ncclInvalidUsage, #fn ": " + why);               \
    return f((comm)->real, __VA_ARGS__);                                           \
  } while (0)

// The host functions' types (nccl_device/core.h); the names are overloaded with C++ device
// versions, so decltype cannot name them.
using TeamOf = ncclTeam_t(ncclComm_t);
using RankIn = int(ncclComm_t, ncclTeam_t, int);

constexpr const char* kNeedsReal =
    "strata has no device API or symmetric memory: only a communicator that also has a real "
    "NCCL one (STRATA_NCCL_FALLBACK set to forward a collective) forwards it to NCCL";

// A value-returning device-API query: forwarded with comm->real to the real `name` (of type
// Fn), else `strataAnswer(&out)`, which returns false (leaving `out` zeroed) where strata has no
// answer: then a WARN says why.
template <typename T, typename Fn, typename Local, typename Forward>
T query(const char* name, ncclComm_t comm, Local strataAnswer, Forward forward) {
  T out{};
  if (comm == nullptr) {
    fail(ncclInvalidArgument, std::string(name) + ": comm is NULL; returning zero");
    return out;
  }
  if (comm->real != nullptr) {
    std::string why;
    if (auto* f = real<Fn>(name, &why)) return forward(f);
    fail(ncclInvalidUsage, std::string(name) + ": " + why + "; returning zero");
    return out;
  }
  if (!strataAnswer(&out)) {
    fail(ncclInvalidUsage, std::string(name) + ": " + kNeedsReal + "; returning zero");
  }
  return out;
}

}  // namespace

extern "C" {

ncclResult_t ncclCommWindowRegister(ncclComm_t comm, void* buff, size_t size, ncclWindow_t* win,
                                    int winFlags) {
  STRATA_FORWARD_REAL(ncclCommWindowRegister, comm, buff, size, win, winFlags);
}

ncclResult_t ncclCommWindowDeregister(ncclComm_t comm, ncclWindow_t win) {
  STRATA_FORWARD_REAL(ncclCommWindowDeregister, comm, win);
}

ncclResult_t ncclDevCommCreate(ncclComm_t comm, ncclDevCommRequirements_t const* reqs,
                               ncclDevComm_t* outDevComm) {
  STRATA_FORWARD_REAL(ncclDevCommCreate, comm, reqs, outDevComm);
}

ncclResult_t ncclDevCommDestroy(ncclComm_t comm, ncclDevComm_t const* devComm) {
  STRATA_FORWARD_REAL(ncclDevCommDestroy, comm, devComm);
}

ncclResult_t ncclGinBarrierCreateRequirement(ncclComm_t comm, ncclTeam_t team, int nBarriers,
                                             ncclGinBarrierHandle_t* outHandle,
                                             ncclDevResourceRequirements_t* outReq) {
  STRATA_FORWARD_REAL(ncclGinBarrierCreateRequirement, comm, team, nBarriers, outHandle, outReq);
}

// One id is ncclCommInitRankConfig's case; several ids spread NCCL's bootstrap over several
// roots, which strata's single-root rendezvous does not do.
ncclResult_t ncclCommInitRankScalable(ncclComm_t* newcomm, int nranks, int myrank, int nId,
                                      ncclUniqueId* commIds, ncclConfig_t* config) {
  if (commIds == nullptr || nId < 1) {
    return fail(ncclInvalidArgument, "ncclCommInitRankScalable: no unique id (nId " +
                                         std::to_string(nId) + ", commIds " +
                                         (commIds == nullptr ? "NULL)" : "given)"));
  }
  if (nId != 1) {
    return fail(ncclInvalidUsage,
                "ncclCommInitRankScalable: strata takes one unique id, got " + std::to_string(nId));
  }
  return ncclCommInitRankConfig(newcomm, nranks, commIds[0], myrank, config);
}

// The world team is the communicator: strata answers it without NCCL.
ncclTeam_t ncclTeamWorld(ncclComm_t comm) {
  return query<ncclTeam_t, TeamOf>(
      "ncclTeamWorld", comm,
      [comm](ncclTeam_t* t) {
        *t = ncclTeam_t{comm->size, comm->rank, 1};
        return true;
      },
      [comm](TeamOf* f) { return f(comm->real); });
}

ncclTeam_t ncclTeamLsa(ncclComm_t comm) {
  return query<ncclTeam_t, TeamOf>(
      "ncclTeamLsa", comm, [](ncclTeam_t*) { return false; },
      [comm](TeamOf* f) { return f(comm->real); });
}

ncclTeam_t ncclTeamRail(ncclComm_t comm) {
  return query<ncclTeam_t, TeamOf>(
      "ncclTeamRail", comm, [](ncclTeam_t*) { return false; },
      [comm](TeamOf* f) { return f(comm->real); });
}

int ncclTeamRankToWorld(ncclComm_t comm, ncclTeam_t team, int rank) {
  // NCCL's own arithmetic (nccl_device/impl/core__funcs.h), on strata's rank.
  return query<int, RankIn>(
      "ncclTeamRankToWorld", comm,
      [&](int* out) {
        *out = comm->rank + (rank - team.rank) * team.stride;
        return true;
      },
      [&](RankIn* f) { return f(comm->real, team, rank); });
}

int ncclTeamRankToLsa(ncclComm_t comm, ncclTeam_t team, int rank) {
  return query<int, RankIn>(
      "ncclTeamRankToLsa", comm, [](int*) { return false; },
      [&](RankIn* f) { return f(comm->real, team, rank); });
}

}  // extern "C"
