// The C boundary for communicators made from a unique id, as NCCL makes them: strataGetUniqueId,
// strataCommInitRank(Config) and strataCommInitAll. None of them needs or touches MPI: the
// control plane is the TCP bootstrap (bootstrap/tcp_bootstrap.h).
#include <cstddef>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "api/guard.h"
#include "api/handle.h"
#include "bootstrap/tcp_bootstrap.h"
#include "bootstrap/unique_id.h"
#include "common/deadline.h"
#include "core/settings.h"
#include "common/env.h"
#include "common/log.h"

using namespace strata;       // NOLINT: the C entry points below are thin wrappers
using namespace strata::api;  // NOLINT

namespace {

Status checkRank(int nranks, int rank) {
  if (nranks < 1) return invalidArgument("nranks " + std::to_string(nranks) + " is below 1");
  if (rank < 0 || rank >= nranks) {
    return invalidArgument("rank " + std::to_string(rank) + " is outside [0, " +
                           std::to_string(nranks) + ")");
  }
  return Status::ok();
}

struct InitRequest {
  boot::UniqueId id;
  int nranks = 0, rank = 0;
  core::Comm::CreateOptions opts;
};

// The whole init on the calling thread (or a nonblocking init's thread). Collective over the
// ranks of the id. Waits within the thread's deadline (the caller's Scope) or STRATA_TIMEOUT.
StatusOr<std::unique_ptr<core::Comm>> initRank(const InitRequest& req) {
  env::logUserSettings();
  if (req.rank == 0) logVersionOnce();
  StatusOr<std::unique_ptr<boot::TcpBootstrap>> boot =
      boot::TcpBootstrap::create(req.id, req.rank, req.nranks);
  if (!boot.isOk()) {
    Status st = boot.status().withContext("rank " + std::to_string(req.rank) + " of " +
                                          std::to_string(req.nranks) + " joining " +
                                          req.id.root.str());
    STRATA_WARN(kSubsysInit, "%s", st.message().c_str());
    return st.markLogged();
  }
  // No MPI below: every thread may drive the fabrics, so a progress thread is allowed.
  return core::Comm::create(boot.take(), true, req.opts);
}

StatusOr<InitRequest> makeRequest(int nranks, const strataUniqueId& commId, int rank,
                                  const strataConfig_t* config) {
  STRATA_RETURN_IF_ERROR(checkRank(nranks, rank));
  if (config != nullptr && config->magic != STRATA_CONFIG_MAGIC) {
    return invalidArgument("config was not initialised with STRATA_CONFIG_INITIALIZER");
  }
  InitRequest req;
  STRATA_ASSIGN_OR_RETURN(req.id, boot::decodeId(commId.internal));
  req.nranks = nranks;
  req.rank = rank;
  req.opts.origin = "from unique id " + req.id.root.str();
  if (config != nullptr && config->size >= offsetof(strataConfig_t, timeoutMs) + sizeof(int)) {
    if (config->timeoutMs < 0) {
      return invalidArgument("config->timeoutMs " + std::to_string(config->timeoutMs) +
                             " is negative (0 keeps STRATA_TIMEOUT)");
    }
    if (config->timeoutMs > 0) req.opts.timeoutSeconds = config->timeoutMs / 1000.0;
  }
  return req;
}

double initBudget(const InitRequest& req) {
  return req.opts.timeoutSeconds ? *req.opts.timeoutSeconds : deadline::configuredSeconds();
}
const char* budgetSource(const InitRequest& req) {
  return req.opts.timeoutSeconds ? core::kConfigTimeout : "STRATA_TIMEOUT";
}

}  // namespace

extern "C" {

strataResult_t strataGetUniqueId(strataUniqueId* uniqueId) {
  return guarded(nullptr, "strataGetUniqueId", [&]() -> Status {
    if (uniqueId == nullptr) return invalidArgument("uniqueId is NULL");
    STRATA_ASSIGN_OR_RETURN(boot::UniqueId id, boot::makeUniqueId());
    boot::encodeId(id, uniqueId->internal);
    return Status::ok();
  });
}

strataResult_t strataCommInitRankConfig(strataComm_t* comm, int nranks, strataUniqueId commId,
                                        int rank, strataConfig_t* config) {
  return guarded(nullptr, "strataCommInitRankConfig", [&]() -> Status {
    if (comm == nullptr) return invalidArgument("comm is NULL");
    STRATA_ASSIGN_OR_RETURN(InitRequest req, makeRequest(nranks, commId, rank, config));
    auto entry = std::make_unique<CommEntry>();
    entry->usesMpi = false;
    const bool blocking = config == nullptr || config->blocking != 0;
    if (blocking) {
      deadline::Scope scope(initBudget(req), nullptr, budgetSource(req));
      STRATA_ASSIGN_OR_RETURN(entry->impl, initRank(req));
      *comm = registerComm(std::move(entry));
      return Status::ok();
    }
    // Nonblocking: the handle exists at once; the init runs on a thread of its own, which
    // strataCommAbort/Destroy can cancel (its waits watch `cancel`).
    entry->pending = std::make_unique<PendingInit>();
    PendingInit* p = entry->pending.get();
    p->thread = std::thread([p, req] {
      deadline::Scope scope(initBudget(req), &p->cancel, budgetSource(req));
      StatusOr<std::unique_ptr<core::Comm>> made = initRank(req);
      std::lock_guard<std::mutex> lock(p->mu);
      if (made.isOk()) {
        p->comm = made.take();
      } else {
        p->status = made.status();
      }
      p->done = true;
    });
    *comm = registerComm(std::move(entry));
    return Status(Code::kInProgress, "nonblocking init started");
  });
}

strataResult_t strataCommInitRank(strataComm_t* comm, int nranks, strataUniqueId commId,
                                  int rank) {
  return strataCommInitRankConfig(comm, nranks, commId, rank, nullptr);
}

strataResult_t strataCommInitAll(strataComm_t* comms, int ndev, const int* devlist) {
  (void)devlist;
  return guarded(nullptr, "strataCommInitAll", [&]() -> Status {
    if (comms == nullptr) return invalidArgument("comms is NULL");
    if (ndev < 1) return invalidArgument("ndev " + std::to_string(ndev) + " is below 1");
    STRATA_ASSIGN_OR_RETURN(boot::UniqueId id, boot::makeUniqueId());
    // Every rank's init is collective with the others: one thread each.
    std::vector<std::unique_ptr<core::Comm>> made(static_cast<size_t>(ndev));
    std::vector<Status> status(static_cast<size_t>(ndev));
    std::vector<std::thread> threads;
    for (int r = 0; r < ndev; ++r) {
      threads.emplace_back([&, r] {
        InitRequest req;
        req.id = id;
        req.nranks = ndev;
        req.rank = r;
        req.opts.origin = "from strataCommInitAll";
        deadline::Scope scope(initBudget(req), nullptr, budgetSource(req));
        StatusOr<std::unique_ptr<core::Comm>> c = initRank(req);
        if (c.isOk()) {
          made[r] = c.take();
        } else {
          status[r] = c.status();
        }
      });
    }
    for (std::thread& t : threads) t.join();
    for (int r = 0; r < ndev; ++r) {
      if (status[r].isOk()) continue;
      for (auto& c : made) {
        if (c) c->abandon();  // the others go without waiting on the rank that failed
      }
      return status[r].withContext("rank " + std::to_string(r));
    }
    for (int r = 0; r < ndev; ++r) {
      auto entry = std::make_unique<CommEntry>();
      entry->usesMpi = false;
      entry->impl = std::move(made[r]);
      comms[r] = registerComm(std::move(entry));
    }
    return Status::ok();
  });
}

}  // extern "C"
