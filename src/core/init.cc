#include "core/init.h"

#include <climits>
#include <cstdint>
#include <cstring>
#include <functional>

#include "common/env.h"
#include "common/log.h"
#include "common/mpi_check.h"
#include "core/topo_exchange.h"
#include "topology/topo_file.h"

namespace strata::core {
namespace {

constexpr size_t kMinChunkBytes = 4096;
constexpr size_t kMaxChunkBytes = size_t{1} << 30;  // keeps every MPI count below INT_MAX

// Every rank must take the same branch below (file or detection): their collectives differ,
// so a mismatch would deadlock. Compares a hash of each rank's setting. Collective.
Status checkSameSetting(strataComm& c, const char* name, const std::string& value) {
  const uint64_t mine = std::hash<std::string>{}(value) ^ (value.empty() ? 0 : 1);
  std::vector<uint64_t> all(c.size);
  STRATA_MPI_CHECK(
      MPI_Allgather(&mine, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, c.mpi));
  for (int r = 1; r < c.size; ++r) {
    if (all[r] == all[0]) continue;
    // Show both values: rank 0's and the first rank that differs from it.
    auto valueOf = [&](int root) -> StatusOr<std::string> {
      std::string v = value;
      int len = static_cast<int>(v.size());
      STRATA_MPI_CHECK(MPI_Bcast(&len, 1, MPI_INT, root, c.mpi));
      v.resize(len);
      STRATA_MPI_CHECK(MPI_Bcast(v.data(), len, MPI_CHAR, root, c.mpi));
      return v.empty() ? std::string("unset") : "'" + v + "'";
    };
    STRATA_ASSIGN_OR_RETURN(std::string first, valueOf(0));
    STRATA_ASSIGN_OR_RETURN(std::string other, valueOf(r));
    return invalidUsage(std::string(name) + " differs between ranks: rank 0 has " + first +
                        ", rank " + std::to_string(r) + " has " + other +
                        "; every rank must use the same value");
  }
  return Status::ok();
}

// The hierarchy from STRATA_TOPO_FILE when set, else from detection. Collective.
Status buildHierarchy(strataComm& c) {
  const std::string file = env::getString("STRATA_TOPO_FILE");
  STRATA_RETURN_IF_ERROR(checkSameSetting(c, "STRATA_TOPO_FILE", file));
  if (!file.empty()) {
    // Each rank reads the file itself; agree() turns one rank's failure into everyone's.
    StatusOr<topo::Hierarchy> h = [&]() -> StatusOr<topo::Hierarchy> {
      STRATA_ASSIGN_OR_RETURN(topo::TopoFile tf, topo::loadTopoFile(file, fabric::fabricNames()));
      return topo::hierarchyFromTopoFile(tf, file, c.size);
    }();
    STRATA_RETURN_IF_ERROR(agree(c.mpi, h.status()));
    c.hierarchy = h.value().withoutTrivialLevels();
    c.hierarchySource = "topology file " + file;
    return Status::ok();
  }
  return detectHierarchy(c);
}

// One sub-communicator and fabric per level this rank is a member of. Collective.
Status buildLevels(strataComm& c) {
  c.levels.resize(c.hierarchy.numLevels());
  for (int l = 0; l < c.hierarchy.numLevels(); ++l) {
    const topo::StageGroup g = topo::stageGroup(c.hierarchy, l, c.rank);
    LevelGroup& lg = c.levels[l];
    STRATA_MPI_CHECK(MPI_Comm_split(c.mpi, g.member ? g.color : MPI_UNDEFINED, g.index, &lg.comm));
    Status st = Status::ok();
    if (g.member) {
      lg.index = g.index;
      lg.size = g.size;
      StatusOr<std::unique_ptr<fabric::Fabric>> f =
          fabric::createFabric(c.hierarchy.level(l).fabric, lg.comm);
      if (f.isOk()) {
        lg.fabric = f.take();
      } else {
        st = f.status().withContext("level '" + c.hierarchy.level(l).name + "'");
      }
    }
    STRATA_RETURN_IF_ERROR(agree(c.mpi, st));
  }
  StatusOr<std::unique_ptr<fabric::Fabric>> flat = fabric::createFabric("mpi", c.mpi);
  STRATA_RETURN_IF_ERROR(agree(c.mpi, flat.status()));
  c.flat = flat.take();
  return Status::ok();
}

size_t chunkBytesSetting() {
  int64_t v = env::getInt("STRATA_CHUNK_BYTES");
  if (v < static_cast<int64_t>(kMinChunkBytes) || v > static_cast<int64_t>(kMaxChunkBytes)) {
    STRATA_WARN(kSubsysEnv, "STRATA_CHUNK_BYTES=%lld is outside [%zu, %zu]; clamped",
                static_cast<long long>(v), kMinChunkBytes, kMaxChunkBytes);
    v = v < static_cast<int64_t>(kMinChunkBytes) ? kMinChunkBytes : kMaxChunkBytes;
  }
  return static_cast<size_t>(v);
}

}  // namespace

Status agree(MPI_Comm comm, const Status& local) {
  int rank = 0;
  STRATA_MPI_CHECK(MPI_Comm_rank(comm, &rank));
  const int mine = local.isOk() ? INT_MAX : rank;
  int first = INT_MAX;
  STRATA_MPI_CHECK(MPI_Allreduce(&mine, &first, 1, MPI_INT, MPI_MIN, comm));
  if (first == INT_MAX) return Status::ok();
  // The lowest failing rank tells the others what went wrong.
  int code = static_cast<int>(local.code());
  std::string msg = local.message();
  int len = static_cast<int>(msg.size());
  STRATA_MPI_CHECK(MPI_Bcast(&code, 1, MPI_INT, first, comm));
  STRATA_MPI_CHECK(MPI_Bcast(&len, 1, MPI_INT, first, comm));
  msg.resize(len);
  STRATA_MPI_CHECK(MPI_Bcast(msg.data(), len, MPI_CHAR, first, comm));
  if (!local.isOk()) return local;
  return Status(static_cast<Code>(code), "rank " + std::to_string(first) + ": " + msg);
}

StatusOr<std::unique_ptr<strataComm>> initComm(MPI_Comm user) {
  auto c = std::make_unique<strataComm>();
  STRATA_MPI_CHECK(MPI_Comm_dup(user, &c->mpi));
  // From here on errors on our communicators come back as codes instead of aborting the job.
  Status st = [&]() -> Status {
    STRATA_MPI_CHECK(MPI_Comm_set_errhandler(c->mpi, MPI_ERRORS_RETURN));
    STRATA_MPI_CHECK(MPI_Comm_rank(c->mpi, &c->rank));
    STRATA_MPI_CHECK(MPI_Comm_size(c->mpi, &c->size));
    logSetRank(c->rank);
    c->chunkBytes = chunkBytesSetting();
    STRATA_RETURN_IF_ERROR(buildHierarchy(*c));
    return buildLevels(*c);
  }();
  if (!st.isOk()) {
    freeComm(*c, /*collective=*/true);
    return st;
  }
  STRATA_INFO(kSubsysInit, "comm %p rank %d nranks %d hierarchy %s (%s)",
              static_cast<void*>(c.get()), c->rank, c->size, c->hierarchy.describe().c_str(),
              c->hierarchySource.c_str());
  return c;
}

void freeComm(strataComm& c, bool collective) {
  int finalized = 0;
  MPI_Finalized(&finalized);
  for (LevelGroup& lg : c.levels) {
    lg.fabric.reset();
    if (lg.comm != MPI_COMM_NULL && !finalized && collective) MPI_Comm_free(&lg.comm);
  }
  c.flat.reset();
  // MPI_Comm_free is collective in the standard; an abort leaves the communicators to MPI's
  // own cleanup rather than risk waiting on ranks that are gone.
  if (c.mpi != MPI_COMM_NULL && !finalized && collective) MPI_Comm_free(&c.mpi);
  c.levels.clear();
}

}  // namespace strata::core
