// ncclGetUniqueId and the communicator inits, served by strata's own unique-id API
// (strataGetUniqueId, strataCommInitRankConfig, strataCommInitAll): NCCL's way in, with no MPI.
// The id names a rendezvous root that listens on the maker's host (bootstrap/tcp_root.h), so it
// may travel through any channel (a file, PyTorch's TCPStore, MPI_Bcast) and the maker never
// blocks: ncclGetUniqueId returns at once, as NCCL's does. Whether or not the program runs under
// an MPI launcher, these communicators carry their data over strata's unique-id fabrics (shared
// memory inside a host, UCX between hosts), never over the program's MPI.
#include <cstring>
#include <vector>

#include "dropin.h"

using namespace strata::nccl_dropin;  // NOLINT

namespace {

static_assert(sizeof(ncclUniqueId) == sizeof(strataUniqueId), "NCCL's id is strata's id");

strataUniqueId toStrata(const ncclUniqueId& id) {
  strataUniqueId out;
  std::memcpy(out.internal, id.internal, sizeof out.internal);
  return out;
}

// The real NCCL's communicator over the same members, for forwarding (STRATA_NCCL_FALLBACK):
// rank 0 makes a real id and broadcasts it over strata's new communicator.
ncclResult_t makeRealComm(strataComm_t strata, int nranks, int rank, ncclComm_t* real) {
  std::string why;
  const strata::nccl_lib::Api* nccl = realNccl(&why);
  struct {
    ncclUniqueId id;
    int32_t rc;
    int32_t loaded;
  } msg{};
  msg.loaded = nccl != nullptr ? 1 : 0;
  if (rank == 0 && nccl != nullptr) msg.rc = nccl->ncclGetUniqueId(&msg.id);
  // Not the program's call: a dump or an error must not show it as one.
  (void)strataCommNoteNextCall(strata, "the NCCL drop-in's own exchange of the real NCCL's id");
  const strataResult_t r =
      strataBroadcast(&msg, &msg, sizeof msg, strataUint8, 0, strata, nullptr);
  if (r != strataSuccess) return fromStrata(r, strata, "ncclCommInitRank");
  if (nccl == nullptr || msg.loaded == 0) {
    return fail(ncclSystemError, "STRATA_NCCL_FALLBACK needs the real NCCL: " +
                                     (why.empty() ? std::string("rank 0 could not load it") : why));
  }
  if (msg.rc != ncclSuccess) {
    return fail(static_cast<ncclResult_t>(msg.rc),
                std::string("the real NCCL's ncclGetUniqueId failed: ") +
                    nccl->ncclGetErrorString(static_cast<ncclResult_t>(msg.rc)));
  }
  const ncclResult_t rc = nccl->ncclCommInitRank(real, nranks, msg.id, rank);
  if (rc != ncclSuccess) {
    const char* last = nccl->ncclGetLastError(nullptr);
    return fail(rc, std::string("the real NCCL's ncclCommInitRank failed: ") +
                        nccl->ncclGetErrorString(rc) +
                        (last && *last ? std::string(" (") + last + ")" : ""));
  }
  return ncclSuccess;
}

// Wraps a strata communicator; with STRATA_NCCL_FALLBACK, also the real NCCL's.
ncclResult_t wrap(strataComm_t strata, int nranks, int rank, ncclComm_t* out) {
  auto* comm = new ncclComm();
  comm->strata = strata;
  comm->rank = rank;
  comm->size = nranks;
  if (anyFallback()) {
    const ncclResult_t rc = makeRealComm(strata, nranks, rank, &comm->real);
    if (rc != ncclSuccess) {
      strataCommAbort(strata);
      delete comm;
      return rc;
    }
  }
  *out = comm;
  return ncclSuccess;
}

}  // namespace

extern "C" {

ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId) {
  announce();
  if (uniqueId == nullptr) return fail(ncclInvalidArgument, "ncclGetUniqueId: uniqueId is NULL");
  strataUniqueId id;
  const strataResult_t r = strataGetUniqueId(&id);
  if (r != strataSuccess) return fromStrata(r, nullptr, "ncclGetUniqueId");
  std::memcpy(uniqueId->internal, id.internal, sizeof id.internal);
  return ncclSuccess;
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank,
                                    ncclConfig_t* config) {
  announce();
  if (comm == nullptr) return fail(ncclInvalidArgument, "ncclCommInitRank: comm is NULL");
  strataConfig_t sc = STRATA_CONFIG_INITIALIZER;
  // NCCL's blocking = 0: the init goes on in the background and ncclCommGetAsyncError says when
  // it is done. With forwarding the real communicator is made at once, so the init blocks.
  if (config != nullptr && config->blocking == 0 && !anyFallback()) sc.blocking = 0;
  strataComm_t strata = nullptr;
  const strataResult_t r = strataCommInitRankConfig(&strata, nranks, toStrata(commId), rank, &sc);
  if (r == strataInProgress) {
    auto* made = new ncclComm();
    made->strata = strata;
    made->rank = rank;
    made->size = nranks;
    *comm = made;
    return ncclInProgress;
  }
  if (r != strataSuccess) return fromStrata(r, nullptr, "ncclCommInitRank");
  return wrap(strata, nranks, rank, comm);
}

ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank) {
  return ncclCommInitRankConfig(comm, nranks, commId, rank, nullptr);
}

ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist) {
  announce();
  if (comms == nullptr || ndev < 1) {
    return fail(ncclInvalidArgument, "ncclCommInitAll: comms is NULL or ndev < 1");
  }
  std::vector<strataComm_t> made(static_cast<size_t>(ndev), nullptr);
  const strataResult_t r = strataCommInitAll(made.data(), ndev, devlist);
  if (r != strataSuccess) return fromStrata(r, nullptr, "ncclCommInitAll");
  if (anyFallback()) {
    for (strataComm_t c : made) strataCommAbort(c);
    return fail(ncclInvalidUsage,
                "ncclCommInitAll with STRATA_NCCL_FALLBACK: forwarding needs one process per "
                "rank (ncclCommInitRank)");
  }
  for (int i = 0; i < ndev; ++i) {
    auto* c = new ncclComm();
    c->strata = made[i];
    c->rank = i;
    c->size = ndev;
    comms[i] = c;
  }
  return ncclSuccess;
}

}  // extern "C"
