// Names of link kinds, and the NVLink lookup of NodeTopology.
#include "topology/node_topology.h"

#include <cctype>

#include "common/strings.h"
namespace strata::topo {
namespace {

struct KindName {
  LinkKind kind;
  const char* name;
};

// The names are part of the saved description format: never rename one.
constexpr KindName kKindNames[] = {
    {LinkKind::kUnknown, "unknown"},  {LinkKind::kLoopback, "loopback"},
    {LinkKind::kNvlink, "nvlink"},    {LinkKind::kNvswitch, "nvswitch"},
    {LinkKind::kPcie, "pcie"},        {LinkKind::kSmp, "smp"},
    {LinkKind::kSharedMemory, "shm"}, {LinkKind::kInfiniband, "infiniband"},
    {LinkKind::kRoce, "roce"},        {LinkKind::kEthernet, "ethernet"},
    {LinkKind::kEfa, "efa"},
};

constexpr KindName kAliases[] = {
    {LinkKind::kInfiniband, "ib"},
    {LinkKind::kEthernet, "tcp"},
};

}  // namespace

const char* linkKindName(LinkKind kind) {
  for (const KindName& entry : kKindNames) {
    if (entry.kind == kind) return entry.name;
  }
  return "unknown";
}

// Case-insensitive, since people write "NVLink" and "PCIe" by hand in topology files; the two
// short names people use for networks ("ib", "tcp") are accepted too, and never written.
bool isNetworkLink(LinkKind kind) {
  return kind == LinkKind::kInfiniband || kind == LinkKind::kRoce || kind == LinkKind::kEthernet ||
         kind == LinkKind::kEfa;
}

bool parseLinkKind(const std::string& name, LinkKind* kind) {
  const std::string lowered = lower(name);
  for (const KindName& entry : kKindNames) {
    if (lowered == entry.name) {
      *kind = entry.kind;
      return true;
    }
  }
  for (const KindName& alias : kAliases) {
    if (lowered == alias.name) {
      *kind = alias.kind;
      return true;
    }
  }
  return false;
}

const GpuLink* NodeTopology::nvlinkBetween(int a, int b) const {
  if (a == b) return nullptr;
  for (const GpuLink& link : links) {
    if ((link.a == a && link.b == b) || (link.a == b && link.b == a)) return &link;
  }
  return nullptr;
}

}  // namespace strata::topo

namespace strata::topo {

std::string formatCpuList(const std::vector<int>& sorted) {
  std::string out;
  for (size_t i = 0; i < sorted.size();) {
    size_t j = i;
    while (j + 1 < sorted.size() && sorted[j + 1] == sorted[j] + 1) ++j;
    if (!out.empty()) out += ",";
    out += std::to_string(sorted[i]);
    if (j > i) out += "-" + std::to_string(sorted[j]);
    i = j + 1;
  }
  return out;
}

}  // namespace strata::topo
