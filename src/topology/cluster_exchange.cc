#include "topology/cluster_exchange.h"

#include <cstring>
#include <nlohmann/json.hpp>

#include "topology/hwloc_reader.h"
#include "topology/probe.h"
#include "topology/topo_json.h"

namespace strata::topo {
namespace {

constexpr int kMaxHostName = 256;
constexpr int kMaxBusid = 32;

// One rank's place as the first all-gather carries it: fixed size, so one collective moves all.
struct PlaceRecord {
  char host[kMaxHostName];
  char busid[kMaxBusid];
  int package;
};

// The names the problems travel under in a host's description.
const char* sourceName(NodeProblem::Source s) {
  switch (s) {
    case NodeProblem::Source::kHwloc:
      return "hwloc";
    case NodeProblem::Source::kInfiniband:
      return "infiniband";
    case NodeProblem::Source::kCuda:
      return "cuda";
  }
  return "hwloc";
}

StatusOr<NodeProblem::Source> sourceOf(const std::string& name) {
  for (NodeProblem::Source s : {NodeProblem::Source::kHwloc, NodeProblem::Source::kInfiniband,
                                NodeProblem::Source::kCuda}) {
    if (name == sourceName(s)) return s;
  }
  return invalidArgument("unknown source '" + name + "'");
}

std::string describeText(const LocalNode& node) {
  nlohmann::json problems = nlohmann::json::array();
  for (const NodeProblem& p : node.problems) {
    problems.push_back({{"source", sourceName(p.source)}, {"message", p.message}});
  }
  return nlohmann::json{{"node", toJson(node.topo)}, {"problems", problems}}.dump();
}

// Reads back describeText into `cluster` and `problems` under `host`.
Status readDescription(const std::string& text, const std::string& host, GatheredCluster* out) {
  try {
    const nlohmann::json j = nlohmann::json::parse(text);
    STRATA_ASSIGN_OR_RETURN(NodeTopology t, nodeTopologyFromJson(j.at("node").dump()));
    out->cluster.hosts[host] = std::move(t);
    for (const nlohmann::json& p : j.at("problems")) {
      STRATA_ASSIGN_OR_RETURN(NodeProblem::Source s, sourceOf(p.at("source").get<std::string>()));
      out->problems[host].push_back({s, p.at("message").get<std::string>()});
    }
    return Status::ok();
  } catch (const nlohmann::json::exception& e) {
    return invalidArgument(e.what());
  }
}

}  // namespace

LocalNode describeLocalNode(const std::string& host) {
  LocalNode out;
  StatusOr<NodeTopology> live = readLiveHwloc(&out.package);
  if (live.isOk()) {
    out.topo = live.take();
  } else {
    out.problems.push_back({NodeProblem::Source::kHwloc, live.status().message()});
    out.topo.source = "live (hwloc failed)";
  }
  if (!host.empty()) out.topo.host = host;
  Status st = probeInfinibandSysfs("/sys", &out.topo);
  if (!st.isOk()) out.problems.push_back({NodeProblem::Source::kInfiniband, st.message()});
  st = probeCudaAndNvml(&out.topo);
  if (!st.isOk()) out.problems.push_back({NodeProblem::Source::kCuda, st.message()});
  return out;
}

StatusOr<GatheredCluster> exchangeCluster(int rank, int size, const std::string& host,
                                          const LocalNode& node, const AllGatherBytes& allGather,
                                          const AllGatherStrings& allGatherStrings) {
  const int gpu = currentGpu(node.topo);
  PlaceRecord mine{};
  std::strncpy(mine.host, host.c_str(), kMaxHostName - 1);
  if (gpu >= 0) std::strncpy(mine.busid, node.topo.gpus[gpu].pci.busid.c_str(), kMaxBusid - 1);
  mine.package = node.package;
  std::vector<PlaceRecord> places(size);
  STRATA_RETURN_IF_ERROR(allGather(&mine, places.data(), sizeof(PlaceRecord)));

  GatheredCluster out;
  std::map<std::string, int> leader;  // host -> its lowest rank, which describes the host
  for (int r = 0; r < size; ++r) {
    places[r].host[kMaxHostName - 1] = '\0';
    places[r].busid[kMaxBusid - 1] = '\0';
    out.cluster.ranks.push_back({places[r].host, places[r].package, places[r].busid});
    if (leader.emplace(places[r].host, r).second) out.hosts.push_back(places[r].host);
  }
  const bool lead = leader[places[rank].host] == rank;
  STRATA_ASSIGN_OR_RETURN(std::vector<std::string> descriptions,
                          allGatherStrings(lead ? describeText(node) : ""));
  for (const auto& [name, r] : leader) {
    Status read = readDescription(descriptions[r], name, &out);
    if (!read.isOk()) {
      return read.withContext("description of host " + name + " (rank " + std::to_string(r) + ")");
    }
  }
  return out;
}

}  // namespace strata::topo
