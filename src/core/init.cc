#include "core/init.h"

#include <cerrno>
#include <climits>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <functional>

#include "common/env.h"
#include "common/log.h"
#include "common/mpi_check.h"
#include "core/device_path.h"
#include "core/groups.h"
#include "core/topo_exchange.h"
#include "decompose/planner.h"
#include "topology/topo_file.h"

namespace strata::core {
namespace {

constexpr size_t kMinChunkBytes = 4096;
constexpr size_t kMaxChunkBytes = size_t{1} << 30;  // keeps every MPI count below INT_MAX
constexpr size_t kMinShmSlotBytes = size_t{64} << 10;
constexpr size_t kMaxShmSlotBytes = size_t{256} << 20;

// Every rank must take the same branch below (file or detection): their collectives differ,
// so a mismatch would deadlock. Compares a hash of each rank's setting. Collective.
Status checkSameSetting(strataComm& c, const char* name, const std::string& value) {
  const uint64_t mine = std::hash<std::string>{}(value) ^ (value.empty() ? 0 : 1);
  std::vector<uint64_t> all(c.size);
  STRATA_MPI_CHECK(MPI_Allgather(&mine, 1, MPI_UINT64_T, all.data(), 1, MPI_UINT64_T, c.mpi));
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

// The groups of the hierarchy's own levels (the reduce-scatter and all-gather paths use them;
// allreduce plans share them where their stages match), and the flat fabric. Collective.
Status buildLevels(strataComm& c) {
  for (int l = 0; l < c.hierarchy.numLevels(); ++l) {
    STRATA_ASSIGN_OR_RETURN(LevelGroup * g, ensureGroup(c, c.hierarchy, l));
    c.levels.push_back(g);
  }
  StatusOr<std::unique_ptr<fabric::Fabric>> flat = fabric::createFabric("mpi", c.mpi);
  STRATA_RETURN_IF_ERROR(agree(c.mpi, flat.status()));
  c.flat = flat.take();
  return Status::ok();
}

// STRATA_PLAN_FILE: every rank loads and resolves it against the hierarchy; any failure fails
// all ranks, and so does a file whose content differs between ranks (its hash is compared), since
// ranks running different plans would deadlock or compute garbage. Collective.
Status loadPlans(strataComm& c) {
  const std::string file = env::getString("STRATA_PLAN_FILE");
  // Paths may differ (node-local copies); whether one is set may not, and the content may not.
  STRATA_RETURN_IF_ERROR(
      checkSameSetting(c, "STRATA_PLAN_FILE (set or not)", file.empty() ? "" : "set"));
  if (file.empty()) {
    c.planSource = "planner (cost model)";
    return Status::ok();
  }
  StatusOr<std::vector<plan::PlanRule>> rules = [&]() -> StatusOr<std::vector<plan::PlanRule>> {
    STRATA_ASSIGN_OR_RETURN(plan::PlanFile pf, plan::loadPlanFile(file));
    return plan::resolvePlanFile(pf, c.hierarchy, fabric::fabricNames(), file);
  }();
  STRATA_RETURN_IF_ERROR(agree(c.mpi, rules.status()));
  const uint64_t mine = plan::planHash(rules.value(), c.hierarchy);
  uint64_t lo = 0, hi = 0;
  STRATA_MPI_CHECK(MPI_Allreduce(&mine, &lo, 1, MPI_UINT64_T, MPI_MIN, c.mpi));
  STRATA_MPI_CHECK(MPI_Allreduce(&mine, &hi, 1, MPI_UINT64_T, MPI_MAX, c.mpi));
  if (lo != hi) {
    return invalidUsage("plan file " + file +
                        ": its content differs between ranks (hash mismatch); every rank must "
                        "load the same plan");
  }
  c.planRules = rules.take();
  c.planSource = "plan file " + file;
  return Status::ok();
}

// STRATA_PLAN_DUMP_FILE: rank 0 writes the planner's choice for every power-of-two size bucket,
// merged into ranges, in the plan-file format, so a choice can be pinned.
void dumpPlans(const strataComm& c) {
  const std::string file = env::getString("STRATA_PLAN_DUMP_FILE");
  if (file.empty() || c.rank != 0) return;
  std::vector<plan::PlanRule> rules;
  for (int b = 0; b < 63; ++b) {
    const size_t lo = b == 0 ? 0 : size_t{1} << b;
    const size_t hi = b == 62 ? SIZE_MAX : size_t{1} << (b + 1);
    plan::Plan p = c.planRules.empty()
                       ? plan::choosePlan(c.hierarchy, plan::bucketBytes(b), c.costParams).plan
                       : *plan::planFor(c.planRules, lo);
    if (!rules.empty() &&
        plan::describePlan(c.hierarchy, rules.back().plan) == plan::describePlan(c.hierarchy, p)) {
      rules.back().maxBytes = hi;
    } else {
      plan::PlanRule rule;
      rule.minBytes = lo;
      rule.maxBytes = hi;
      rule.plan = p;
      rules.push_back(rule);
    }
  }
  FILE* out = std::fopen(file.c_str(), "w");
  if (out == nullptr) {
    STRATA_WARN(kSubsysPlan, "STRATA_PLAN_DUMP_FILE %s: cannot write: %s", file.c_str(),
                std::strerror(errno));
    return;
  }
  const std::string text = plan::formatPlanFile(rules, c.hierarchy);
  std::fwrite(text.data(), 1, text.size(), out);
  std::fclose(out);
  STRATA_INFO(kSubsysPlan, "wrote the chosen plans to %s", file.c_str());
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
    c->chunkBytes = env::getSizeClamped("STRATA_CHUNK_BYTES", kMinChunkBytes, kMaxChunkBytes);
    c->pipelineBytes = env::getInt("STRATA_PIPELINE_BYTES") <= 0
                           ? 0
                           : env::getSizeClamped("STRATA_PIPELINE_BYTES", kMinChunkBytes, kMaxChunkBytes);
    c->fabricOptions.shmSlotBytes =
        env::getSizeClamped("STRATA_SHM_SLOT_BYTES", kMinShmSlotBytes, kMaxShmSlotBytes);
    STRATA_RETURN_IF_ERROR(buildHierarchy(*c));
    STRATA_RETURN_IF_ERROR(buildLevels(*c));
    STRATA_RETURN_IF_ERROR(loadPlans(*c));
    dumpPlans(*c);
    return Status::ok();
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
  // Device calls still queued run first (they use every fabric below).
  Status drained = drainDevice(c);
  (void)drained;  // reported by the call that failed, or by strataCommGetAsyncError
  c.plans.clear();
  c.forcedPlans.clear();
  c.levels.clear();
  for (auto& [key, lg] : c.groups) {
    lg->deviceFabric.reset();  // may wrap the host fabric
    lg->fabric.reset();
    if (lg->comm != MPI_COMM_NULL && !finalized && collective) MPI_Comm_free(&lg->comm);
  }
  c.groups.clear();
  c.device.reset();  // its fabric wraps the flat one
  c.flat.reset();
  // MPI_Comm_free is collective in the standard; an abort leaves the communicators to MPI's
  // own cleanup rather than risk waiting on ranks that are gone.
  if (c.mpi != MPI_COMM_NULL && !finalized && collective) MPI_Comm_free(&c.mpi);
}

}  // namespace strata::core
