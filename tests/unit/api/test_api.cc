// strataGetErrorString's hints are true at every log level: the details are always in
// strataGetLastError, and STRATA_DEBUG=WARN is suggested only when the level hides warnings.
#include <catch2/catch.hpp>
#include <string>

#include "common/test_env_util.h"
#include "strata/strata.h"

namespace {

using strata::test::ScopedEnv;

TEST_CASE("error strings: STRATA_DEBUG=WARN is suggested only below WARN", "[api]") {
  const strataResult_t codes[] = {strataUnhandledCudaError, strataSystemError,
                                  strataInvalidArgument, strataInvalidUsage};
  for (const char* level : {static_cast<const char*>(nullptr), "WARN", "INFO", "TRACE"}) {
    ScopedEnv debug("STRATA_DEBUG", level);
    for (strataResult_t code : codes) {
      const std::string s = strataGetErrorString(code);
      INFO((level ? level : "(unset)") << ": " << s);
      CHECK(s.find("strataGetLastError") != std::string::npos);
      CHECK(s.find("STRATA_DEBUG") == std::string::npos);
    }
  }
  for (const char* level : {"NONE", "VERSION"}) {
    ScopedEnv debug("STRATA_DEBUG", level);
    for (strataResult_t code : codes) {
      const std::string s = strataGetErrorString(code);
      INFO(level << ": " << s);
      CHECK(s.find("strataGetLastError") != std::string::npos);
      CHECK(s.find("STRATA_DEBUG=WARN logs it") != std::string::npos);
    }
  }
}

}  // namespace
