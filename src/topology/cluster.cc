#include "topology/cluster.h"

#include <algorithm>
#include <cctype>
#include <functional>
#include <set>
#include <sstream>

#include "common/strings.h"
#include "topology/gpu_matrix.h"
#include "topology/link_model.h"

namespace strata::topo {
namespace {

// "0000:3b:00.0" and "00000000:3B:00.0" -> "3b:00.0" plus the domain as a number.
std::string normalBusid(const std::string& busid) {
  const std::string s = lower(busid);
  const size_t colon = s.find(':');
  if (colon == std::string::npos || s.find(':', colon + 1) == std::string::npos) return s;
  const std::string domain = s.substr(0, colon);
  const size_t nonzero = domain.find_first_not_of('0');
  return (nonzero == std::string::npos ? "0" : domain.substr(nonzero)) + s.substr(colon);
}

const NodeTopology* hostOf(const Cluster& c, const std::string& host) {
  auto it = c.hosts.find(host);
  return it == c.hosts.end() ? nullptr : &it->second;
}

// Connected components of the GPUs of one host over NVLink/NVSwitch links.
std::vector<int> nvlinkComponents(const NodeTopology& t) {
  std::vector<int> comp(t.gpus.size());
  for (size_t i = 0; i < comp.size(); ++i) comp[i] = static_cast<int>(i);
  std::function<int(int)> root = [&](int x) { return comp[x] == x ? x : comp[x] = root(comp[x]); };
  for (const GpuLink& l : t.links) {
    if (l.a >= 0 && l.b >= 0 && l.a < static_cast<int>(comp.size()) &&
        l.b < static_cast<int>(comp.size())) {
      comp[root(l.a)] = root(l.b);
    }
  }
  for (size_t i = 0; i < comp.size(); ++i) comp[i] = root(static_cast<int>(i));
  return comp;
}

// The slower of two links (the level is as fast as its slowest group). On equal bandwidth the
// one with more latency is slower: an SMP path capped at its PCIe legs' bandwidth must still
// name the level's link smp, not pcie.
void keepSlowest(LinkModel* level, const LinkModel& candidate) {
  if (level->kind == LinkKind::kUnknown || candidate.bandwidthGBps < level->bandwidthGBps ||
      (candidate.bandwidthGBps == level->bandwidthGBps && candidate.latencyUs > level->latencyUs)) {
    *level = candidate;
  }
}

// The slowest direct NVLink among `gpus`: what a ring inside an NVLink component runs over (on
// a cube mesh, like DGX-1, not every pair is linked, but rings exist over the links alone).
LinkModel nvlinkOnly(const NodeTopology& t, const std::vector<int>& gpus) {
  std::set<int> in(gpus.begin(), gpus.end());
  LinkModel link;
  for (const GpuLink& l : t.links) {
    if (in.count(l.a) && in.count(l.b)) keepSlowest(&link, gpuPairLink(t, l.a, l.b));
  }
  return link;
}

// The link between the GPUs (or CPUs) of a set of ranks on one host.
LinkModel intraHostLink(const NodeTopology* t, const std::vector<int>& gpus, bool crossPackages,
                        bool nvlinkGroup) {
  if (t != nullptr && nvlinkGroup) {
    LinkModel nv = nvlinkOnly(*t, gpus);
    if (nv.kind != LinkKind::kUnknown) return nv;
  }
  LinkModel link;
  bool any = false;
  if (t != nullptr && gpus.size() > 1) {
    for (size_t i = 0; i < gpus.size(); ++i) {
      for (size_t j = i + 1; j < gpus.size(); ++j) {
        if (gpus[i] < 0 || gpus[j] < 0 || gpus[i] == gpus[j]) continue;
        keepSlowest(&link, gpuPairLink(*t, gpus[i], gpus[j]));
        any = true;
      }
    }
  }
  if (any) return link;
  return crossPackages ? smpLink() : sharedMemoryLink();
}

LinkModel nicLink(const Nic& n) {
  LinkKind kind = LinkKind::kEthernet;
  if (n.type == "infiniband") kind = LinkKind::kInfiniband;
  if (n.type == "roce") kind = LinkKind::kRoce;
  if (n.type == "efa") kind = LinkKind::kEfa;
  return networkLink(kind, n.rateGbps);
}

// The network link of one host: its fastest usable NIC, and how many NICs share the load.
LinkModel hostNetwork(const NodeTopology* t, int* usableNics) {
  LinkModel best = networkLink(LinkKind::kEthernet, 0);
  best.source = "default (no NIC known)";
  *usableNics = 1;
  if (t == nullptr) return best;
  bool found = false;
  int count = 0;
  for (const Nic& n : t->nics) {
    if (n.state == "down") continue;
    const LinkModel l = nicLink(n);
    if (!found || l.bandwidthGBps > best.bandwidthGBps) best = l;
    found = true;
    ++count;
  }
  if (count > 0) *usableNics = count;
  return best;
}

std::string summary(const NodeTopology* t, int ranks) {
  std::ostringstream s;
  s << ranks << " ranks";
  if (t == nullptr) return s.str();
  std::set<std::string> models;
  for (const Gpu& g : t->gpus) models.insert(g.name);
  s << ", " << t->gpus.size() << " GPUs";
  if (!models.empty()) {
    s << " (";
    bool first = true;
    for (const std::string& m : models) s << (first ? "" : ", ") << m, first = false;
    s << ")";
  }
  int usable = 0;
  const LinkModel net = hostNetwork(t, &usable);
  s << ", " << t->nics.size() << " NICs, network " << linkKindName(net.kind) << " "
    << net.bandwidthGBps << " GB/s, " << t->packages << " packages";
  return s.str();
}

}  // namespace

int gpuByBusid(const NodeTopology& topo, const std::string& busid) {
  if (busid.empty()) return -1;
  const std::string want = normalBusid(busid);
  for (size_t i = 0; i < topo.gpus.size(); ++i) {
    if (!topo.gpus[i].pci.busid.empty() && normalBusid(topo.gpus[i].pci.busid) == want) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

StatusOr<ClusterHierarchy> buildClusterHierarchy(const Cluster& c, const std::string& hostFabric,
                                                 const std::string& networkFabric) {
  const int p = static_cast<int>(c.ranks.size());
  if (p == 0) return invalidArgument("a cluster needs at least one rank");
  // Per rank: its GPU index on its host, and its NVLink component.
  std::vector<int> gpu(p, -1), component(p, -1);
  std::map<std::string, std::vector<int>> ranksOf;  // host -> ranks
  for (int r = 0; r < p; ++r) {
    ranksOf[c.ranks[r].host].push_back(r);
    if (const NodeTopology* t = hostOf(c, c.ranks[r].host)) {
      gpu[r] = gpuByBusid(*t, c.ranks[r].gpuBusid);
    }
  }
  // An NVLink level exists where two ranks of a host use NVLink-joined GPUs.
  bool nvlinkLevel = false;
  for (const auto& [host, ranks] : ranksOf) {
    const NodeTopology* t = hostOf(c, host);
    if (t == nullptr) continue;
    const std::vector<int> comp = nvlinkComponents(*t);
    std::map<int, int> members;
    for (int r : ranks) {
      if (gpu[r] >= 0) component[r] = comp[gpu[r]];
      if (component[r] >= 0) nvlinkLevel = nvlinkLevel || ++members[component[r]] > 1;
    }
  }
  // Sockets count only on hosts whose every rank is bound inside one package, and the level
  // exists only where some host's ranks span two packages (else it would just be the node).
  std::map<std::string, bool> packaged;
  bool socketLevel = false;
  for (const auto& [host, ranks] : ranksOf) {
    bool all = true;
    std::set<int> packages;
    for (int r : ranks) {
      all = all && c.ranks[r].package >= 0;
      packages.insert(c.ranks[r].package);
    }
    packaged[host] = all;
    socketLevel = socketLevel || (all && packages.size() > 1);
  }
  socketLevel = socketLevel && !nvlinkLevel;

  std::vector<Level> levels;
  std::vector<std::vector<std::string>> keys(p);
  if (nvlinkLevel) levels.push_back({"nvlink", hostFabric, {}, 1});
  if (socketLevel) levels.push_back({"socket", hostFabric, {}, 1});
  levels.push_back({"node", hostFabric, {}, 1});
  levels.push_back({"network", networkFabric, {}, 1});
  for (int r = 0; r < p; ++r) {
    const RankPlace& place = c.ranks[r];
    if (nvlinkLevel) {
      keys[r].push_back(component[r] >= 0 ? place.host + "#nvlink" + std::to_string(component[r])
                                          : place.host + "#rank" + std::to_string(r));
    }
    if (socketLevel) {
      keys[r].push_back(packaged[place.host]
                            ? place.host + "#package" + std::to_string(place.package)
                            : place.host);
    }
    keys[r].push_back(place.host);
    keys[r].push_back("");
  }
  STRATA_ASSIGN_OR_RETURN(Hierarchy h, Hierarchy::fromKeys(levels, keys));

  // Links: for each level, the slowest group's link. Inner levels are within a host.
  std::vector<Level> linked = h.levels();
  const int k = h.numLevels();
  for (int l = 0; l + 1 < k; ++l) {
    std::map<int, std::vector<int>> groups;  // group -> ranks
    for (int r = 0; r < p; ++r) groups[h.group(r, l)].push_back(r);
    for (const auto& [g, ranks] : groups) {
      if (ranks.size() < 2) continue;
      std::vector<int> gpus;
      std::set<int> packages;
      for (int r : ranks) {
        gpus.push_back(gpu[r]);
        packages.insert(c.ranks[r].package);
      }
      const NodeTopology* t = hostOf(c, c.ranks[ranks[0]].host);
      const bool cross = packages.size() > 1 || packages.count(-1) > 0;
      const bool nvlinkGroup = nvlinkLevel && l == 0;
      keepSlowest(&linked[l].link,
                  intraHostLink(t, gpus, cross && t != nullptr && t->packages > 1, nvlinkGroup));
    }
    if (linked[l].link.kind == LinkKind::kUnknown) linked[l].link = sharedMemoryLink();
  }
  // The top level is the network; the ranks of a host that hold a shard at the top all drive
  // their network groups at once through the host's NICs.
  int perHost = 1;
  for (int l = 0; l + 1 < k; ++l) perHost *= std::max(1, h.width(l));
  LinkModel network;
  int sharing = 1;
  for (const auto& [host, ranks] : ranksOf) {
    int nics = 1;
    keepSlowest(&network, hostNetwork(hostOf(c, host), &nics));
    sharing = std::max(sharing, (perHost + nics - 1) / nics);
  }
  if (ranksOf.size() > 1) {
    linked[k - 1].link = network;
    linked[k - 1].linkSharing = sharing;
  }  // one host: the network level has one child and is dropped below
  STRATA_ASSIGN_OR_RETURN(Hierarchy withLinks, h.withLevels(std::move(linked)));

  ClusterHierarchy out{withLinks.withoutTrivialLevels(), {}};
  // Heterogeneity: compare each host with the first.
  const std::string first = ranksOf.begin()->first;
  const std::string ref =
      summary(hostOf(c, first), static_cast<int>(ranksOf.begin()->second.size()));
  for (const auto& [host, ranks] : ranksOf) {
    const std::string mine = summary(hostOf(c, host), static_cast<int>(ranks.size()));
    if (mine != ref)
      out.differences.push_back("host " + host + ": " + mine + "; host " + first + ": " + ref);
  }
  return out;
}

}  // namespace strata::topo
