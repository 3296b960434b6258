// NCCL topology XML -> NodeTopology.
//
// Two kinds of file share this format and both must read well:
//  - NCCL_TOPO_DUMP_FILE output: <pci> elements carry <gpu dev sm> (with <nvlink>) and
//    <nic><net name speed port/></nic> children, as NCCL found them on a live machine;
//  - hand-written NCCL_TOPO_FILE inputs (the cloud vendors' ndv2/ndv4/p4d/g5 files): only the
//    <cpu>/<pci> skeleton with PCI class codes, because NCCL merges the devices in at run time.
// For the second kind a GPU or NIC is inferred from the PCI class (0x03xxxx display controller,
// 0x02xxxx network controller), as NCCL's own class table does; such devices have no model
// name, CUDA index or port rate, and those fields stay unknown rather than guessed.
//
// Host bridges: NCCL's format has none; a <pci> directly under a <cpu> hangs on that CPU's root
// complex. Each such top <pci> is given the host bridge "<cpu numaid>/<domain:bus>", so devices
// of different <cpu> never share one (GPU0 and GPU4 of a p4d, under the two sockets, are SYS
// apart, not PHB), while those under one CPU share it when their top elements sit on one root
// bus (the fake "ffff:ff:NN.0" switches of the cloud files all do: PHB, NCCL's PATH_PHB) and
// not when the domains differ (NDv2's one domain per GPU: NODE).
//
// NUMA and packages: each <cpu> is one NUMA node (NCCL writes one per numaid). Nothing in the
// format says which NUMA nodes share a socket (NDv4 lists 4 <cpu> for 2 EPYC sockets), so each
// <cpu> is also counted as its own package. NUMA/package indices are logical: the rank of the
// numaid among the file's numaids, which equals numaid whenever those run 0..n-1.
#include "topology/nccl_xml.h"

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <pugixml.hpp>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "common/log.h"
#include "common/strings.h"
#include "common/text_file.h"
#include "topology/link_model.h"

namespace strata::topo {
namespace {

constexpr const char* kNvswitchClass = "0x068000";
constexpr const char* kNvlinkCpuClass = "0x068001";  // POWER9 NVLink to the CPU: no field
// PCI trees are a few bridges deep (a DGX's GPUs sit 4 below the root port). The walk recurses
// per <pci>, so the nesting a file may ask for is bounded well below what the stack takes.
constexpr int kMaxPciDepth = 32;
// The kernel's cpumask words; 4096 of them (131072 CPUs) is beyond any machine.
constexpr size_t kMaxMaskWords = 4096;

bool startsWith(const std::string& s, const char* prefix) { return s.rfind(prefix, 0) == 0; }

// "0000:3B:00.0" and NVML's "00000000:3b:00.0" both become "0000:3b:00.0", so that an
// <nvlink target> finds the <pci busid> it names. Unparsable ids are kept, lowercased.
std::string normaliseBusid(const std::string& raw) {
  unsigned domain = 0, bus = 0, dev = 0, fn = 0;
  char tail = 0;
  if (std::sscanf(raw.c_str(), "%x:%x:%x.%x%c", &domain, &bus, &dev, &fn, &tail) != 4) {
    return lower(raw);
  }
  char out[32];
  std::snprintf(out, sizeof(out), "%04x:%02x:%02x.%x", domain, bus, dev, fn);
  return out;
}

// PCIe generation from sysfs' link_speed: "16 GT/s" (kernel <= 5.6) or "16.0 GT/s PCIe".
int pcieGenFromSpeed(const std::string& speed) {
  const double gts = std::strtod(speed.c_str(), nullptr);
  const double kRates[] = {2.5, 5, 8, 16, 32, 64};  // GT/s of gen1..gen6
  for (int g = 0; g < 6; ++g) {
    if (gts > kRates[g] * 0.9 && gts < kRates[g] * 1.1) return g + 1;
  }
  return 0;
}

// NVLink generation from the CUDA compute capability (sm 60 = P100 = NVLink 1, ...).
int nvlinkGenerationForSm(int sm) {
  if (sm >= 60 && sm < 70) return 1;
  if (sm >= 70 && sm < 80) return 2;
  if (sm >= 80 && sm < 90) return 3;
  if (sm >= 90 && sm < 100) return 4;
  if (sm >= 100 && sm < 110) return 5;
  return 0;
}

std::string vendorFromPciId(const std::string& id) {
  const std::string v = lower(id);
  if (v == "0x10de") return "nvidia";
  if (v == "0x1002") return "amd";
  if (v == "0x8086") return "intel";
  return "";
}

// Port type from the PCI ids: EFA devices (Amazon 0x1d0f:0xefaN), then the class code.
std::string nicTypeFromPci(const std::string& cls, const std::string& vendor,
                           const std::string& device) {
  if (lower(vendor) == "0x1d0f" && startsWith(lower(device), "0xefa")) return "efa";
  if (startsWith(cls, "0x0207")) return "infiniband";
  if (startsWith(cls, "0x0200")) return "ethernet";
  return "";
}

// Port type from the device name, refined by the PCI class where the name is ambiguous: an
// mlx5/ib device on an Ethernet-class function is RoCE, not InfiniBand.
std::string nicType(const std::string& name, const std::string& pciType) {
  if (startsWith(name, "efa")) return "efa";
  if (startsWith(name, "mlx") || startsWith(name, "ib")) {
    return pciType == "ethernet" ? "roce" : "infiniband";
  }
  if (startsWith(name, "eth") || startsWith(name, "en")) return "ethernet";
  return pciType.empty() ? "unknown" : pciType;
}

// Per-GPU facts that only matter until the links are built.
struct NvlinkRef {
  std::string target;  // normalised busid
  std::string tclass;
  int count = 0;
};
struct GpuExtra {
  int sm = 0;
  std::vector<NvlinkRef> nvlinks;
};

// Where the walk is: the enclosing <cpu> and <pci> elements.
struct Context {
  int numa = -1;
  std::vector<std::string> bridges;  // enclosing <pci> busids, host side first
  pugi::xml_node pci;                // the closest enclosing <pci>; null under a <cpu>
  PciPlace place;                    // that <pci>'s place (numa/package only if none)
};

class Reader {
 public:
  Reader(std::string path, std::string text) : path_(std::move(path)), text_(std::move(text)) {}

  StatusOr<NodeTopology> read() {
    const Status checked = checkText(text_);
    if (!checked.isOk()) return fail(0, checked.message());
    pugi::xml_document doc;
    const pugi::xml_parse_result parsed = doc.load_buffer(text_.data(), text_.size());
    if (!parsed) return fail(lineOf(parsed.offset), parsed.description());
    const pugi::xml_node root = doc.document_element();
    if (std::strcmp(root.name(), "system") != 0) {
      return fail(lineOf(root.offset_debug()),
                  std::string("root element is <") + root.name() + ">, expected <system>");
    }
    // NCCL lists every device under the <cpu> of its NUMA node; a <system> without one
    // describes no machine (NCCL itself finds no CPU to attach anything to).
    if (!root.child("cpu")) {
      return fail(lineOf(root.offset_debug()),
                  "<system> has no <cpu> element; every device sits under the <cpu> of its numa "
                  "node");
    }
    STRATA_RETURN_IF_ERROR(numberCpus(root));
    int cpuIndex = 0;
    for (pugi::xml_node cpu : root.children("cpu")) {
      Context ctx;
      ctx.numa = numaIndex_[cpuIndex++];
      ctx.place.numa = ctx.numa;
      ctx.place.package = ctx.numa;  // one package per <cpu>: see the file comment
      STRATA_RETURN_IF_ERROR(readAffinity(cpu));
      STRATA_RETURN_IF_ERROR(walkChildren(cpu, ctx, 0));
    }
    STRATA_RETURN_IF_ERROR(buildLinks());
    topo_.source = "nccl xml " + path_;
    topo_.numaNodes = static_cast<int>(numaIndex_.size());
    topo_.packages = topo_.numaNodes;
    if (topo_.packages > 1) {
      topo_.interSocket = smpLink();
      topo_.interSocket.kind = LinkKind::kSmp;
    }
    topo_.nvswitches = static_cast<int>(nvswitchBusids_.size());
    // NCCL dumps a <gpu> (with its <nvlink>s) for every GPU it saw; files with bare PCI class
    // codes say nothing about NVLink either way.
    topo_.nvlinkKnown = sawGpuElement_;
    return std::move(topo_);
  }

 private:
  // Logical NUMA indices: numaids ranked in ascending order; a <cpu> without a usable numaid
  // (NCCL writes -1 where sysfs knows none) comes after them, in document order.
  Status numberCpus(const pugi::xml_node& root) {
    std::vector<int> ids;
    std::vector<int> known;
    for (pugi::xml_node cpu : root.children("cpu")) {
      int id = -1;
      STRATA_RETURN_IF_ERROR(intAttr(cpu, "numaid", &id));
      if (id >= 0 && std::find(known.begin(), known.end(), id) != known.end()) {
        return fail(lineOf(cpu.offset_debug()), "a second <cpu> with numaid " + std::to_string(id));
      }
      ids.push_back(id);
      if (id >= 0) known.push_back(id);
    }
    std::sort(known.begin(), known.end());
    int next = static_cast<int>(known.size());
    for (int id : ids) {
      numaIndex_.push_back(
          id >= 0
              ? static_cast<int>(std::lower_bound(known.begin(), known.end(), id) - known.begin())
              : next++);
    }
    return Status::ok();
  }

  Status walkChildren(const pugi::xml_node& parent, const Context& ctx, int depth) {
    for (pugi::xml_node child : parent.children()) {
      if (std::strcmp(child.name(), "pci") == 0) {
        STRATA_RETURN_IF_ERROR(walkPci(child, ctx, depth + 1));
      } else if (std::strcmp(child.name(), "nic") == 0) {
        STRATA_RETURN_IF_ERROR(addNets(child, ctx));
      }
    }
    return Status::ok();
  }

  // `depth`: how many <pci> elements enclose this one, plus one.
  Status walkPci(const pugi::xml_node& pci, const Context& outer, int depth) {
    if (depth > kMaxPciDepth) {
      return fail(lineOf(pci.offset_debug()),
                  "<pci> nested more than " + std::to_string(kMaxPciDepth) + " deep");
    }
    const std::string rawBusid = pci.attribute("busid").value();
    if (rawBusid.empty()) return fail(lineOf(pci.offset_debug()), "<pci> without a busid");
    Context ctx = outer;
    if (ctx.bridges.empty()) ctx.bridges.push_back(hostBridgeName(ctx, rawBusid));
    ctx.pci = pci;
    ctx.place = PciPlace();
    ctx.place.busid = normaliseBusid(rawBusid);
    ctx.place.numa = outer.numa;
    ctx.place.package = outer.numa;
    ctx.place.bridges = ctx.bridges;
    ctx.place.linkGen = pcieGenFromSpeed(pci.attribute("link_speed").value());
    STRATA_RETURN_IF_ERROR(intAttr(pci, "link_width", &ctx.place.linkWidth));

    const std::string cls = lower(pci.attribute("class").value());
    bool described = false;  // whether a <gpu> or <nic> child says what the device is
    for (pugi::xml_node gpu : pci.children("gpu")) {
      STRATA_RETURN_IF_ERROR(addGpu(&gpu, pci, ctx.place));
      described = true;
    }
    for (pugi::xml_node nic : pci.children("nic")) {
      STRATA_RETURN_IF_ERROR(addNets(nic, ctx));
      described = true;
    }
    if (!described && startsWith(cls, "0x03")) {
      STRATA_RETURN_IF_ERROR(addGpu(nullptr, pci, ctx.place));
    } else if (!described && startsWith(cls, "0x02")) {
      addPciNic(pci, cls, ctx.place);
    } else if (cls == kNvswitchClass) {
      nvswitchBusids_.insert(ctx.place.busid);
    }

    // Whatever a <pci> contains hangs below it: it is a bridge or switch for its children.
    Context inner = ctx;
    inner.bridges.push_back(ctx.place.busid);
    for (pugi::xml_node child : pci.children("pci")) {
      STRATA_RETURN_IF_ERROR(walkPci(child, inner, depth + 1));
    }
    return Status::ok();
  }

  // The CPU and NUMA affinity of the GPUs under `cpu`, as nvidia-smi prints them: the affinity
  // attribute is a kernel cpumask ("000000ff,ffff0000,00ffffff": 32-bit hex words, the last one
  // CPUs 0-31); numaid is the OS NUMA node (-1 or absent: unknown).
  Status readAffinity(const pugi::xml_node& cpu) {
    cpuAffinity_.clear();
    numaAffinity_.clear();
    int numaid = -1;
    STRATA_RETURN_IF_ERROR(intAttr(cpu, "numaid", &numaid));
    if (numaid >= 0) numaAffinity_ = std::to_string(numaid);
    const std::string mask = cpu.attribute("affinity").value();
    if (mask.empty()) return Status::ok();
    std::vector<std::string> words;
    size_t start = 0;
    for (size_t comma; (comma = mask.find(',', start)) != std::string::npos; start = comma + 1) {
      words.push_back(mask.substr(start, comma - start));
    }
    words.push_back(mask.substr(start));
    if (words.size() > kMaxMaskWords) {
      return fail(lineOf(cpu.offset_debug()), "<cpu> affinity mask longer than " +
                                                  std::to_string(kMaxMaskWords * 32) + " cpus");
    }
    std::vector<int> cpus;
    for (size_t w = 0; w < words.size(); ++w) {
      const std::string& word = words[words.size() - 1 - w];
      char* end = nullptr;
      const unsigned long bits = std::strtoul(word.c_str(), &end, 16);
      if (word.empty() || word.size() > 8 || *end != '\0' || word[0] == '-' || word[0] == '+') {
        return fail(lineOf(cpu.offset_debug()),
                    "<cpu> affinity=\"" + mask + "\" is not a cpumask (32-bit hex words)");
      }
      for (int bit = 0; bit < 32; ++bit) {
        if ((bits >> bit) & 1UL) cpus.push_back(static_cast<int>(w) * 32 + bit);
      }
    }
    cpuAffinity_ = formatCpuList(cpus);
    return Status::ok();
  }

  // The host bridge of a top <pci> (see the file comment). Not a bus id, so gpu_matrix.h takes
  // it for the host bridge rather than for a PCI bridge.
  static std::string hostBridgeName(const Context& ctx, const std::string& rawBusid) {
    const std::string busid = normaliseBusid(rawBusid);
    const size_t dot = busid.rfind(':');
    return "numa" + std::to_string(ctx.numa) + "/" +
           (dot == std::string::npos ? busid : busid.substr(0, dot));
  }

  // A GPU from a <gpu> element, or (xmlGpu == nullptr) inferred from its PCI class alone.
  Status addGpu(const pugi::xml_node* xmlGpu, const pugi::xml_node& pci, const PciPlace& place) {
    Gpu gpu;
    GpuExtra extra;
    gpu.pci = place;
    gpu.cpuAffinity = cpuAffinity_;
    gpu.numaAffinity = numaAffinity_;
    sawGpuElement_ = sawGpuElement_ || xmlGpu != nullptr;
    gpu.vendor = vendorFromPciId(pci.attribute("vendor").value());
    std::string model;
    if (xmlGpu != nullptr) {
      STRATA_RETURN_IF_ERROR(intAttr(*xmlGpu, "dev", &gpu.cudaIndex));
      STRATA_RETURN_IF_ERROR(intAttr(*xmlGpu, "sm", &extra.sm));
      if (extra.sm > 0) model = "sm_" + std::to_string(extra.sm);
      const std::string gcn = xmlGpu->attribute("gcn").value();  // RCCL's dumps name the ISA
      if (!gcn.empty()) {
        gpu.vendor = "amd";
        model = gcn;
      }
      for (pugi::xml_node link : xmlGpu->children("nvlink")) {
        NvlinkRef ref;
        ref.target = normaliseBusid(link.attribute("target").value());
        ref.tclass = lower(link.attribute("tclass").value());
        STRATA_RETURN_IF_ERROR(intAttr(link, "count", &ref.count));
        if (ref.count < 0) return fail(lineOf(link.offset_debug()), "negative nvlink count");
        extra.nvlinks.push_back(ref);
      }
    }
    // The format is NCCL's: a GPU with no vendor id is taken to be NVIDIA's.
    if (gpu.vendor.empty()) gpu.vendor = "nvidia";
    const std::string vendorId = lower(pci.attribute("vendor").value());
    const std::string deviceId = lower(pci.attribute("device").value());
    if (model.empty() && startsWith(vendorId, "0x") && startsWith(deviceId, "0x")) {
      model = vendorId.substr(2) + ":" + deviceId.substr(2);
    }
    // No model names in the format: "NVIDIA GPU sm_80", "NVIDIA GPU 10de:20b0", "NVIDIA GPU".
    const std::string label = gpu.vendor == "nvidia" ? "NVIDIA"
                              : gpu.vendor == "amd"  ? "AMD"
                                                     : "Intel";
    gpu.name = label + " GPU" + (model.empty() ? "" : " " + model);
    topo_.gpus.push_back(gpu);
    extras_.push_back(extra);
    return Status::ok();
  }

  // One Nic per <net> of a <nic> element (a multi-port NIC lists one <net> per port).
  Status addNets(const pugi::xml_node& nic, const Context& ctx) {
    std::string pciType;
    if (ctx.pci) {
      pciType =
          nicTypeFromPci(lower(ctx.pci.attribute("class").value()),
                         ctx.pci.attribute("vendor").value(), ctx.pci.attribute("device").value());
    }
    for (pugi::xml_node net : nic.children("net")) {
      // net="0" marks a physical port fused into a virtual NIC listed beside it.
      int enabled = 1;
      STRATA_RETURN_IF_ERROR(intAttr(net, "net", &enabled));
      if (enabled == 0) continue;
      Nic out;
      out.name = net.attribute("name").value();
      out.type = nicType(out.name, pciType);
      out.pci = ctx.place;
      int mbps = 0;  // NCCL's speed is in Mbit/s (ncclNetProperties_t::speed); -1 = unknown
      STRATA_RETURN_IF_ERROR(intAttr(net, "speed", &mbps));
      out.rateGbps = mbps > 0 ? mbps / 1000.0 : 0;
      STRATA_RETURN_IF_ERROR(intAttr(net, "port", &out.port));
      topo_.nics.push_back(out);
    }
    return Status::ok();
  }

  // A network-class PCI function with no <nic> child: its type from the ids, no name or rate.
  void addPciNic(const pugi::xml_node& pci, const std::string& cls, const PciPlace& place) {
    Nic out;
    const std::string type =
        nicTypeFromPci(cls, pci.attribute("vendor").value(), pci.attribute("device").value());
    out.type = type.empty() ? "unknown" : type;
    out.pci = place;
    topo_.nics.push_back(out);
  }

  // Direct NVLinks from each GPU's <nvlink> to another GPU; NVSwitch paths between every two
  // GPUs that reach a switch, with the lanes the poorer of the two has into the switch fabric
  // (NCCL likewise merges all NVSwitches into one node).
  Status buildLinks() {
    std::map<std::string, int> byBusid;
    for (size_t i = 0; i < topo_.gpus.size(); ++i) byBusid[topo_.gpus[i].pci.busid] = int(i);
    std::map<std::pair<int, int>, int> direct;  // (a < b) -> lanes
    std::vector<int> switchLanes(topo_.gpus.size(), 0);
    for (size_t i = 0; i < extras_.size(); ++i) {
      for (const NvlinkRef& ref : extras_[i].nvlinks) {
        if (ref.tclass == kNvswitchClass) {
          switchLanes[i] += ref.count;
          nvswitchBusids_.insert(ref.target);
          continue;
        }
        if (ref.tclass == kNvlinkCpuClass) continue;
        auto peer = byBusid.find(ref.target);
        if (peer == byBusid.end() || peer->second == int(i)) continue;  // a GPU not listed
        const std::pair<int, int> key(std::min(int(i), peer->second),
                                      std::max(int(i), peer->second));
        direct.emplace(key, ref.count);  // both ends list the link; the first one counts
      }
    }
    const int n = static_cast<int>(topo_.gpus.size());
    for (int a = 0; a < n; ++a) {
      for (int b = a + 1; b < n; ++b) {
        GpuLink link;
        link.a = a;
        link.b = b;
        link.generation = pairGeneration(a, b);
        auto d = direct.find({a, b});
        if (d != direct.end() && d->second > 0) {
          link.kind = LinkKind::kNvlink;
          link.count = d->second;
        } else if (switchLanes[a] > 0 && switchLanes[b] > 0) {
          link.kind = LinkKind::kNvswitch;
          link.count = std::min(switchLanes[a], switchLanes[b]);
        } else {
          continue;
        }
        link.bandwidthGBps = nvlinkLink(link.generation, link.count).bandwidthGBps;
        topo_.links.push_back(link);
      }
    }
    return Status::ok();
  }

  // The generation both ends speak: the older one, or the one known.
  int pairGeneration(int a, int b) const {
    const int ga = nvlinkGenerationForSm(extras_[a].sm);
    const int gb = nvlinkGenerationForSm(extras_[b].sm);
    if (ga == 0 || gb == 0) return std::max(ga, gb);
    return std::min(ga, gb);
  }

  // An integer attribute: absent or empty leaves *out alone, anything but an integer fails.
  Status intAttr(const pugi::xml_node& node, const char* name, int* out) {
    const std::string value = node.attribute(name).value();
    if (value.empty()) return Status::ok();
    errno = 0;
    char* end = nullptr;
    const long v = std::strtol(value.c_str(), &end, 0);
    if (errno != 0 || *end != '\0' || v < -2147483647L || v > 2147483647L) {
      return fail(lineOf(node.offset_debug()), std::string("<") + node.name() + "> attribute " +
                                                   name + "=\"" + value + "\" is not an integer");
    }
    *out = static_cast<int>(v);
    return Status::ok();
  }

  int lineOf(ptrdiff_t offset) const { return lineAtOffset(text_, offset); }

  Status fail(int line, const std::string& problem) const {
    const std::string where = line > 0 ? ":" + std::to_string(line) : "";
    Status status = invalidArgument("nccl topology xml " + path_ + where + ": " + problem);
    STRATA_WARN(kSubsysTopo, "%s", status.message().c_str());
    return status.markLogged();
  }

  std::string path_;
  std::string text_;
  NodeTopology topo_;
  std::vector<GpuExtra> extras_;  // parallel to topo_.gpus
  std::vector<int> numaIndex_;    // logical NUMA index of each <cpu>, in document order
  std::set<std::string> nvswitchBusids_;
  std::string cpuAffinity_;  // of the <cpu> being walked, for its GPUs
  std::string numaAffinity_;
  bool sawGpuElement_ = false;
};

}  // namespace

StatusOr<NodeTopology> parseNcclTopoXml(const std::string& text, const std::string& source) {
  return Reader(source, text).read();
}

StatusOr<NodeTopology> readNcclTopoXml(const std::string& path) {
  StatusOr<std::string> text = readTextFileBounded(path);
  if (!text.isOk()) {
    Status status = text.status().withContext("nccl topology xml " + path);
    STRATA_WARN(kSubsysTopo, "%s", status.message().c_str());
    return status.markLogged();
  }
  return parseNcclTopoXml(text.value(), path);
}

bool looksLikeNcclTopoXml(const std::string& path) {
  StatusOr<std::string> text = readTextFileBounded(path);
  return text.isOk() && isNcclTopoXmlText(text.value());
}

bool isNcclTopoXmlText(const std::string& text) {
  pugi::xml_document doc;
  if (!doc.load_buffer(text.data(), text.size(), pugi::parse_minimal)) return false;
  return std::strcmp(doc.document_element().name(), "system") == 0;
}

}  // namespace strata::topo
