#include "core/topo_exchange.h"

#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "common/log.h"
#include "topology/cluster.h"
#include "topology/detect.h"
#include "topology/hwloc_reader.h"
#include "topology/probe.h"
#include "topology/topo_json.h"

namespace strata::core {
namespace {

constexpr int kMaxHostName = 256;
constexpr int kMaxBusid = 32;

// This rank's node as detection sees it. Failures degrade to what is known (the host name):
// a machine hwloc cannot read still gets a correct, if coarser, hierarchy.
topo::NodeTopology describeNode(const std::string& host, int* boundPackage) {
  StatusOr<topo::NodeTopology> live = topo::readLiveHwloc(boundPackage);
  topo::NodeTopology t;
  if (live.isOk()) {
    t = live.take();
  } else {
    STRATA_WARN(kSubsysTopo, "hwloc detection failed (%s); using host names only",
                live.status().message().c_str());
  }
  t.host = host;
  Status st = topo::probeInfinibandSysfs("/sys", &t);
  if (!st.isOk()) STRATA_INFO(kSubsysTopo, "infiniband probe: %s", st.message().c_str());
  st = topo::probeCudaAndNvml(&t);
  if (!st.isOk()) STRATA_INFO(kSubsysTopo, "cuda/nvml probe: %s", st.message().c_str());
  return t;
}

}  // namespace

StatusOr<DetectedHierarchy> detectHierarchy(boot::Bootstrap& boot, const std::string& host,
                                            const std::string& net) {
  const int size = boot.size(), rank = boot.rank();
  topo::LocalInfo local;
  local.host = host;
  const topo::NodeTopology node = describeNode(local.host, &local.package);
  const int gpu = topo::currentGpu(node);

  struct Record {
    char host[kMaxHostName];
    char busid[kMaxBusid];
    int package;
  };
  Record rec{};
  std::strncpy(rec.host, local.host.c_str(), kMaxHostName - 1);
  if (gpu >= 0) std::strncpy(rec.busid, node.gpus[gpu].pci.busid.c_str(), kMaxBusid - 1);
  rec.package = local.package;
  std::vector<Record> all(size);
  STRATA_RETURN_IF_ERROR(boot.allGather(&rec, all.data(), sizeof(Record)));

  topo::Cluster cluster;
  std::map<std::string, int> leader;  // host -> its lowest rank, which describes the host
  for (int r = 0; r < size; ++r) {
    all[r].host[kMaxHostName - 1] = '\0';
    all[r].busid[kMaxBusid - 1] = '\0';
    cluster.ranks.push_back({all[r].host, all[r].package, all[r].busid});
    leader.emplace(all[r].host, r);
  }
  const bool lead = leader[local.host] == rank;
  STRATA_ASSIGN_OR_RETURN(auto descriptions,
                          boot::allGatherStrings(boot, lead ? topo::toJson(node).dump() : ""));
  Status parsed = Status::ok();
  for (const auto& [name, r] : leader) {
    StatusOr<topo::NodeTopology> t = topo::nodeTopologyFromJson(descriptions[r]);
    if (!t.isOk()) {
      parsed = t.status().withContext("description of host " + name);
      break;
    }
    cluster.hosts[name] = t.take();
  }
  STRATA_RETURN_IF_ERROR(parsed);  // every rank parsed the same strings

  STRATA_ASSIGN_OR_RETURN(topo::ClusterHierarchy ch,
                          topo::buildClusterHierarchy(cluster, "shm", net));
  if (rank == 0) {
    for (const std::string& d : ch.differences) {
      STRATA_WARN(kSubsysTopo,
                  "heterogeneous cluster: %s (results stay correct; the plan is "
                  "sized for the slowest host)",
                  d.c_str());
    }
  }
  return DetectedHierarchy{std::move(ch.hierarchy), "detected: host names, hwloc, sysfs, CUDA"};
}

}  // namespace strata::core
