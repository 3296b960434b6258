// The small value parsers: environment integers, the one size grammar (env, plan files and the
// tools' arguments read it), the one duration grammar, and the YAML helpers' integers. The first
// byte picks the parser.
#include <cmath>

#include "common/env.h"
#include "common/units.h"
#include "common/yaml_util.h"
#include "decompose/plan_file.h"
#include "fuzz_common.h"
#include "size_arg.h"

STRATA_FUZZ_INIT

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  using namespace strata;
  if (size == 0) return 0;
  const std::string text = fuzz::textOf(data + 1, size - 1);
  int64_t i = 0;
  size_t bytes = 0;
  bool tooLarge = false;
  switch (data[0] % 5) {
    case 0:
      if (env::detail::parseInteger(text, &i)) {
        fuzz::require(std::to_string(i) == text || text[0] == '+' || text[0] == '0' ||
                          text.rfind("-0", 0) == 0,
                      "an int reads back as written", text);
      }
      break;
    case 1: {
      double seconds = -1;
      if (units::parseDuration(text, 1, &seconds) == units::Problem::kNone)
        fuzz::require(seconds >= 0 && std::isfinite(seconds), "durations are finite, >= 0", text);
      break;
    }
    case 2:
      if (plan::detail::parseSize(text, &bytes, &tooLarge)) {
        fuzz::require(bytes < (size_t{1} << 63), "sizes stay below 2^63", text);
        size_t again = 0;
        fuzz::require(plan::detail::parseSize(plan::detail::sizeText(bytes), &again, &tooLarge) &&
                          again == bytes,
                      "sizeText reads back", text);
      }
      break;
    case 3:
      if (tools::parseSizeArg(text, &bytes))
        fuzz::require(bytes < (size_t{1} << 63), "size arguments stay below 2^63", text);
      break;
    default:
      (void)yaml::parseInteger(text, &i);
      break;
  }
  return 0;
}
