#include "first_process.h"

#include <cstdlib>
#include <string>

namespace strata::tools {

bool firstProcess() {
  for (const char* name : {"OMPI_COMM_WORLD_RANK", "PMIX_RANK", "PMI_RANK"}) {
    const char* v = std::getenv(name);
    if (v != nullptr && *v != '\0') return std::string(v) == "0";
  }
  return true;
}

}  // namespace strata::tools
