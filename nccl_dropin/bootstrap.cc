// ncclGetUniqueId and the communicator inits. strata's unique id names the rank that made it
// (its rank in the launcher's world) and a sequence number; the members of a new communicator
// find each other through the world communicator:
//   1. each member but the id's maker sends (its world rank, its new rank, nranks) to the maker,
//      on a tag derived from the id's sequence number;
//   2. the maker, a member itself, collects nranks-1 of them, checks that they make ranks
//      0..nranks-1 exactly once with the same nranks, and answers each with the list of world
//      ranks by new rank (or a refusal that every member reports);
//   3. the members create their MPI communicator with MPI_Comm_create_group (collective over the
//      members only, so communicators over subsets work as NCCL's do) and strata's on it.
// Limits: the id's maker must be a member; the tags are taken from the top of MPI's tag range on
// MPI_COMM_WORLD (a program's own messages with tags above 0x3fff0000 could mix with them).
#include <chrono>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <thread>
#include <vector>

#include "dropin.h"

using namespace strata::nccl_dropin;  // NOLINT

namespace {

constexpr uint64_t kMagic = 0x43434e4154415453ull;  // "STATANCC" in memory order
constexpr uint32_t kIdVersion = 1;
constexpr int kTagBase = 0x3fff0000;

struct IdPayload {
  uint64_t magic;
  uint32_t version;
  int32_t makerWorldRank;
  uint64_t seq;
};
static_assert(sizeof(IdPayload) <= NCCL_UNIQUE_ID_BYTES, "the payload fits ncclUniqueId");

uint64_t gSeq = 0;  // ids made by this process

int tagOf(const IdPayload& p) { return kTagBase + static_cast<int>(p.seq & 0xffff); }

// Polls `req` until it completes or STRATA_TIMEOUT seconds (default 600) pass: a maker that
// never joins must not hang its members forever.
bool waitBounded(MPI_Request* req) {
  const char* t = std::getenv("STRATA_TIMEOUT");
  const double limit = t != nullptr ? std::atof(t) : 600.0;
  const auto start = std::chrono::steady_clock::now();
  for (;;) {
    int done = 0;
    MPI_Test(req, &done, MPI_STATUS_IGNORE);
    if (done) return true;
    const double waited =
        std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (limit > 0 && waited > limit) {
      MPI_Cancel(req);
      MPI_Request_free(req);
      return false;
    }
    std::this_thread::sleep_for(std::chrono::microseconds(100));
  }
}

// Steps 1-2: the world ranks of the new communicator's members, by new rank.
ncclResult_t findMembers(const IdPayload& id, int nranks, int rank, std::vector<int>* members) {
  int wrank = 0, wsize = 0;
  MPI_Comm_rank(MPI_COMM_WORLD, &wrank);
  MPI_Comm_size(MPI_COMM_WORLD, &wsize);
  if (nranks > wsize) {
    return fail(ncclInvalidArgument,
                "ncclCommInitRank: nranks " + std::to_string(nranks) + " but the MPI world has " +
                    std::to_string(wsize) + " processes (start every rank with mpirun or srun)");
  }
  const int tag = tagOf(id);
  members->assign(nranks, -1);
  if (wrank != id.makerWorldRank) {
    int mine[3] = {wrank, rank, nranks};
    MPI_Send(mine, 3, MPI_INT, id.makerWorldRank, tag, MPI_COMM_WORLD);
    MPI_Request req;
    MPI_Irecv(members->data(), nranks, MPI_INT, id.makerWorldRank, tag, MPI_COMM_WORLD, &req);
    if (!waitBounded(&req)) {
      return fail(ncclRemoteError, "ncclCommInitRank: the rank that made the unique id (world "
                                   "rank " + std::to_string(id.makerWorldRank) +
                                   ") did not answer within STRATA_TIMEOUT");
    }
    if ((*members)[0] < 0) {
      return fail(ncclInvalidUsage, "ncclCommInitRank: the members disagree on nranks or "
                                    "ranks (see the maker's message)");
    }
    return ncclSuccess;
  }
  // The maker: collects everyone's (world rank, new rank, nranks).
  std::string problem;
  if (rank < 0 || rank >= nranks) problem = "rank " + std::to_string(rank) + " out of range";
  if (problem.empty()) (*members)[rank] = wrank;
  std::vector<int> senders;
  for (int i = 0; i < nranks - 1; ++i) {
    int got[3] = {-1, -1, -1};
    MPI_Request req;
    MPI_Irecv(got, 3, MPI_INT, MPI_ANY_SOURCE, tag, MPI_COMM_WORLD, &req);
    if (!waitBounded(&req)) {
      return fail(ncclRemoteError, "ncclCommInitRank: only " + std::to_string(i + 1) + " of " +
                                       std::to_string(nranks) +
                                       " ranks joined within STRATA_TIMEOUT");
    }
    senders.push_back(got[0]);
    if (!problem.empty()) continue;
    if (got[2] != nranks) {
      problem = "world rank " + std::to_string(got[0]) + " passed nranks " +
                std::to_string(got[2]) + ", this rank " + std::to_string(nranks);
    } else if (got[1] < 0 || got[1] >= nranks || (*members)[got[1]] != -1) {
      problem = "world rank " + std::to_string(got[0]) + " passed rank " + std::to_string(got[1]) +
                " (out of range or taken)";
    } else {
      (*members)[got[1]] = got[0];
    }
  }
  std::vector<int> answer = *members;
  if (!problem.empty()) answer.assign(nranks, -1);
  for (int s : senders) MPI_Send(answer.data(), nranks, MPI_INT, s, tag, MPI_COMM_WORLD);
  if (!problem.empty()) return fail(ncclInvalidUsage, "ncclCommInitRank: " + problem);
  return ncclSuccess;
}

// The real NCCL's communicator over the same members, for forwarding: member 0 makes a real
// id and sends it to the others over `mpi`.
ncclResult_t makeRealComm(MPI_Comm mpi, int nranks, int rank, ncclComm_t* real) {
  std::string why;
  const strata::nccl_lib::Api* nccl = realNccl(&why);
  int ok = nccl != nullptr ? 1 : 0;
  MPI_Allreduce(MPI_IN_PLACE, &ok, 1, MPI_INT, MPI_MIN, mpi);
  if (!ok) return fail(ncclSystemError, "STRATA_NCCL_FALLBACK needs the real NCCL: " + why);
  struct {
    ncclUniqueId id;
    int rc;
  } msg{};
  if (rank == 0) msg.rc = nccl->ncclGetUniqueId(&msg.id);
  MPI_Bcast(&msg, sizeof msg, MPI_BYTE, 0, mpi);
  if (msg.rc != ncclSuccess) {
    return fail(static_cast<ncclResult_t>(msg.rc),
                std::string("the real NCCL's ncclGetUniqueId failed: ") +
                    nccl->ncclGetErrorString(static_cast<ncclResult_t>(msg.rc)));
  }
  const ncclResult_t rc = nccl->ncclCommInitRank(real, nranks, msg.id, rank);
  if (rc != ncclSuccess) {
    const char* last = nccl->ncclGetLastError(nullptr);
    return fail(rc, std::string("the real NCCL's ncclCommInitRank failed: ") +
                        nccl->ncclGetErrorString(rc) + (last && *last ? std::string(" (") + last + ")" : ""));
  }
  return ncclSuccess;
}

// Step 3, and the real communicator when STRATA_NCCL_FALLBACK forwards anything.
ncclResult_t makeComm(MPI_Comm mpi, int nranks, int rank, ncclComm_t* out) {
  auto* comm = new ncclComm();
  comm->rank = rank;
  comm->size = nranks;
  ncclResult_t rc = fromStrata(strataCommInitMPI(&comm->strata, mpi), nullptr, "ncclCommInitRank");
  if (rc == ncclSuccess && anyFallback()) rc = makeRealComm(mpi, nranks, rank, &comm->real);
  if (rc != ncclSuccess) {
    if (comm->strata != nullptr) strataCommAbort(comm->strata);
    delete comm;
    return rc;
  }
  *out = comm;
  return ncclSuccess;
}

}  // namespace

extern "C" {

ncclResult_t ncclGetUniqueId(ncclUniqueId* uniqueId) {
  announce();
  if (uniqueId == nullptr) return fail(ncclInvalidArgument, "ncclGetUniqueId: uniqueId is NULL");
  if (ncclResult_t rc = ensureMpi(); rc != ncclSuccess) return rc;
  IdPayload p{kMagic, kIdVersion, 0, ++gSeq};
  MPI_Comm_rank(MPI_COMM_WORLD, &p.makerWorldRank);
  std::memset(uniqueId, 0, sizeof *uniqueId);
  std::memcpy(uniqueId->internal, &p, sizeof p);
  return ncclSuccess;
}

ncclResult_t ncclCommInitRankConfig(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank,
                                    ncclConfig_t* config) {
  announce();
  (void)config;  // strata's communicators are always ready when init returns (blocking)
  if (comm == nullptr) return fail(ncclInvalidArgument, "ncclCommInitRank: comm is NULL");
  if (nranks < 1 || rank < 0 || rank >= nranks) {
    return fail(ncclInvalidArgument, "ncclCommInitRank: rank " + std::to_string(rank) +
                                         " of nranks " + std::to_string(nranks));
  }
  IdPayload id;
  std::memcpy(&id, commId.internal, sizeof id);
  if (id.magic != kMagic || id.version != kIdVersion) {
    return fail(ncclInvalidArgument,
                "ncclCommInitRank: the unique id was not made by strata's ncclGetUniqueId (ids "
                "from the real NCCL cannot be mixed with the drop-in)");
  }
  if (ncclResult_t rc = ensureMpi(); rc != ncclSuccess) return rc;
  std::vector<int> members;
  if (ncclResult_t rc = findMembers(id, nranks, rank, &members); rc != ncclSuccess) return rc;
  MPI_Group world, group;
  MPI_Comm_group(MPI_COMM_WORLD, &world);
  MPI_Group_incl(world, nranks, members.data(), &group);
  MPI_Comm mpi = MPI_COMM_NULL;
  const int created = MPI_Comm_create_group(MPI_COMM_WORLD, group, tagOf(id), &mpi);
  MPI_Group_free(&group);
  MPI_Group_free(&world);
  if (created != MPI_SUCCESS || mpi == MPI_COMM_NULL) {
    return fail(ncclSystemError, "ncclCommInitRank: MPI_Comm_create_group failed");
  }
  const ncclResult_t rc = makeComm(mpi, nranks, rank, comm);
  MPI_Comm_free(&mpi);  // strata keeps a duplicate
  return rc;
}

ncclResult_t ncclCommInitRank(ncclComm_t* comm, int nranks, ncclUniqueId commId, int rank) {
  return ncclCommInitRankConfig(comm, nranks, commId, rank, nullptr);
}

ncclResult_t ncclCommInitAll(ncclComm_t* comms, int ndev, const int* devlist) {
  announce();
  (void)devlist;
  if (comms == nullptr || ndev < 1) {
    return fail(ncclInvalidArgument, "ncclCommInitAll: comms is NULL or ndev < 1");
  }
  if (ndev > 1) {
    return fail(ncclInvalidUsage,
                "ncclCommInitAll with " + std::to_string(ndev) +
                    " devices: strata runs one rank per process; use one process per GPU");
  }
  if (ncclResult_t rc = ensureMpi(); rc != ncclSuccess) return rc;
  return makeComm(MPI_COMM_SELF, 1, 0, &comms[0]);
}

}  // extern "C"
