#include "topology/topo_json.h"

#include <yaml-cpp/yaml.h>

#include <cctype>
#include <limits>
#include <set>
#include <stdexcept>

#include "common/strings.h"
#include "common/yaml_util.h"

namespace strata::topo {
namespace {

using nlohmann::json;

// An integer field, or `fallback` when absent. json::value() would convert a floating-point
// number to int with undefined behaviour when it is out of range (found by the topo_json
// fuzzer): only integers that fit are taken, anything else is an error.
int intValue(const json& j, const char* key, int fallback) {
  const auto it = j.find(key);
  if (it == j.end()) return fallback;
  if (!it->is_number_integer()) {
    throw std::invalid_argument(std::string("'") + key + "' must be an integer");
  }
  const long long v = it->get<long long>();
  if (v < std::numeric_limits<int>::min() || v > std::numeric_limits<int>::max()) {
    throw std::invalid_argument(std::string("'") + key + "' is out of range");
  }
  return static_cast<int>(v);
}

json placeJson(const PciPlace& p) {
  return json{{"pci", p.busid},       {"package", p.package},  {"numa", p.numa},
              {"bridges", p.bridges}, {"link_gen", p.linkGen}, {"link_width", p.linkWidth}};
}

void placeFrom(const json& j, PciPlace* p) {
  p->busid = j.value("pci", "");
  p->package = intValue(j, "package", -1);
  p->numa = intValue(j, "numa", -1);
  p->bridges = j.value("bridges", std::vector<std::string>{});
  p->linkGen = intValue(j, "link_gen", 0);
  p->linkWidth = intValue(j, "link_width", 0);
}

LinkModel linkFrom(const json& j) {
  LinkModel l;
  parseLinkKind(j.value("kind", "unknown"), &l.kind);
  l.bandwidthGBps = j.value("bandwidth_GBps", 0.0);
  l.latencyUs = j.value("latency_us", 0.0);
  l.source = j.value("source", "");
  return l;
}

void emit(YAML::Emitter& out, const json& v) {
  if (v.is_object()) {
    out << YAML::BeginMap;
    for (auto it = v.begin(); it != v.end(); ++it) {
      out << YAML::Key << it.key() << YAML::Value;
      emit(out, it.value());
    }
    out << YAML::EndMap;
  } else if (v.is_array()) {
    // Short lists of scalars read best on one line.
    bool scalars = v.size() <= 16;
    for (const json& e : v) scalars = scalars && !e.is_structured();
    if (scalars) out << YAML::Flow;
    out << YAML::BeginSeq;
    for (const json& e : v) emit(out, e);
    out << YAML::EndSeq;
  } else if (v.is_string()) {
    // Quote what a YAML 1.1 reader would take for something else: bus ids ("0000:34:00.0"
    // reads as a base-60 number), numbers, booleans, null and empty strings.
    const std::string str = v.get<std::string>();
    static const std::set<std::string> kSpecial = {"true", "false", "yes", "no", "on",
                                                   "off",  "null",  "~",   "y",  "n"};
    const std::string lowered = lower(str);
    const bool risky = str.empty() ||
                       str.find_first_of(":#{}[],&*!|>'\"%@`") != std::string::npos ||
                       std::isdigit(static_cast<unsigned char>(str[0])) || str[0] == '-' ||
                       str[0] == '.' || str[0] == '+' || kSpecial.count(lowered) > 0;
    if (risky) out << YAML::DoubleQuoted;
    out << str;
  } else if (v.is_boolean()) {
    out << v.get<bool>();
  } else if (v.is_number_integer()) {
    out << v.get<long long>();
  } else if (v.is_number()) {
    out << yaml::numberText(v.get<double>());  // 0.3, not 0.29999999999999999
  } else {
    out << YAML::Null;
  }
}

}  // namespace

json toJson(const LinkModel& link) {
  return json{{"kind", linkKindName(link.kind)},
              {"bandwidth_GBps", link.bandwidthGBps},
              {"latency_us", link.latencyUs},
              {"source", link.source}};
}

json toJson(const NodeTopology& t) {
  json gpus = json::array(), nics = json::array(), links = json::array();
  for (const Gpu& g : t.gpus) {
    json j = placeJson(g.pci);
    j["name"] = g.name;
    j["vendor"] = g.vendor;
    j["osdev"] = g.osdev;
    j["cuda_index"] = g.cudaIndex;
    j["cpu_affinity"] = g.cpuAffinity;
    j["numa_affinity"] = g.numaAffinity;
    gpus.push_back(j);
  }
  for (const Nic& n : t.nics) {
    json j = placeJson(n.pci);
    j["name"] = n.name;
    j["type"] = n.type;
    j["rate_gbps"] = n.rateGbps;
    j["state"] = n.state;
    j["port"] = n.port;
    nics.push_back(j);
  }
  for (const GpuLink& l : t.links) {
    links.push_back(json{{"a", l.a},
                         {"b", l.b},
                         {"kind", linkKindName(l.kind)},
                         {"count", l.count},
                         {"bandwidth_GBps", l.bandwidthGBps},
                         {"generation", l.generation}});
  }
  return json{{"host", t.host},
              {"source", t.source},
              {"packages", t.packages},
              {"numa_nodes", t.numaNodes},
              {"cores", t.cores},
              {"gpus", gpus},
              {"nics", nics},
              {"links", links},
              {"nvswitches", t.nvswitches},
              {"nvlink_known", t.nvlinkKnown},
              {"inter_socket", toJson(t.interSocket)}};
}

json levelsToJson(const Hierarchy& h) {
  json levels = json::array();
  for (int l = 0; l < h.numLevels(); ++l) {
    const Level& lv = h.level(l);
    levels.push_back(json{{"name", lv.name},
                          {"fabric", lv.fabric},
                          {"groups", h.numGroups(l)},
                          {"size", h.width(l)},
                          {"max_size", h.maxChildren(l)},
                          {"link", toJson(lv.link)},
                          {"link_sharing", lv.linkSharing}});
  }
  return levels;
}

StatusOr<NodeTopology> nodeTopologyFromJson(const std::string& text) {
  try {
    const json j = json::parse(text);
    NodeTopology t;
    t.host = j.value("host", "");
    t.source = j.value("source", "");
    t.packages = intValue(j, "packages", 0);
    t.numaNodes = intValue(j, "numa_nodes", 0);
    t.cores = intValue(j, "cores", 0);
    t.nvswitches = intValue(j, "nvswitches", 0);
    t.nvlinkKnown = j.value("nvlink_known", false);
    if (j.contains("inter_socket")) t.interSocket = linkFrom(j["inter_socket"]);
    for (const json& g : j.value("gpus", json::array())) {
      Gpu gpu;
      placeFrom(g, &gpu.pci);
      gpu.name = g.value("name", "");
      gpu.vendor = g.value("vendor", "");
      gpu.osdev = g.value("osdev", "");
      gpu.cudaIndex = intValue(g, "cuda_index", -1);
      gpu.cpuAffinity = g.value("cpu_affinity", "");
      gpu.numaAffinity = g.value("numa_affinity", "");
      t.gpus.push_back(gpu);
    }
    for (const json& n : j.value("nics", json::array())) {
      Nic nic;
      placeFrom(n, &nic.pci);
      nic.name = n.value("name", "");
      nic.type = n.value("type", "");
      nic.rateGbps = n.value("rate_gbps", 0.0);
      nic.state = n.value("state", "");
      nic.port = intValue(n, "port", 0);
      t.nics.push_back(nic);
    }
    for (const json& l : j.value("links", json::array())) {
      GpuLink link;
      link.a = intValue(l, "a", -1);
      link.b = intValue(l, "b", -1);
      parseLinkKind(l.value("kind", "nvlink"), &link.kind);
      link.count = intValue(l, "count", 0);
      link.bandwidthGBps = l.value("bandwidth_GBps", 0.0);
      link.generation = intValue(l, "generation", 0);
      if (link.a < 0 || link.b < 0 || link.a >= static_cast<int>(t.gpus.size()) ||
          link.b >= static_cast<int>(t.gpus.size())) {
        return invalidArgument("node topology json: link between unknown gpus");
      }
      t.links.push_back(link);
    }
    return t;
  } catch (const json::exception& e) {
    return invalidArgument(std::string("node topology json: ") + e.what());
  } catch (const std::invalid_argument& e) {
    return invalidArgument(std::string("node topology json: ") + e.what());
  }
}

std::string jsonToYaml(const json& value) {
  YAML::Emitter out;
  emit(out, value);
  out << YAML::Newline;
  return out.c_str();
}

}  // namespace strata::topo
