#include "topo_levels.h"

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <fstream>
#include <set>
#include <sstream>
#include <utility>

#include "common/env.h"
#include "tools_iface/tools_inputs.h"
#include "topo_render.h"
#include "topology/topo_file.h"
#include "topology/topo_json.h"

namespace strata::tools {
namespace {

bool nearlyEqual(double a, double b) {
  return std::fabs(a - b) <= 1e-9 * std::max(1.0, std::fabs(a));
}

// Why `loaded` differs from `saved` in what a topology file records, or "" when it does not.
std::string difference(const topo::Hierarchy& saved, const topo::Hierarchy& loaded) {
  if (saved.describe() != loaded.describe()) {
    return "it reads back as " + loaded.describe() + " instead of " + saved.describe();
  }
  for (int l = 0; l < saved.numLevels(); ++l) {
    const topo::Level& a = saved.level(l);
    const topo::Level& b = loaded.level(l);
    if (a.fabric != b.fabric || a.link.kind != b.link.kind ||
        !nearlyEqual(a.link.bandwidthGBps, b.link.bandwidthGBps) ||
        !nearlyEqual(a.link.latencyUs, b.link.latencyUs) || a.linkSharing != b.linkSharing) {
      return "level '" + a.name + "' reads back with another fabric or link";
    }
  }
  // Where each rank sits is not compared: a file places ranks in order whatever the job did
  // (firstRankOutOfOrder tells the caller).
  return "";
}

// A host description's source in user terms (NodeTopology::source: "live", "hwloc xml F", ...).
std::string sourceInWords(const std::string& source) {
  if (source == "live") return "live detection (hwloc, InfiniBand sysfs, CUDA/NVML)";
  if (source.empty()) return "an unnamed description";
  return source;
}

// Where the levels came from: the hosts and how each was described.
std::string originOf(const topo::Cluster& cluster) {
  std::set<std::string> sources;
  size_t undescribed = 0;
  std::set<std::string> hosts;
  for (const topo::RankPlace& r : cluster.ranks) hosts.insert(r.host);
  for (const std::string& host : hosts) {
    auto it = cluster.hosts.find(host);
    if (it == cluster.hosts.end()) {
      ++undescribed;
    } else {
      sources.insert(sourceInWords(it->second.source));
    }
  }
  std::string described;
  for (const std::string& s : sources) described += (described.empty() ? "" : "; ") + s;
  if (undescribed > 0) {
    described += (described.empty() ? "" : "; ") + std::to_string(undescribed) + " host" +
                 (undescribed == 1 ? "" : "s") + " not described";
  }
  const std::string count = std::to_string(hosts.size()) + " host" + (hosts.size() == 1 ? "" : "s");
  if (!cluster.origin.empty()) return "from " + described + "; " + cluster.origin;
  return "from the ranks' host names (" + count + ") and each host's description: " + described;
}

}  // namespace

int defaultRanksPerNode(const topo::NodeTopology& node) {
  if (!node.gpus.empty()) return static_cast<int>(node.gpus.size());
  return std::max(1, node.packages);
}

topo::Cluster imaginedCluster(const topo::NodeTopology& node, int nodes, int ranksPerNode) {
  topo::NodeTopology t = node;
  // Ranks find their GPU by bus id. GPUs read without one (nvidia-smi input) get a stand-in that
  // is no bus id, so that the PCIe relations computed from it stay those of an unknown one.
  for (size_t g = 0; g < t.gpus.size(); ++g) {
    if (t.gpus[g].pci.busid.empty()) t.gpus[g].pci.busid = "gpu" + std::to_string(g);
  }
  const int gpus = static_cast<int>(t.gpus.size());
  topo::Cluster c;
  c.origin = nodes == 1 ? "one node" : std::to_string(nodes) + " identical nodes assumed (--nodes)";
  for (int n = 0; n < nodes; ++n) {
    const std::string host = nodes == 1 && !t.host.empty() ? t.host : "node" + std::to_string(n);
    for (int i = 0; i < ranksPerNode; ++i) {
      topo::RankPlace place;
      place.host = host;
      if (gpus > 0) {
        const topo::Gpu& gpu = t.gpus[i % gpus];
        place.gpuBusid = gpu.pci.busid;
        place.package = gpu.pci.package;
      } else if (t.packages > 0) {
        place.package = static_cast<int>(static_cast<long long>(i) * t.packages / ranksPerNode);
      }
      c.ranks.push_back(std::move(place));
    }
    c.hosts[host] = t;
    c.hosts[host].host = host;
  }
  return c;
}

StatusOr<LevelsReport> levelsOfCluster(const topo::Cluster& cluster) {
  // The levels between hosts run on the engine STRATA_NET names (ucx unless set), as in a
  // communicator from MPI (fabrics/registry.h, netFabric). Read from the registry, not from
  // core's settings (tools reach core only through its tools view); refused as init refuses it.
  const std::string net = env::get(env::var::STRATA_NET);
  if (net != "mpi" && net != "ucx") {
    return invalidArgument("STRATA_NET=" + net + ": expected mpi or ucx");
  }
  STRATA_ASSIGN_OR_RETURN(topo::ClusterHierarchy ch,
                          topo::buildClusterHierarchy(cluster, "shm", net));
  return LevelsReport{std::move(ch.hierarchy), std::move(ch.differences), originOf(cluster)};
}

StatusOr<LevelsReport> levelsOfTopoFile(const std::string& path, int nranks) {
  STRATA_ASSIGN_OR_RETURN(topo::TopoFile file,
                          topo::loadTopoFile(path, tools_iface::fabricNames()));
  STRATA_ASSIGN_OR_RETURN(topo::Hierarchy h, topo::hierarchyFromTopoFile(file, path, nranks));
  // As strataCommInitMPI does: levels whose groups have one child move nothing.
  return LevelsReport{
      h.withoutTrivialLevels(), {}, "from the topology file " + path + " (STRATA_TOPO_FILE)"};
}

std::string formatLevels(const LevelsReport& report) {
  const topo::Hierarchy& h = report.hierarchy;
  std::ostringstream out;
  out << "hierarchy " << h.describe() << " over " << h.numRanks() << " rank"
      << (h.numRanks() == 1 ? "" : "s") << " (" << report.source << ")\n";
  for (int l = 0; l < h.numLevels(); ++l) {
    const topo::Level& lv = h.level(l);
    out << "  level " << l << " " << lv.name << ": " << h.numGroups(l) << " group"
        << (h.numGroups(l) == 1 ? "" : "s") << " of " << h.width(l);
    if (h.maxChildren(l) != h.width(l)) out << ".." << h.maxChildren(l);
    out << (l == 0 ? " rank" : " " + h.level(l - 1).name + " group")
        << (h.maxChildren(l) == 1 ? "" : "s") << "; link " << topo::linkKindName(lv.link.kind);
    // A lone rank's level has no link to model (nothing moves).
    if (lv.link.kind != topo::LinkKind::kUnknown) {
      out << ", " << formatNumber(lv.link.bandwidthGBps) << " GB/s, "
          << formatNumber(lv.link.latencyUs) << " us; link sharing " << lv.linkSharing
          << "; source " << (lv.link.source.empty() ? "unknown" : lv.link.source);
    }
    out << "; fabric " << lv.fabric << "\n";
  }
  for (const std::string& d : report.differences) out << "  difference: " << d << "\n";
  return out.str();
}

void addLevelsJson(const LevelsReport& report, nlohmann::json* out) {
  (*out)["hierarchy"] = report.hierarchy.describe();
  (*out)["levels"] = topo::levelsToJson(report.hierarchy);
  (*out)["differences"] = report.differences;
  (*out)["levels_source"] = report.source;
}

int firstRankOutOfOrder(const topo::Hierarchy& h) {
  if (!h.isRegular()) return -1;
  for (int r = 0; r < h.numRanks(); ++r) {
    int rest = r;
    for (int l = 0; l < h.numLevels(); ++l) {
      if (h.coord(r, l) != rest % h.width(l)) return r;
      rest /= h.width(l);
    }
  }
  return -1;
}

Status saveTopoFile(const topo::Hierarchy& h, const std::string& path) {
  if (!h.isRegular()) {
    return invalidArgument("cannot save " + h.describe() +
                           " to a topology file: its groups of one level differ in size, and a "
                           "topology file describes only regular hierarchies");
  }
  topo::TopoFile file;
  file.levels = h.levels();
  for (int l = 0; l < h.numLevels(); ++l) file.sizes.push_back(h.width(l));
  const std::string text =
      "# Written by strata-topo --save: " + h.describe() +
      ".\n# Ranks map in order: rank r is at position r % size[0] of its level-0 group, its\n"
      "# level-0 group at (r / size[0]) % size[1] of its level-1 group, and so on. This matches\n"
      "# a job whose ranks fill each group in rank order (mpirun --map-by slot or core).\n" +
      topo::formatTopoFile(file);

  // Check before writing: a file that does not read back to these levels must not be left behind.
  StatusOr<topo::TopoFile> parsed = topo::parseTopoFile(text, path, tools_iface::fabricNames());
  if (!parsed.isOk())
    return internalError("the saved text does not parse: " + parsed.status().message());
  StatusOr<topo::Hierarchy> loaded =
      topo::hierarchyFromTopoFile(parsed.value(), path, h.numRanks());
  if (!loaded.isOk())
    return internalError("the saved text is refused: " + loaded.status().message());
  const std::string why = difference(h, loaded.value());
  if (!why.empty()) return internalError("the saved topology file would not match: " + why);

  std::ofstream out(path, std::ios::trunc);
  if (!out) return invalidArgument(path + ": cannot write: " + std::strerror(errno));
  out << text;
  out.close();
  if (!out) return invalidArgument(path + ": cannot write: " + std::strerror(errno));
  return Status::ok();
}

}  // namespace strata::tools
