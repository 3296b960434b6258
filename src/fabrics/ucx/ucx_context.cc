#include "fabrics/ucx/ucx_context.h"

#include <dirent.h>

#include <cstdlib>
#include <mutex>
#include <string>

#include "common/log.h"

namespace strata::fabric {

Status ucxError(const char* call, ucs_status_t st, const char* file, int line) {
  const std::string what = std::string(call) + " failed: " + ucs_status_string(st);
  STRATA_WARN(kSubsysFabric, "%s (%s:%d)", what.c_str(), file, line);
  return systemError(what).markLogged();
}

namespace {

// Whether this host has an RDMA device (InfiniBand, RoCE, iWARP): verbs devices appear under
// /sys/class/infiniband.
bool hasRdmaDevice() {
  DIR* dir = opendir("/sys/class/infiniband");
  if (dir == nullptr) return false;
  bool found = false;
  while (dirent* e = readdir(dir)) found = found || e->d_name[0] != '.';
  closedir(dir);
  return found;
}

// Without RDMA, UCX moves inter-host data over TCP, where its rendezvous protocol (a
// request-to-send and a reply before every message above a few KiB) costs a round trip per
// message that the eager protocol does not: on 2 emulated hosts over 1 Gbit/s links, a 1 MiB
// allreduce took 12.1 ms with UCX's default threshold and 8.7 ms with eager messages (the mpi
// engine: 10.8 ms; bench/results/2026-11-27-ucx). strata posts its receives before its sends,
// so eager data rarely arrive unexpected. With RDMA devices the zero-copy rendezvous is what
// reaches the link's bandwidth, so UCX's default stays. A UCX_RNDV_THRESH the user set wins.
Status tuneForTcp(ucp_config_t* config) {
  if (std::getenv("UCX_RNDV_THRESH") != nullptr || hasRdmaDevice()) return Status::ok();
  STRATA_UCS_CHECK(ucp_config_modify(config, "RNDV_THRESH", "inf"));
  STRATA_INFO(kSubsysFabric, "ucx: no RDMA device here: eager messages at every size "
              "(UCX_RNDV_THRESH=inf; set UCX_RNDV_THRESH to choose otherwise)");
  return Status::ok();
}

Status initContext(ucp_context_h* out) {
  ucp_config_t* config = nullptr;
  STRATA_UCS_CHECK(ucp_config_read(nullptr, nullptr, &config));
  const Status tuned = tuneForTcp(config);
  if (!tuned.isOk()) {
    ucp_config_release(config);
    return tuned;
  }
  ucp_params_t params{};
  params.field_mask = UCP_PARAM_FIELD_FEATURES | UCP_PARAM_FIELD_MT_WORKERS_SHARED;
  params.features = UCP_FEATURE_TAG;
  // Communicators on different threads make and use their own workers at the same time.
  params.mt_workers_shared = 1;
  const ucs_status_t st = ucp_init(&params, config, out);
  ucp_config_release(config);
  return st == UCS_OK ? Status::ok() : ucxError("ucp_init", st, __FILE__, __LINE__);
}

}  // namespace

StatusOr<ucp_context_h> ucxContext() {
  static std::once_flag once;
  static ucp_context_h context = nullptr;  // never cleaned up: see the header
  static Status status;
  std::call_once(once, [] {
    status = initContext(&context);
    if (status.isOk())
      STRATA_TRACE(kSubsysFabric, "ucx: context made (UCX %s)", ucp_get_version_string());
  });
  if (!status.isOk()) return status;
  return context;
}

}  // namespace strata::fabric
