// Sizes on the command line: the one size grammar of common/units.h, as environment variables
// and plan files read it ("64K", "16MiB", "1GB", "1048576"; docs/env.md, "Sizes and durations").
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/units.h"

namespace strata::tools {

// False for anything malformed, and for 2^63 bytes or more.
inline bool parseSizeArg(const std::string& text, size_t* out) {
  uint64_t bytes = 0;
  if (units::parseBytes(text, &bytes) != units::Problem::kNone) return false;
  *out = static_cast<size_t>(bytes);
  return true;
}

}  // namespace strata::tools
