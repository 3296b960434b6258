#include "common/fabric_traits.h"

namespace strata {

const FabricTraits& traitsOf(const std::vector<FabricTraits>& table, const std::string& name) {
  for (const FabricTraits& t : table) {
    if (t.name == name) return t;
  }
  static const FabricTraits unknown{};
  return unknown;
}

}  // namespace strata
