// PCIe relations and the nvidia-smi style connection matrix.
#include "topology/gpu_matrix.h"

#include <algorithm>
#include <cctype>
#include <cstdio>
#include <cstdlib>

#include "common/strings.h"
#include "topology/link_model.h"

namespace strata::topo {
namespace {

// Reads hex digits from text[*pos], at most `maxDigits`; false when there are none.
bool hexField(const std::string& text, size_t* pos, size_t maxDigits, unsigned long* value) {
  size_t start = *pos;
  while (*pos < text.size() && *pos - start < maxDigits &&
         std::isxdigit(static_cast<unsigned char>(text[*pos]))) {
    ++*pos;
  }
  if (*pos == start) return false;
  *value = std::strtoul(text.substr(start, *pos - start).c_str(), nullptr, 16);
  return true;
}

struct BusId {
  unsigned long domain = 0, bus = 0, device = 0, function = 0;
};

// "[domain:]bus:device.function" in hex, the domain up to 8 digits.
bool parseBusid(const std::string& text, BusId* id) {
  BusId parsed;
  size_t pos = 0;
  unsigned long first = 0;
  if (!hexField(text, &pos, 8, &first) || pos >= text.size() || text[pos] != ':') return false;
  ++pos;
  size_t second = pos;
  unsigned long value = 0;
  if (!hexField(text, &pos, 2, &value)) return false;
  if (pos < text.size() && text[pos] == ':') {  // first was the domain
    parsed.domain = first;
    parsed.bus = value;
    ++pos;
    if (!hexField(text, &pos, 2, &parsed.device)) return false;
  } else {  // no domain: first was the bus
    if (second - 1 > 2) return false;
    parsed.bus = first;
    parsed.device = value;
  }
  if (pos >= text.size() || text[pos] != '.') return false;
  ++pos;
  if (!hexField(text, &pos, 1, &parsed.function) || pos != text.size()) return false;
  *id = parsed;
  return true;
}

// A device's way up to the CPU: the host bridge it hangs on and the bridges below that.
struct Chain {
  std::string host;  // empty when unknown
  std::vector<std::string> bridges;
};

Chain chainOf(const PciPlace& place) {
  Chain chain;
  size_t first = 0;
  BusId id;
  if (!place.bridges.empty() && !parseBusid(place.bridges[0], &id)) {
    chain.host = lower(place.bridges[0]);
    first = 1;
  }
  for (size_t i = first; i < place.bridges.size(); ++i) {
    chain.bridges.push_back(normalizeBusid(place.bridges[i]));
  }
  if (chain.host.empty()) {
    // The top bridge (or the device) sits on the host bridge's root bus.
    const std::string& top = chain.bridges.empty() ? place.busid : chain.bridges[0];
    if (parseBusid(top, &id)) {
      char host[32];
      std::snprintf(host, sizeof(host), "%04lx:%02lx", id.domain, id.bus);
      chain.host = host;
    }
  }
  return chain;
}

// The length of the common prefix of two chains: the bridges both devices sit below.
size_t sharedBridges(const Chain& a, const Chain& b) {
  size_t common = 0;
  while (common < a.bridges.size() && common < b.bridges.size() &&
         a.bridges[common] == b.bridges[common]) {
    ++common;
  }
  return common;
}

std::string nvlinkCell(const GpuLink& link) {
  return link.count > 0 ? "NV" + std::to_string(link.count) : "NV";
}

}  // namespace

std::string normalizeBusid(const std::string& busid) {
  BusId id;
  if (!parseBusid(busid, &id)) return lower(busid);
  char out[48];
  std::snprintf(out, sizeof(out), "%04lx:%02lx:%02lx.%lx", id.domain, id.bus, id.device,
                id.function);
  return out;
}

bool isBusid(const std::string& text) {
  BusId id;
  return parseBusid(text, &id);
}

int pciHops(const PciPlace& a, const PciPlace& b) {
  Chain ca = chainOf(a), cb = chainOf(b);
  size_t common = sharedBridges(ca, cb);
  if (common == 0) return -1;
  return static_cast<int>(ca.bridges.size() + cb.bridges.size() - 2 * common);
}

Relation pciRelation(const PciPlace& a, const PciPlace& b) {
  if (!a.busid.empty() && normalizeBusid(a.busid) == normalizeBusid(b.busid)) {
    return Relation{PathType::kSelf, 0};
  }
  // Two functions of one device (the ports of a dual-port HCA) share its link: no bridge
  // between them, whatever the file shows above it.
  BusId ia, ib;
  if (parseBusid(a.busid, &ia) && parseBusid(b.busid, &ib) && ia.domain == ib.domain &&
      ia.bus == ib.bus && ia.device == ib.device) {
    return Relation{PathType::kPix, 0};
  }
  Chain ca = chainOf(a), cb = chainOf(b);
  size_t common = sharedBridges(ca, cb);
  if (common > 0) {
    size_t below = std::max(ca.bridges.size(), cb.bridges.size()) - common;
    return Relation{below <= 1 ? PathType::kPix : PathType::kPxb, 0};
  }
  if (!ca.host.empty() && ca.host == cb.host) return Relation{PathType::kPhb, 0};
  // Different host bridges: NODE within one NUMA node, SYS between two (the legend's words).
  if (a.numa >= 0 && b.numa >= 0) {
    return Relation{a.numa == b.numa ? PathType::kNode : PathType::kSys, 0};
  }
  if (a.package >= 0 && b.package >= 0) {
    return Relation{a.package == b.package ? PathType::kNode : PathType::kSys, 0};
  }
  return Relation{PathType::kSys, 0};
}

std::string pathTypeName(const Relation& relation) {
  switch (relation.type) {
    case PathType::kSelf:
      return "X";
    case PathType::kNvlink:
      return "NV" + std::to_string(relation.nvlinks);
    case PathType::kPix:
      return "PIX";
    case PathType::kPxb:
      return "PXB";
    case PathType::kPhb:
      return "PHB";
    case PathType::kNode:
      return "NODE";
    case PathType::kSys:
      return "SYS";
  }
  return "SYS";
}

ConnectionMatrix connectionMatrix(const NodeTopology& topo) {
  ConnectionMatrix m;
  int gpus = static_cast<int>(topo.gpus.size());
  std::vector<const PciPlace*> places;
  for (int g = 0; g < gpus; ++g) {
    const Gpu& gpu = topo.gpus[g];
    m.names.push_back("GPU" + std::to_string(g));
    m.cpuAffinity.push_back(gpu.cpuAffinity.empty() ? "N/A" : gpu.cpuAffinity);
    m.numaAffinity.push_back(gpu.numaAffinity.empty() ? "N/A" : gpu.numaAffinity);
    places.push_back(&gpu.pci);
  }
  for (size_t n = 0; n < topo.nics.size(); ++n) {
    m.names.push_back("NIC" + std::to_string(n));
    m.legend.push_back(nicLegendEntry(static_cast<int>(n), topo.nics[n]));
    places.push_back(&topo.nics[n].pci);
  }
  if (gpus == 0) {  // no GPU row: no affinity columns, as nvidia-smi prints none for NICs
    m.cpuAffinity.clear();
    m.numaAffinity.clear();
  } else {
    m.cpuAffinity.resize(places.size());
    m.numaAffinity.resize(places.size());
  }
  int size = static_cast<int>(places.size());
  m.cells.assign(size, std::vector<std::string>(size));
  for (int i = 0; i < size; ++i) {
    for (int j = 0; j < size; ++j) {
      const GpuLink* link = i < gpus && j < gpus ? topo.nvlinkBetween(i, j) : nullptr;
      if (i == j) {
        m.cells[i][j] = "X";
      } else if (link != nullptr) {
        m.cells[i][j] = nvlinkCell(*link);
      } else {
        m.cells[i][j] = pathTypeName(pciRelation(*places[i], *places[j]));
      }
    }
  }
  return m;
}

std::string nicLegendEntry(int index, const Nic& nic) {
  const std::string label = "NIC" + std::to_string(index) + ": ";
  if (!nic.name.empty()) return label + nic.name;
  // Hand-written NCCL files list NICs by PCI class alone: say what is known, and that the name
  // is not.
  std::string known = nic.type.empty() || nic.type == "unknown" ? "" : nic.type;
  if (!nic.pci.busid.empty()) known += (known.empty() ? "" : ", ") + ("pci " + nic.pci.busid);
  return label + "unknown" + (known.empty() ? "" : " (" + known + ")");
}

std::string formatMatrix(const ConnectionMatrix& m) {
  constexpr const char* kGap = "  ";
  const size_t devices = m.names.size();
  std::vector<std::string> header = m.names;
  std::vector<std::vector<std::string>> rows = m.cells;
  rows.resize(devices);
  for (std::vector<std::string>& row : rows) row.resize(devices);
  // The affinity columns follow the device columns, as in nvidia-smi, when there are any.
  auto addColumn = [&](const char* title, const std::vector<std::string>& values) {
    if (devices == 0 || values.size() != devices) return;
    header.push_back(title);
    for (size_t r = 0; r < devices; ++r) rows[r].push_back(values[r]);
  };
  addColumn("CPU Affinity", m.cpuAffinity);
  addColumn("NUMA Affinity", m.numaAffinity);
  const size_t size = header.size();
  // Column 0 holds the row names; column c + 1 holds device c.
  std::vector<size_t> width(size + 1, 0);
  for (size_t r = 0; r < devices; ++r) width[0] = std::max(width[0], m.names[r].size());
  for (size_t c = 0; c < size; ++c) {
    width[c + 1] = header[c].size();
    for (size_t r = 0; r < devices; ++r) width[c + 1] = std::max(width[c + 1], rows[r][c].size());
  }
  auto emitRow = [&](const std::string& head, const std::vector<std::string>& cells) {
    std::string line = head + std::string(width[0] - head.size(), ' ');
    for (size_t c = 0; c < size; ++c) {
      std::string cell = c < cells.size() ? cells[c] : "";
      line += kGap + cell + std::string(width[c + 1] - cell.size(), ' ');
    }
    line.erase(line.find_last_not_of(' ') + 1);
    return line + "\n";
  };
  std::string out = devices > 0 ? emitRow("", header) : "";
  for (size_t r = 0; r < devices; ++r) out += emitRow(m.names[r], rows[r]);
  // nvidia-smi's own legend, so that both tools' matrices read the same.
  out +=
      "\nLegend:\n\n"
      "  X    = Self\n"
      "  SYS  = Connection traversing PCIe as well as the SMP interconnect between NUMA nodes "
      "(e.g., QPI/UPI)\n"
      "  NODE = Connection traversing PCIe as well as the interconnect between PCIe Host Bridges "
      "within a NUMA node\n"
      "  PHB  = Connection traversing PCIe as well as a PCIe Host Bridge (typically the CPU)\n"
      "  PXB  = Connection traversing multiple PCIe bridges (without traversing the PCIe Host "
      "Bridge)\n"
      "  PIX  = Connection traversing at most a single PCIe bridge\n"
      "  NV#  = Connection traversing a bonded set of # NVLinks\n";
  if (!m.legend.empty()) {
    out += "\nNIC Legend:\n\n";
    for (const std::string& entry : m.legend) out += "  " + entry + "\n";
  }
  return out;
}

LinkModel gpuPairLink(const NodeTopology& topo, int a, int b) {
  int gpus = static_cast<int>(topo.gpus.size());
  if (a < 0 || b < 0 || a >= gpus || b >= gpus) return LinkModel{};
  if (a == b) return LinkModel{LinkKind::kLoopback, 0, 0, "default"};
  if (const GpuLink* link = topo.nvlinkBetween(a, b)) {
    int generation = link->generation;
    if (generation <= 0) generation = nvlinkGenerationForModel(topo.gpus[a].name);
    LinkModel model = nvlinkLink(generation, link->count);
    if (link->bandwidthGBps > 0) {
      model.bandwidthGBps = link->bandwidthGBps;
      model.source = "hardware";
    }
    model.kind = link->kind;
    return model;
  }
  const PciPlace& pa = topo.gpus[a].pci;
  const PciPlace& pb = topo.gpus[b].pci;
  LinkModel la = pcieLink(pa.linkGen, pa.linkWidth);
  LinkModel lb = pcieLink(pb.linkGen, pb.linkWidth);
  LinkModel pcie = la.bandwidthGBps <= lb.bandwidthGBps ? la : lb;
  if (pciRelation(pa, pb).type != PathType::kSys) return pcie;
  LinkModel smp = smpLink();
  smp.bandwidthGBps = std::min(smp.bandwidthGBps, pcie.bandwidthGBps);
  smp.latencyUs += pcie.latencyUs;
  return smp;
}

}  // namespace strata::topo
