#include "topo_render.h"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <utility>

#include "topology/gpu_matrix.h"
#include "topology/topo_json.h"

namespace strata::tools {
namespace {

using topo::Gpu;
using topo::GpuLink;
using topo::LinkKind;
using topo::Nic;
using topo::NodeTopology;

std::string gpuLine(int index, const Gpu& g) {
  std::ostringstream s;
  const std::string label = "GPU" + std::to_string(index);
  s << label;
  // nvidia-smi input names its GPUs "GPU0".. and nothing else: do not say it twice.
  if (!g.name.empty() && g.name != label) s << "  " << g.name;
  if (!g.vendor.empty()) s << "  (" << g.vendor << ")";
  if (!g.pci.busid.empty()) s << "  pci " << g.pci.busid;
  if (!g.osdev.empty()) s << "  osdev " << g.osdev;
  if (g.cudaIndex >= 0) s << "  cuda " << g.cudaIndex;
  if (g.pci.linkGen > 0 || g.pci.linkWidth > 0) {
    s << "  PCIe gen" << (g.pci.linkGen > 0 ? std::to_string(g.pci.linkGen) : "?") << " x"
      << (g.pci.linkWidth > 0 ? std::to_string(g.pci.linkWidth) : "?");
  }
  return s.str();
}

std::string nicLine(int index, const Nic& n) {
  std::ostringstream s;
  s << "NIC" << index << "  ";
  if (!n.name.empty()) {
    s << n.name;
  } else {
    s << (n.pci.busid.empty() ? "(unnamed)" : n.pci.busid);
  }
  s << "  " << (n.type.empty() ? "unknown" : n.type);
  if (n.rateGbps > 0) s << "  " << formatNumber(n.rateGbps) << " Gb/s";
  if (!n.state.empty()) s << "  " << n.state;
  if (n.port > 0) s << "  port " << n.port;
  if (!n.name.empty() && !n.pci.busid.empty()) s << "  pci " << n.pci.busid;
  return s.str();
}

// Groups GPUs into the components their NVSwitch links join.
std::vector<std::vector<int>> nvswitchDomains(
    const NodeTopology& t, const std::map<std::pair<int, int>, const GpuLink*>& pairs) {
  std::vector<int> parent(t.gpus.size());
  for (size_t i = 0; i < parent.size(); ++i) parent[i] = static_cast<int>(i);
  std::function<int(int)> root = [&](int x) {
    return parent[x] == x ? x : parent[x] = root(parent[x]);
  };
  for (const auto& [pair, link] : pairs) {
    if (link->kind == LinkKind::kNvswitch) parent[root(pair.first)] = root(pair.second);
  }
  std::map<int, std::vector<int>> members;
  for (int i = 0; i < static_cast<int>(parent.size()); ++i) members[root(i)].push_back(i);
  std::vector<std::vector<int>> out;
  for (auto& [r, m] : members) {
    if (m.size() > 1) out.push_back(std::move(m));
  }
  return out;
}

// "6 links x 25 GB/s = 150 GB/s", or "150 GB/s" when the lane count is unknown.
std::string laneText(const GpuLink& link, double bandwidth) {
  if (link.count <= 0) return formatNumber(bandwidth) + " GB/s";
  return std::to_string(link.count) + " link" + (link.count == 1 ? "" : "s") + " x " +
         formatNumber(bandwidth / link.count) + " GB/s = " + formatNumber(bandwidth) + " GB/s";
}

std::string generationText(const GpuLink& link) {
  return link.generation > 0 ? " (NVLink gen " + std::to_string(link.generation) + ")" : "";
}

}  // namespace

std::string formatNumber(double value) {
  char buf[64];
  if (std::fabs(value - std::round(value)) < 1e-9 && std::fabs(value) < 1e15) {
    std::snprintf(buf, sizeof(buf), "%.0f", value);
    return buf;
  }
  std::snprintf(buf, sizeof(buf), "%.6g", value);
  return buf;
}

std::string formatRanges(const std::vector<int>& values) {
  // The kernel's list format ("0-3,5,7-8") with room after each comma, for prose.
  std::string out;
  for (char c : topo::formatCpuList(values))
    out += c == ',' ? std::string(", ") : std::string(1, c);
  return out;
}

std::string formatLinks(const NodeTopology& t) {
  const int n = static_cast<int>(t.gpus.size());
  // One entry per GPU pair: the first listed link, as NodeTopology::nvlinkBetween picks it.
  std::map<std::pair<int, int>, const GpuLink*> pairs;
  for (const GpuLink& l : t.links) {
    if (l.a < 0 || l.b < 0 || l.a >= n || l.b >= n || l.a == l.b) continue;
    pairs.emplace(std::make_pair(std::min(l.a, l.b), std::max(l.a, l.b)), &l);
  }
  std::ostringstream out;
  std::set<std::pair<int, int>> described;
  // An NVSwitch domain whose every pair has the same link reads best as one line.
  for (const std::vector<int>& domain : nvswitchDomains(t, pairs)) {
    const GpuLink* first = pairs.at({domain[0], domain[1]});
    const double bandwidth = topo::gpuPairLink(t, domain[0], domain[1]).bandwidthGBps;
    bool uniform = true;
    for (size_t i = 0; i < domain.size() && uniform; ++i) {
      for (size_t j = i + 1; j < domain.size() && uniform; ++j) {
        auto it = pairs.find({domain[i], domain[j]});
        uniform = it != pairs.end() && it->second->kind == LinkKind::kNvswitch &&
                  it->second->count == first->count &&
                  topo::gpuPairLink(t, domain[i], domain[j]).bandwidthGBps == bandwidth;
      }
    }
    if (!uniform) continue;
    out << "  NVSwitch: " << domain.size() << " GPUs";
    if (static_cast<int>(domain.size()) < n) out << " (GPU " << formatRanges(domain) << ")";
    out << " all-to-all, " << laneText(*first, bandwidth) << " per GPU" << generationText(*first)
        << "\n";
    for (size_t i = 0; i < domain.size(); ++i) {
      for (size_t j = i + 1; j < domain.size(); ++j) described.insert({domain[i], domain[j]});
    }
  }
  for (const auto& [pair, link] : pairs) {
    if (described.count(pair) > 0) continue;
    out << "  GPU" << pair.first << "-GPU" << pair.second << ": NV"
        << (link->count > 0 ? std::to_string(link->count) : "") << " ("
        << topo::linkKindName(link->kind) << "), "
        << laneText(*link, topo::gpuPairLink(t, pair.first, pair.second).bandwidthGBps)
        << generationText(*link) << "\n";
  }
  if (pairs.empty() && n > 1) {
    // Say "none" only where the source could have shown NVLink (see NodeTopology::nvlinkKnown).
    out << (t.nvlinkKnown ? "  no NVLink: GPUs talk over PCIe and SMP (see the matrix)\n"
                          : "  no NVLink information in " +
                                (t.source.empty() ? std::string("the input") : t.source) +
                                ": the matrix and levels assume PCIe and SMP only\n");
  }
  if (t.packages > 1) {
    const topo::LinkModel& s = t.interSocket;
    if (s.kind == LinkKind::kUnknown) {
      out << "  inter-socket: " << t.packages << " packages, link not described\n";
    } else {
      out << "  inter-socket: " << topo::linkKindName(s.kind) << ", "
          << formatNumber(s.bandwidthGBps) << " GB/s, " << formatNumber(s.latencyUs) << " us"
          << (s.source.empty() ? "" : " (" + s.source + ")") << "\n";
    }
  }
  if (t.nvswitches > 0) out << "  NVSwitches: " << t.nvswitches << "\n";
  return out.str();
}

std::string formatNodeTree(const NodeTopology& t) {
  std::ostringstream out;
  out << "host " << (t.host.empty() ? "(unnamed)" : t.host)
      << "  (source: " << (t.source.empty() ? "unknown" : t.source) << ")\n";
  out << t.packages << " package" << (t.packages == 1 ? "" : "s") << ", " << t.numaNodes
      << " NUMA node" << (t.numaNodes == 1 ? "" : "s") << ", " << t.cores << " cores; "
      << t.gpus.size() << " GPU" << (t.gpus.size() == 1 ? "" : "s") << ", " << t.nics.size()
      << " NIC" << (t.nics.size() == 1 ? "" : "s") << "\n";

  // package -> NUMA node (-1: unknown) -> device lines; package -1 collects the unplaced.
  std::map<int, std::map<int, std::vector<std::string>>> tree;
  auto place = [&](const topo::PciPlace& p, std::string line) {
    if (p.package < 0 && p.numa >= 0) line += "  (NUMA node " + std::to_string(p.numa) + ")";
    tree[p.package][p.package < 0 ? -1 : p.numa].push_back(std::move(line));
  };
  for (size_t i = 0; i < t.gpus.size(); ++i)
    place(t.gpus[i].pci, gpuLine(static_cast<int>(i), t.gpus[i]));
  for (size_t i = 0; i < t.nics.size(); ++i)
    place(t.nics[i].pci, nicLine(static_cast<int>(i), t.nics[i]));

  int packages = t.packages;
  if (!tree.empty()) packages = std::max(packages, tree.rbegin()->first + 1);
  for (int p = 0; p < packages; ++p) {
    out << "package " << p << "\n";
    auto it = tree.find(p);
    if (it == tree.end()) {
      out << "  (no GPU or NIC)\n";
      continue;
    }
    // Known NUMA nodes in order, the unknown one last.
    std::vector<int> numas;
    for (const auto& [numa, lines] : it->second) {
      if (numa >= 0) numas.push_back(numa);
    }
    if (it->second.count(-1) > 0) numas.push_back(-1);
    for (int numa : numas) {
      out << "  NUMA node " << (numa >= 0 ? std::to_string(numa) : "unknown") << "\n";
      for (const std::string& line : it->second[numa]) out << "    " << line << "\n";
    }
  }
  if (tree.count(-1) > 0) {
    out << "unplaced (package unknown)\n";
    for (const std::string& line : tree[-1][-1]) out << "  " << line << "\n";
  }
  out << "links\n";
  const std::string links = formatLinks(t);
  out << (links.empty() ? "  none between GPUs\n" : links);
  return out.str();
}

std::string formatNodeMatrix(const NodeDescription& node) {
  if (node.matrix) return "(as printed in the file)\n" + topo::formatMatrix(*node.matrix);
  if (node.topo.gpus.empty() && node.topo.nics.empty()) {
    return "(none: the node has no GPU and no NIC)\n";
  }
  std::string out = topo::formatMatrix(topo::connectionMatrix(node.topo));
  if (!node.topo.nvlinkKnown && node.topo.gpus.size() > 1) {
    out += "\nNo NVLink information in the input: GPU pairs show their PCIe/SMP path only.\n";
  }
  return out;
}

nlohmann::json nodeJson(const NodeDescription& node) {
  const NodeTopology& t = node.topo;
  nlohmann::json j = topo::toJson(t);
  for (nlohmann::json& link : j["links"]) {
    const topo::LinkModel model = topo::gpuPairLink(t, link["a"].get<int>(), link["b"].get<int>());
    link["bandwidth_GBps"] = model.bandwidthGBps;
    link["bandwidth_source"] = model.source;
  }
  const topo::ConnectionMatrix m = node.matrix ? *node.matrix : topo::connectionMatrix(t);
  j["matrix"] = nlohmann::json{{"names", m.names},
                               {"cells", m.cells},
                               {"legend", m.legend},
                               {"cpu_affinity", m.cpuAffinity},
                               {"numa_affinity", m.numaAffinity},
                               {"from_file", node.matrix.has_value()}};
  return j;
}

}  // namespace strata::tools
