#include "decompose/plan.h"

#include <algorithm>
#include <set>
#include <sstream>

namespace strata::plan {
namespace {

// Whether the stages, in order, cover levels 0, 1, 2, ... as consecutive runs: the only shape
// an irregular hierarchy admits (its groups only nest innermost first).
bool innermostFirst(const Plan& p) {
  int next = 0;
  for (const Stage& s : p.stages) {
    for (int l : s.levels) {
      if (l != next++) return false;
    }
  }
  return true;
}

// The slowest link among a stage's levels, and the most sharing.
void mergeLinks(const topo::Hierarchy& h, const Stage& s, topo::Level* out) {
  bool first = true;
  for (int l : s.levels) {
    const topo::LinkModel& link = h.level(l).link;
    if (first || link.bandwidthGBps < out->link.bandwidthGBps ||
        out->link.kind == topo::LinkKind::kUnknown) {
      const double latency = first ? link.latencyUs : std::max(link.latencyUs, out->link.latencyUs);
      out->link = link;
      out->link.latencyUs = latency;
    } else {
      out->link.latencyUs = std::max(out->link.latencyUs, link.latencyUs);
    }
    out->linkSharing = std::max(first ? 1 : out->linkSharing, h.level(l).linkSharing);
    first = false;
  }
}

}  // namespace

std::string stageName(const topo::Hierarchy& h, const Stage& s) {
  std::string name;
  for (int l : s.levels) {
    if (!name.empty()) name += "+";
    name += (l >= 0 && l < h.numLevels()) ? h.level(l).name : "?";
  }
  return name;
}

const char* algorithmName(Algorithm a) { return a == Algorithm::kRing ? "ring" : "auto"; }

bool parseAlgorithm(const std::string& word, Algorithm* out) {
  for (Algorithm a : {Algorithm::kAuto, Algorithm::kRing}) {
    if (word == algorithmName(a)) {
      *out = a;
      return true;
    }
  }
  return false;
}

size_t planPieceBytes(const Plan& p) {
  size_t bytes = 0;
  for (const Stage& s : p.stages) {
    if (s.chunkBytes != 0 && (bytes == 0 || s.chunkBytes < bytes)) bytes = s.chunkBytes;
  }
  return bytes;
}

bool piecesOverlap(const Plan& p) {
  return !p.passthrough && p.stages.size() > 1 && p.stages.back().algorithm != Algorithm::kRing;
}

std::string describePlan(const topo::Hierarchy& h, const Plan& p) {
  if (p.passthrough) return "passthrough";
  std::ostringstream out;
  const size_t m = p.stages.size();
  // A wire type given by a plan file shows, so that plans differing only in it differ here
  // (core keys its forced plans by this text).
  auto wire = [&](size_t j) {
    return p.stages[j].wire ? std::string(" [wire ") + wireTypeName(*p.stages[j].wire) + "]" : "";
  };
  for (size_t j = 0; j + 1 < m; ++j) {
    out << "reduce_scatter@" << stageName(h, p.stages[j]) << wire(j) << ", ";
  }
  if (m > 0) {
    out << "allreduce@" << stageName(h, p.stages[m - 1]);
    if (p.stages[m - 1].algorithm != Algorithm::kAuto) {
      out << " (" << algorithmName(p.stages[m - 1].algorithm) << ")";
    }
    out << wire(m - 1);
  }
  for (size_t j = m - 1; j-- > 0;) out << ", all_gather@" << stageName(h, p.stages[j]) << wire(j);
  return out.str();
}

Status checkPlan(const topo::Hierarchy& h, const Plan& p) {
  if (p.passthrough) {
    if (!p.stages.empty()) return invalidArgument("a passthrough plan has no stages");
    return Status::ok();
  }
  if (p.stages.empty()) return invalidArgument("a plan needs at least one stage");
  std::set<int> seen;
  for (const Stage& s : p.stages) {
    if (s.levels.empty()) return invalidArgument("a stage has no level");
    for (size_t i = 0; i < s.levels.size(); ++i) {
      const int l = s.levels[i];
      if (l < 0 || l >= h.numLevels()) {
        return invalidArgument("level " + std::to_string(l) + " does not exist");
      }
      if (i > 0 && l <= s.levels[i - 1]) return invalidArgument("a stage's levels must ascend");
      if (!seen.insert(l).second) {
        return invalidArgument("level '" + h.level(l).name + "' appears in two stages");
      }
    }
  }
  for (int l = 0; l < h.numLevels(); ++l) {
    if (!seen.count(l)) return invalidArgument("level '" + h.level(l).name + "' is in no stage");
  }
  if (!h.isRegular() && !innermostFirst(p)) {
    return invalidArgument("the layout is irregular (" + h.describe() +
                           "): stages must take the levels innermost first");
  }
  return Status::ok();
}

const std::string& stageFabric(const topo::Hierarchy& h, const Stage& s) {
  return s.fabric.empty() ? h.level(s.levels.back()).fabric : s.fabric;
}

StatusOr<topo::Hierarchy> planHierarchy(const topo::Hierarchy& h, const Plan& p) {
  STRATA_RETURN_IF_ERROR(checkPlan(h, p));
  if (p.passthrough) return invalidArgument("a passthrough plan has no hierarchy");
  const int m = static_cast<int>(p.stages.size());
  std::vector<topo::Level> levels;
  for (const Stage& s : p.stages) {
    topo::Level lv(stageName(h, s), stageFabric(h, s));
    mergeLinks(h, s, &lv);
    levels.push_back(std::move(lv));
  }
  // Derived level j groups the ranks that agree on every level not yet covered by S0..Sj.
  // Innermost-first plans use the original groups (which also works when irregular); other
  // orders use coordinates (regular hierarchies only, checked above).
  const bool prefix = innermostFirst(p);
  std::vector<std::vector<std::string>> keys(h.numRanks());
  std::vector<bool> covered(h.numLevels(), false);
  int top = -1;
  for (int j = 0; j < m; ++j) {
    for (int l : p.stages[j].levels) {
      covered[l] = true;
      top = std::max(top, l);
    }
    for (int r = 0; r < h.numRanks(); ++r) {
      std::string key;
      if (j == m - 1) {
        key = "";
      } else if (prefix) {
        key = std::to_string(h.group(r, top));
      } else {
        for (int l = 0; l < h.numLevels(); ++l) {
          if (!covered[l]) key += std::to_string(h.coord(r, l)) + ",";
        }
      }
      keys[r].push_back(key);
    }
  }
  return topo::Hierarchy::fromKeys(std::move(levels), keys);
}

}  // namespace strata::plan
