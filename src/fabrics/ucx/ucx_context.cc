#include "fabrics/ucx/ucx_context.h"

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

Status initContext(ucp_context_h* out) {
  ucp_config_t* config = nullptr;
  STRATA_UCS_CHECK(ucp_config_read(nullptr, nullptr, &config));
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
