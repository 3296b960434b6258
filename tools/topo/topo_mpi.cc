#include "topo_mpi.h"

#include <mpi.h>

#include <cstring>
#include <nlohmann/json.hpp>
#include <utility>

#include "common/env.h"
#include "common/mpi_check.h"
#include "strata/strata_mpi.h"
#include "topology/detect.h"
#include "topology/probe.h"
#include "topology/topo_json.h"

namespace strata::tools {
namespace {

constexpr int kMaxHostName = 256;
constexpr int kMaxBusid = 32;
constexpr size_t kDescribeBytes = 1 << 16;

// What every rank tells every other: enough to find the lowest rank of each host.
struct PlaceRecord {
  char host[kMaxHostName];
  char busid[kMaxBusid];
  int package;
};

// The library's own view: the levels strataCommInitMPI built, as strataCommDescribe prints them
// on this rank. Collective; fails on every rank together (init agrees on errors).
StatusOr<std::string> describeByLibrary() {
  strataComm_t comm = nullptr;
  strataResult_t r = strataCommInitMPI(&comm, MPI_COMM_WORLD);
  if (r != strataSuccess) {
    return Status(static_cast<Code>(r), std::string("strataCommInitMPI failed: ") +
                                            strataGetErrorString(r) + ": " +
                                            strataGetLastError(nullptr));
  }
  std::string text(kDescribeBytes, '\0');
  r = strataCommDescribe(comm, text.data(), text.size());
  const std::string error = r == strataSuccess ? "" : strataGetLastError(comm);
  // Destroy is collective: every rank reaches it whether or not its describe worked.
  strataCommDestroy(comm);
  if (r != strataSuccess) {
    return Status(static_cast<Code>(r), "strataCommDescribe failed: " + error);
  }
  text.resize(std::strlen(text.c_str()));
  return text;
}

// Gathers one string per rank to rank 0 (empty ones included); the others get nothing.
StatusOr<std::vector<std::string>> gatherStrings(int rank, int size, const std::string& mine) {
  int len = static_cast<int>(mine.size());
  std::vector<int> lens(size), displs(size);
  STRATA_MPI_CHECK(MPI_Gather(&len, 1, MPI_INT, lens.data(), 1, MPI_INT, 0, MPI_COMM_WORLD));
  long long total = 0;
  for (int r = 0; r < size && rank == 0; ++r) {
    displs[r] = static_cast<int>(total);
    total += lens[r];
  }
  // Only rank 0 knows the total; the others must not send into a gather it cannot hold.
  int fits = total <= (1ll << 30) ? 1 : 0;
  STRATA_MPI_CHECK(MPI_Bcast(&fits, 1, MPI_INT, 0, MPI_COMM_WORLD));
  if (fits == 0) return internalError("node descriptions exceed 1 GiB");
  std::vector<char> all(static_cast<size_t>(total) + 1);
  STRATA_MPI_CHECK(MPI_Gatherv(mine.data(), len, MPI_CHAR, all.data(), lens.data(), displs.data(),
                               MPI_CHAR, 0, MPI_COMM_WORLD));
  std::vector<std::string> out;
  if (rank != 0) return out;
  out.resize(size);
  for (int r = 0; r < size; ++r) out[r].assign(all.data() + displs[r], lens[r]);
  return out;
}

}  // namespace

StatusOr<ClusterView> gatherClusterView() {
  int rank = 0, size = 1;
  STRATA_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  STRATA_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  STRATA_ASSIGN_OR_RETURN(std::string describeText, describeByLibrary());

  // The same inputs strataCommInitMPI used (src/core/topo_exchange.cc), read again here.
  const topo::LocalInfo local = topo::detectLocal(env::get(env::var::STRATA_HOSTNAME));
  std::vector<std::string> warnings;
  const NodeDescription node = describeLiveNode(local.host, &warnings);
  const int gpu = topo::currentGpu(node.topo);

  PlaceRecord mine{};
  std::strncpy(mine.host, local.host.c_str(), kMaxHostName - 1);
  if (gpu >= 0) std::strncpy(mine.busid, node.topo.gpus[gpu].pci.busid.c_str(), kMaxBusid - 1);
  mine.package = local.package;
  std::vector<PlaceRecord> places(size);
  STRATA_MPI_CHECK(MPI_Allgather(&mine, sizeof(PlaceRecord), MPI_BYTE, places.data(),
                                 sizeof(PlaceRecord), MPI_BYTE, MPI_COMM_WORLD));
  std::map<std::string, int> leader;  // host -> its lowest rank, the one that describes it
  for (int r = 0; r < size; ++r) {
    places[r].host[kMaxHostName - 1] = '\0';
    places[r].busid[kMaxBusid - 1] = '\0';
    leader.emplace(places[r].host, r);
  }
  // Only the lowest rank of each host sends its description (a node's can be tens of KiB).
  std::string payload;
  if (leader[local.host] == rank) {
    payload = nlohmann::json{{"node", topo::toJson(node.topo)}, {"warnings", warnings}}.dump();
  }
  STRATA_ASSIGN_OR_RETURN(std::vector<std::string> all, gatherStrings(rank, size, payload));
  ClusterView view;
  if (rank != 0) return view;

  view.ranks = size;
  view.describeText = std::move(describeText);
  for (int r = 0; r < size; ++r) {
    const std::string host = places[r].host;
    if (view.ranksOf.count(host) == 0) view.hosts.push_back(host);
    view.ranksOf[host].push_back(r);
    view.cluster.ranks.push_back({host, places[r].package, places[r].busid});
  }
  for (const auto& [host, r] : leader) {
    try {
      const nlohmann::json j = nlohmann::json::parse(all[r]);
      StatusOr<topo::NodeTopology> t = topo::nodeTopologyFromJson(j.at("node").dump());
      if (!t.isOk()) return t.status().withContext("description of host " + host);
      view.nodes[host].topo = t.value();
      view.cluster.hosts[host] = t.take();
      for (const auto& w : j.at("warnings")) {
        view.warnings.push_back("host " + host + ": " + w.get<std::string>());
      }
    } catch (const nlohmann::json::exception& e) {
      return internalError("description of host " + host + " (rank " + std::to_string(r) +
                           "): " + e.what());
    }
  }
  return view;
}

}  // namespace strata::tools
