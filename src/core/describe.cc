#include "core/describe.h"


#include <cstdio>
#include <sstream>

#include "common/log.h"
#include "strata/strata.h"

namespace strata::core {

std::string describeComm(const Comm& c) {
  const topo::Hierarchy& h = c.hierarchy();
  std::ostringstream out;
  out << "hierarchy " << h.describe() << " over " << c.size() << " ranks (" << c.hierarchySource()
      << ")\n";
  for (int l = 0; l < h.numLevels(); ++l) {
    out << "  level " << l << " " << h.level(l).name << ": " << h.numGroups(l) << " group"
        << (h.numGroups(l) == 1 ? "" : "s") << " of ";
    if (h.width(l) == h.maxChildren(l)) {
      out << h.width(l);
    } else {
      out << h.width(l) << " to " << h.maxChildren(l) << " (irregular: the first " << h.width(l)
          << " of each group hold shards)";
    }
    out << ", fabric " << h.level(l).fabric;
    const topo::LinkModel& link = h.level(l).link;
    if (link.kind != topo::LinkKind::kUnknown) {
      out << ", link " << topo::linkKindName(link.kind) << " " << link.bandwidthGBps << " GB/s "
          << link.latencyUs << " us";
      if (h.level(l).linkSharing > 1) out << " shared by " << h.level(l).linkSharing;
      if (!link.source.empty()) out << " (" << link.source << ")";
    }
    out << "\n";
  }
  out << "  rank " << c.rank() << ":";
  for (int l = 0; l < h.numLevels(); ++l) {
    out << " " << h.level(l).name << " group " << h.group(c.rank(), l) << " position "
        << h.coord(c.rank(), l) << (l + 1 < h.numLevels() ? ";" : "");
  }
  out << "\n";
  // Device fabrics exist once a device call needed them (core/device_side.h).
  bool anyDevice = false;
  std::ostringstream dev;
  for (size_t l = 0; l < c.groups().levels().size(); ++l) {
    const LevelGroup* g = c.groups().levels()[l];
    if (g == nullptr || !g->deviceFabric) continue;
    dev << (anyDevice ? "; " : "") << h.level(static_cast<int>(l)).name << " "
        << g->deviceFabric->name();
    anyDevice = true;
  }
  if (anyDevice) out << "  device buffers (this rank): " << dev.str() << "\n";
  return out.str();
}


void logInitStart(const Comm& c, const std::string& origin) {
  STRATA_INFO(kSubsysInit,
              "comm %p rank %d nranks %d commHash %s - Init START (strata %d.%d.%d, %s)",
              static_cast<const void*>(&c), c.rank(), c.size(), hashText(c.hash()).c_str(),
              STRATA_MAJOR, STRATA_MINOR, STRATA_PATCH, origin.c_str());
}

void logInitComplete(const Comm& c, double milliseconds) {
  if (!logEnabled(LogLevel::kInfo, kSubsysInit | kSubsysTopo | kSubsysPlan)) return;
  // One line per line of strataCommDescribe's text: the hierarchy, each level (groups, fabric,
  // link) and this rank's place in it.
  std::istringstream lines(describeComm(c));
  for (std::string line; std::getline(lines, line);) {
    STRATA_INFO(kSubsysInit | kSubsysTopo, "%s", line.c_str());
  }
  STRATA_INFO(kSubsysInit | kSubsysPlan,
              "plans from %s; each size bucket's plan is logged on its first use",
              c.plans().source().c_str());
  STRATA_INFO(kSubsysInit, "comm %p rank %d nranks %d commHash %s - Init COMPLETE in %.1f ms",
              static_cast<const void*>(&c), c.rank(), c.size(), hashText(c.hash()).c_str(),
              milliseconds);
}

}  // namespace strata::core
