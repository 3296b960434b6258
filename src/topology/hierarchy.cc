#include "topology/hierarchy.h"

#include <algorithm>
#include <climits>
#include <map>
#include <numeric>
#include <sstream>

namespace strata::topo {

// Fills numGroups_, width_, maxChildren_ and children_ from groups_ and coords_. A level-l
// group's children are counted as 1 + the highest coordinate at level l among its ranks
// (coordinates are dense, so this is their number).
void Hierarchy::computeStats() {
  const int k = numLevels();
  numGroups_.assign(k, 0);
  width_.assign(k, 0);
  maxChildren_.assign(k, 0);
  children_.assign(k, {});
  for (int l = 0; l < k; ++l) {
    int ngroups = 0;
    for (const auto& g : groups_) ngroups = std::max(ngroups, g[l] + 1);
    std::vector<int>& children = children_[l];
    children.assign(ngroups, 0);
    for (size_t r = 0; r < groups_.size(); ++r) {
      children[groups_[r][l]] = std::max(children[groups_[r][l]], coords_[r][l] + 1);
    }
    numGroups_[l] = ngroups;
    width_[l] = children.empty() ? 0 : *std::min_element(children.begin(), children.end());
    maxChildren_[l] = children.empty() ? 0 : *std::max_element(children.begin(), children.end());
  }
}

StatusOr<Hierarchy> Hierarchy::regular(std::vector<Level> levels, const std::vector<int>& sizes) {
  if (levels.empty() || levels.size() != sizes.size()) {
    return invalidArgument("a hierarchy needs one size per level and at least one level");
  }
  long long nranks = 1;
  for (size_t l = 0; l < sizes.size(); ++l) {
    if (sizes[l] <= 0) {
      return invalidArgument("level '" + levels[l].name + "' has size " + std::to_string(sizes[l]) +
                             "; sizes must be positive");
    }
    nranks *= sizes[l];
    if (nranks > INT_MAX) return invalidArgument("level sizes multiply to more than INT_MAX ranks");
  }
  Hierarchy h;
  h.levels_ = std::move(levels);
  const int k = static_cast<int>(sizes.size());
  h.coords_.assign(nranks, std::vector<int>(k));
  h.groups_.assign(nranks, std::vector<int>(k));
  for (int r = 0; r < nranks; ++r) {
    long long stride = 1;  // product of the sizes below level l
    for (int l = 0; l < k; ++l) {
      h.coords_[r][l] = static_cast<int>((r / stride) % sizes[l]);
      stride *= sizes[l];
      h.groups_[r][l] = static_cast<int>(r / stride);  // ranks sharing all coords above l
    }
  }
  h.computeStats();
  return h;
}

StatusOr<Hierarchy> Hierarchy::fromKeys(std::vector<Level> levels,
                                        const std::vector<std::vector<std::string>>& keys) {
  const int k = static_cast<int>(levels.size());
  const int nranks = static_cast<int>(keys.size());
  if (k == 0 || nranks == 0)
    return invalidArgument("a hierarchy needs at least one level and rank");
  for (int r = 0; r < nranks; ++r) {
    if (static_cast<int>(keys[r].size()) != k) {
      return internalError("rank " + std::to_string(r) + " has a key per level missing");
    }
    if (keys[r][k - 1] != keys[0][k - 1]) {
      return invalidArgument("the top level '" + levels[k - 1].name + "' must hold every rank");
    }
  }
  Hierarchy h;
  h.levels_ = std::move(levels);
  h.coords_.assign(nranks, std::vector<int>(k));
  h.groups_.assign(nranks, std::vector<int>(k));
  for (int l = 0; l < k; ++l) {
    // Dense group ids in order of each group's lowest rank, so ids are stable across ranks.
    std::map<std::string, int> ids;
    for (int r = 0; r < nranks; ++r) {
      auto it = ids.emplace(keys[r][l], static_cast<int>(ids.size())).first;
      h.groups_[r][l] = it->second;
    }
    // Groups must nest: one level-l group maps to one level-(l+1) group.
    if (l + 1 < k) {
      std::map<int, std::string> parent;
      for (int r = 0; r < nranks; ++r) {
        auto [it, fresh] = parent.emplace(h.groups_[r][l], keys[r][l + 1]);
        if (!fresh && it->second != keys[r][l + 1]) {
          return invalidArgument("level '" + h.levels_[l].name + "' group '" + keys[r][l] +
                                 "' spans two '" + h.levels_[l + 1].name + "' groups");
        }
      }
    }
    // Coordinates: position among the children of the level-l group, children ordered by
    // their lowest rank. A child is a rank at level 0 and a level-(l-1) group above it.
    std::map<int, std::map<int, int>> childIndex;  // level-l group -> child id -> position
    for (int r = 0; r < nranks; ++r) {
      const int child = (l == 0) ? r : h.groups_[r][l - 1];
      auto& children = childIndex[h.groups_[r][l]];
      auto it = children.emplace(child, static_cast<int>(children.size())).first;
      h.coords_[r][l] = it->second;
    }
  }
  h.computeStats();
  return h;
}

StatusOr<Hierarchy> Hierarchy::withLevels(std::vector<Level> levels) const {
  if (levels.size() != levels_.size()) {
    return internalError("withLevels: " + std::to_string(levels.size()) + " levels for a " +
                         std::to_string(levels_.size()) + "-level hierarchy");
  }
  Hierarchy h = *this;
  h.levels_ = std::move(levels);
  return h;
}

bool Hierarchy::isRegular() const {
  for (int l = 0; l < numLevels(); ++l) {
    if (width_[l] != maxChildren_[l]) return false;
  }
  return true;
}

StatusOr<Hierarchy> Hierarchy::subset(const std::vector<int>& ranks) const {
  if (ranks.empty()) return invalidArgument("a hierarchy of no ranks");
  std::vector<std::vector<std::string>> keys;
  for (int r : ranks) {
    if (r < 0 || r >= numRanks()) {
      return invalidArgument("rank " + std::to_string(r) + " is not in the hierarchy");
    }
    std::vector<std::string> k;
    for (int l = 0; l < numLevels(); ++l) k.push_back(std::to_string(groups_[r][l]));
    keys.push_back(std::move(k));
  }
  STRATA_ASSIGN_OR_RETURN(Hierarchy h, fromKeys(levels_, keys));
  return h.withoutTrivialLevels();
}

Hierarchy Hierarchy::withoutTrivialLevels() const {
  std::vector<int> keep;
  for (int l = 0; l < numLevels(); ++l) {
    if (maxChildren_[l] > 1) keep.push_back(l);
  }
  if (keep.empty()) keep.push_back(numLevels() - 1);
  if (static_cast<int>(keep.size()) == numLevels()) return *this;
  Hierarchy h;
  for (int l : keep) {
    h.levels_.push_back(levels_[l]);
  }
  // A dropped level l has one child per group, so its coordinate is always 0 and its groups are
  // exactly the groups of level l-1; the kept levels' groups and coordinates are unchanged.
  h.coords_.resize(coords_.size());
  h.groups_.resize(groups_.size());
  for (size_t r = 0; r < coords_.size(); ++r) {
    for (int l : keep) {
      h.coords_[r].push_back(coords_[r][l]);
      h.groups_[r].push_back(groups_[r][l]);
    }
  }
  h.computeStats();
  return h;
}

std::string Hierarchy::describe() const {
  std::ostringstream out;
  for (int l = 0; l < numLevels(); ++l) {
    if (l > 0) out << " x ";
    out << levels_[l].name << "(";
    if (width_[l] == maxChildren_[l]) {
      out << width_[l];
    } else {
      out << width_[l] << ".." << maxChildren_[l];
    }
    out << ")";
  }
  return out.str();
}

StageGroup stageGroup(const Hierarchy& h, int level, int rank) {
  StageGroup g;
  for (int m = 0; m < level; ++m) {
    if (h.coord(rank, m) >= h.width(m)) return g;  // holds no shard above level m
  }
  g.member = true;
  g.index = h.coord(rank, level);
  // Members: same level-l group, same lower coordinates. Their count is the number of children
  // of the level-l group, because each child holds exactly one rank with these coordinates.
  g.size = h.numChildren(level, h.group(rank, level));
  for (int s = 0; s < h.numRanks(); ++s) {
    if (h.group(s, level) != h.group(rank, level)) continue;
    bool same = true;
    for (int m = 0; m < level && same; ++m) same = h.coord(s, m) == h.coord(rank, m);
    if (same) {
      g.color = s;  // the lowest member's rank names the group
      break;
    }
  }
  return g;
}

bool levelCrossesHosts(const Hierarchy& h, int level, const std::vector<int>& hostOf) {
  std::map<int, int> hostOfGroup;  // group color -> the host of its first member seen
  for (int r = 0; r < h.numRanks() && r < static_cast<int>(hostOf.size()); ++r) {
    const StageGroup g = stageGroup(h, level, r);
    if (!g.member) continue;
    auto [it, inserted] = hostOfGroup.emplace(g.color, hostOf[r]);
    if (!inserted && it->second != hostOf[r]) return true;
  }
  return false;
}

}  // namespace strata::topo
