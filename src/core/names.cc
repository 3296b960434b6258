#include "core/names.h"

#include <unistd.h>

#include <cinttypes>
#include <cstdio>

#include "common/log.h"

namespace strata::core {

std::string hashText(uint64_t hash) {
  char text[24];
  std::snprintf(text, sizeof(text), "0x%016" PRIx64, hash);
  return text;
}

std::string rankFilePath(const std::string& pattern, int rank, const std::string& hostName) {
  std::string withRank;
  for (size_t i = 0; i < pattern.size(); ++i) {
    if (pattern[i] == '%' && i + 1 < pattern.size() && pattern[i + 1] == 'r') {
      withRank += std::to_string(rank);
      ++i;
    } else if (pattern[i] == '%' && i + 1 < pattern.size() && pattern[i + 1] == '%') {
      withRank += "%%";  // left for the expansion below
      ++i;
    } else {
      withRank += pattern[i];
    }
  }
  return detail::expandLogFilePattern(withRank, hostName, static_cast<long>(getpid()));
}

}  // namespace strata::core
