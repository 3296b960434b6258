// The drop-in's shared pieces: STRATA_NCCL_FALLBACK, the real NCCL, errors and logging. It reads
// strata's variables through the registry (common/env.h, compiled into this library: libstrata.so
// exports only the C API).
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <sstream>

#include "common/env.h"
#include "dropin.h"

namespace strata::nccl_dropin {
namespace {

thread_local std::string tLastError;

struct Fallback {
  bool coll[6] = {};
  bool any = false;
};

const Fallback& fallback() {
  static const Fallback f = [] {
    Fallback out;
    const std::string text = env::get(env::var::STRATA_NCCL_FALLBACK);
    if (text.empty() || text == "none") return out;
    static const char* const kNames[] = {"allreduce", "reducescatter", "allgather",
                                         "broadcast", "reduce",        "sendrecv"};
    std::stringstream in(text);
    std::string item;
    while (std::getline(in, item, ',')) {
      bool known = false;
      for (int i = 0; i < 6; ++i) {
        if (item == "all" || item == kNames[i]) {
          out.coll[i] = true;
          known = true;
        }
      }
      if (!known) {
        std::fprintf(stderr,
                     "strata NCCL drop-in: STRATA_NCCL_FALLBACK=%s: unknown collective \"%s\" "
                     "(all, none, allreduce, reducescatter, allgather, broadcast, reduce, "
                     "sendrecv); nothing is forwarded\n",
                     text.c_str(), item.c_str());
        return Fallback();
      }
    }
    for (bool c : out.coll) out.any = out.any || c;
    return out;
  }();
  return f;
}

}  // namespace

bool fallbackFor(Coll c) { return fallback().coll[static_cast<int>(c)]; }
bool anyFallback() { return fallback().any; }

const nccl_lib::Api* realNccl(std::string* why) {
  return nccl_lib::load(env::get(env::var::STRATA_NCCL_REAL_LIB).c_str(), why);
}

ncclResult_t fail(ncclResult_t code, const std::string& msg, bool print) {
  tLastError = msg;
  if (!print) return code;
  char host[64] = {};
  gethostname(host, sizeof host - 1);
  std::fprintf(stderr, "%s:%d:%d NCCL WARN strata: %s\n", host, getpid(), gettid(), msg.c_str());
  return code;
}

ncclResult_t fromStrata(strataResult_t r, strataComm_t comm, const char* fn) {
  if (r == strataSuccess) return ncclSuccess;
  const char* last = strataGetLastError(comm);
  if (last == nullptr || last[0] == '\0') last = strataGetLastError(nullptr);
  tLastError = std::string(fn) + ": " + (last != nullptr ? last : strataGetErrorString(r));
  return static_cast<ncclResult_t>(r);  // the values are NCCL's
}

const char* lastError() { return tLastError.c_str(); }

bool infoEnabled() {
  std::string level;
  if (env::isSet(env::var::STRATA_DEBUG)) {
    level = env::get(env::var::STRATA_DEBUG);
  } else if (const char* nccl = std::getenv("NCCL_DEBUG"); nccl != nullptr) {
    level = nccl;
  }
  return level == "INFO" || level == "TRACE";
}

void announce() {
  static std::once_flag once;
  std::call_once(once, [] {
    // strata reads its variables when it first needs them, which is after this. NCCL's own
    // variables are not strata's to register; strata's are asked through the registry (this
    // library's copy of it, which caches "unset" before the setenv: infoEnabled() then falls
    // back to NCCL_DEBUG, which is the value just copied).
    const char* debug = std::getenv("NCCL_DEBUG");
    if (debug != nullptr && !env::isSet(env::var::STRATA_DEBUG)) {
      const std::string level = debug;
      // NCCL's VERSION prints the version only: strata's WARN is the nearest.
      setenv("STRATA_DEBUG", level == "VERSION" ? "WARN" : debug, 0);
    }
    const char* subsys = std::getenv("NCCL_DEBUG_SUBSYS");
    if (subsys != nullptr && !env::isSet(env::var::STRATA_DEBUG_SUBSYS)) {
      setenv("STRATA_DEBUG_SUBSYS", subsys, 0);
    }
    // The same pattern language (%h, %p): strata's log lines go where NCCL's would.
    const char* file = std::getenv("NCCL_DEBUG_FILE");
    if (file != nullptr && !env::isSet(env::var::STRATA_DEBUG_FILE)) {
      setenv("STRATA_DEBUG_FILE", file, 0);
    }
    if (infoEnabled()) {
      int version = 0;
      strataGetVersion(&version);
      char host[64] = {};
      gethostname(host, sizeof host - 1);
      std::fprintf(stderr,
                   "%s:%d:%d NCCL INFO strata %d.%d.%d serves NCCL's API (libstrata_nccl, "
                   "NCCL ABI %d.%d.%d); STRATA_NCCL_FALLBACK=%s\n",
                   host, getpid(), gettid(), version / 10000, version / 100 % 100, version % 100,
                   NCCL_MAJOR, NCCL_MINOR, NCCL_PATCH,
                   env::get(env::var::STRATA_NCCL_FALLBACK).c_str());
    }
  });
}

// With NCCL_DEBUG=INFO the drop-in says that it serves NCCL's API as soon as it is loaded: a
// program may load it long before its first NCCL call, or never make one (PyTorch's import
// makes none: torch.cuda.nccl.version() is the version it was built with).
__attribute__((constructor)) static void announceAtLoad() {
  if (infoEnabled()) announce();
}

}  // namespace strata::nccl_dropin
