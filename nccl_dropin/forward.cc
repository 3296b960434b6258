// Where the drop-in's forwarding stubs (forward_x86_64.S) go: the real NCCL's function of the
// same name, or, where there is none, a stand-in that says so. The list of names is generated
// from the real library (nccl_exports.inc, gen_exports.py).
#include <dlfcn.h>

#include <atomic>
#include <cstdint>
#include <cstring>
#include <string>

#include "dropin.h"

extern "C" {
// One slot per function of nccl_exports.inc, in its order (forward_x86_64.S).
extern void* strataNcclForwardSlots[];
__attribute__((visibility("hidden"))) void* strataNcclForwardTarget(unsigned index);
}

namespace strata::nccl_dropin {
namespace {

struct Function {
  const char* name;
  const char* returns;  // the C return type, "?" where no header declares it
};

constexpr Function kFunctions[] = {
#define STRATA_NCCL_FUNCTION(index, name, rtype) {#name, rtype},
#define STRATA_NCCL_ALIAS(pname, name)
#include "nccl_exports.inc"
#undef STRATA_NCCL_FUNCTION
#undef STRATA_NCCL_ALIAS
};
constexpr unsigned kCount = sizeof kFunctions / sizeof kFunctions[0];
static_assert(kCount == STRATA_NCCL_FUNCTION_COUNT, "nccl_exports.inc is inconsistent");

// Stand-ins for a function the real NCCL lacks. They are reached by a jump with the caller's
// arguments in place: a function that takes none may ignore them (System V: the caller owns
// the stack). gen_exports.py admits only return types that come back in %rax (and %rdx), so
// zeroing both makes a zeroed value of any of them: 0, NULL, false, an empty ncclTeam.
ncclResult_t missingResult() { return ncclInvalidUsage; }
struct TwoWords {
  std::uint64_t lo, hi;
};
TwoWords missingZero() { return {0, 0}; }

std::atomic<bool> gWarned[kCount];

}  // namespace

void* realFunction(const char* name, std::string* why) {
  std::string reason;
  const nccl_lib::Api* api = realNccl(&reason);
  if (api == nullptr) {
    *why = "no real NCCL to forward it to: " + reason;
    return nullptr;
  }
  void* fn = dlsym(api->handle, name);
  if (fn == nullptr) *why = "the real NCCL (" + api->path + ") does not export it";
  return fn;
}

}  // namespace strata::nccl_dropin

using namespace strata::nccl_dropin;  // NOLINT

// Called by the lazy entry of slot `index` with the caller's arguments saved. The real function
// is cached in the slot (later calls jump straight to it); a missing one is not, so that every
// call records its error (the WARN is printed once per function).
void* strataNcclForwardTarget(unsigned index) {
  if (index >= kCount) return reinterpret_cast<void*>(&missingResult);  // cannot happen
  const Function& f = kFunctions[index];
  std::string why;
  if (void* fn = realFunction(f.name, &why)) {
    __atomic_store_n(&strataNcclForwardSlots[index], fn, __ATOMIC_RELEASE);
    return fn;
  }
  const bool result = std::strcmp(f.returns, "ncclResult_t") == 0;
  const std::string msg = std::string(f.name) + ": strata does not serve it and " + why +
                          (result ? "; returning ncclInvalidUsage"
                                  : std::string("; returning a zeroed ") +
                                        (std::strcmp(f.returns, "?") == 0 ? "value" : f.returns));
  fail(ncclInvalidUsage, msg, !gWarned[index].exchange(true));
  return result ? reinterpret_cast<void*>(&missingResult) : reinterpret_cast<void*>(&missingZero);
}
