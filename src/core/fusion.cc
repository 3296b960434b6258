#include "core/fusion.h"

#include <map>
#include <utility>

#include "common/datatype.h"

namespace strata::core {

std::vector<FusionUnit> fusePlan(const std::vector<Call>& calls, size_t thetaBytes) {
  std::vector<FusionUnit> units;
  // The open pack of each (type, op), as an index into `units`.
  std::map<std::pair<int, int>, size_t> open;
  for (size_t i = 0; i < calls.size(); ++i) {
    const Call& k = calls[i];
    const size_t bytes = k.count * dataTypeSize(k.type);
    const bool fusable =
        thetaBytes > 0 && k.coll == Collective::kAllReduce && k.count > 0 && bytes < thetaBytes;
    if (!fusable) {
      // Allreduces too large to pack run alone and leave the open packs open (they do not
      // depend on each other); anything else is a barrier for packing.
      if (k.coll != Collective::kAllReduce || k.count == 0) open.clear();
      FusionUnit u;
      u.members.push_back(i);
      u.bytes = bytes;
      units.push_back(std::move(u));
      continue;
    }
    const std::pair<int, int> key{static_cast<int>(k.type), static_cast<int>(k.op)};
    auto it = open.find(key);
    if (it != open.end() && units[it->second].bytes + bytes <= thetaBytes) {
      units[it->second].members.push_back(i);
      units[it->second].bytes += bytes;
      continue;
    }
    FusionUnit u;
    u.members.push_back(i);
    u.bytes = bytes;
    open[key] = units.size();
    units.push_back(std::move(u));
  }
  return units;
}

}  // namespace strata::core
