// Shared by the libFuzzer targets: quiet logs, and a check that fails the run loudly.
#pragma once

#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace strata::fuzz {

// Parsers log each refusal at WARN; thousands a second would drown the fuzzer's own output and
// slow it. hwloc prints its own complaints unless told not to.
inline void quietLogs() {
  setenv("STRATA_DEBUG", "NONE", 1);
  setenv("HWLOC_HIDE_ERRORS", "2", 1);
}

// A property of a successful parse that does not hold: a bug even without a crash, so abort (the
// fuzzer saves the input as a crash).
inline void require(bool ok, const char* what, const std::string& detail = "") {
  if (ok) return;
  std::fprintf(stderr, "fuzz property failed: %s\n%s\n", what, detail.c_str());
  std::abort();
}

inline std::string textOf(const uint8_t* data, size_t size) {
  return std::string(reinterpret_cast<const char*>(data), size);
}

}  // namespace strata::fuzz

#define STRATA_FUZZ_INIT                               \
  extern "C" int LLVMFuzzerInitialize(int*, char***) { \
    strata::fuzz::quietLogs();                         \
    return 0;                                          \
  }
