#include "fabrics/nccl/nccl_lib.h"

#include <dlfcn.h>

#include <atomic>
#include <cstdlib>
#include <mutex>
#include <vector>

namespace strata::nccl_lib {
namespace {

// Fills `api` from `handle`; false (with the missing name in *why) when a function is absent.
bool resolve(void* handle, Api* api, std::string* why) {
#define STRATA_NCCL_RESOLVE(name)                                              \
  api->name = reinterpret_cast<decltype(api->name)>(dlsym(handle, #name));     \
  if (api->name == nullptr) {                                                  \
    *why = "it has no " #name;                                                 \
    return false;                                                              \
  }
  STRATA_NCCL_FUNCTIONS(STRATA_NCCL_RESOLVE)
#undef STRATA_NCCL_RESOLVE
  return true;
}

std::vector<std::string> candidates(const char* preferred) {
  std::vector<std::string> paths;
  if (preferred != nullptr && preferred[0] != '\0') paths.emplace_back(preferred);
#ifdef STRATA_NCCL_BUILD_LIBRARY
  paths.emplace_back(STRATA_NCCL_BUILD_LIBRARY);
#endif
  if (const char* cuda = std::getenv("CUDA_HOME"); cuda != nullptr && cuda[0] != '\0') {
    paths.push_back(std::string(cuda) + "/lib64/libnccl.so.2");
  }
  paths.emplace_back("/usr/local/cuda/lib64/libnccl.so.2");
  paths.emplace_back("libnccl.so.2");  // the loader's search path
  return paths;
}

Api* tryLoad(const char* preferred, std::string* why) {
  std::string tried;
  for (const std::string& path : candidates(preferred)) {
    void* handle = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_DEEPBIND);
    std::string reason;
    if (handle == nullptr) {
      const char* err = dlerror();
      reason = err != nullptr ? err : "dlopen failed";
    } else if (dlsym(handle, "strataNcclDropIn") != nullptr) {
      reason = "it is strata's drop-in, not NCCL";
      dlclose(handle);
    } else {
      auto* api = new Api();  // never freed: NCCL stays loaded for the process
      if (resolve(handle, api, &reason)) {
        api->path = path;
        api->handle = handle;
        return api;
      }
      delete api;
      dlclose(handle);
    }
    tried += (tried.empty() ? "" : "; ") + path + ": " + reason;
  }
  *why = "no NCCL library could be loaded (" + tried +
         "); set STRATA_NCCL_REAL_LIB to libnccl.so.2's path";
  return nullptr;
}

}  // namespace

namespace {
std::once_flag gOnce;
std::atomic<const Api*> gApi{nullptr};
std::string gFailure;  // written once, under gOnce
}  // namespace

const Api* load(const char* preferred, std::string* why) {
  std::call_once(gOnce, [&] { gApi.store(tryLoad(preferred, &gFailure)); });
  const Api* api = gApi.load();
  if (api == nullptr && why != nullptr) *why = gFailure;
  return api;
}

const Api* loaded() { return gApi.load(); }

}  // namespace strata::nccl_lib
