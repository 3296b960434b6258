#include "topo_mpi.h"

#include <mpi.h>

#include <cstring>
#include <memory>
#include <utility>

#include "common/mpi_check.h"
#include "strata/strata_mpi.h"
#include "tools_iface/tools_comm.h"
#include "world_comm.h"

namespace strata::tools {
namespace {

constexpr size_t kDescribeBytes = 1 << 16;

// The library's own view: the levels strataCommInitMPI built, as strataCommDescribe prints them
// on this rank. Local; `comm` is made.
StatusOr<std::string> describeByLibrary(strataComm_t comm) {
  std::string text(kDescribeBytes, '\0');
  const strataResult_t r = strataCommDescribe(comm, text.data(), text.size());
  if (r != strataSuccess) {
    return Status(static_cast<Code>(r),
                  "strataCommDescribe failed: " + std::string(strataGetLastError(comm)));
  }
  text.resize(std::strlen(text.c_str()));
  return text;
}

// What the communicator over MPI_COMM_WORLD shows: its description, and the cluster gathered as
// its init gathers it (the tools interface's gatherCluster). Collective; fails on every rank
// together.
StatusOr<std::pair<std::string, topo::GatheredCluster>> askLibrary() {
  STRATA_ASSIGN_OR_RETURN(strataComm_t comm, tools::worldComm());
  const std::unique_ptr<tools_iface::ToolsComm> tools = tools_iface::toolsCommOf(comm);
  StatusOr<std::string> text = describeByLibrary(comm);
  // The gather is collective: every rank enters it, or none does.
  Status described = tools->agree(text.status());
  StatusOr<topo::GatheredCluster> gathered =
      described.isOk() ? tools->gatherCluster() : StatusOr<topo::GatheredCluster>(described);
  // Destroy is collective: every rank reaches it whatever happened before.
  strataCommDestroy(comm);
  if (!gathered.isOk()) return gathered.status();
  return std::make_pair(text.take(), gathered.take());
}

}  // namespace

StatusOr<ClusterView> gatherClusterView() {
  int rank = 0, size = 1;
  STRATA_MPI_CHECK(MPI_Comm_rank(MPI_COMM_WORLD, &rank));
  STRATA_MPI_CHECK(MPI_Comm_size(MPI_COMM_WORLD, &size));
  STRATA_ASSIGN_OR_RETURN(auto asked, askLibrary());
  ClusterView view;
  if (rank != 0) return view;

  topo::GatheredCluster& gathered = asked.second;
  view.ranks = size;
  view.describeText = std::move(asked.first);
  view.hosts = gathered.hosts;
  for (int r = 0; r < size; ++r) view.ranksOf[gathered.cluster.ranks[r].host].push_back(r);
  for (const auto& [host, node] : gathered.cluster.hosts) view.nodes[host].topo = node;
  for (const auto& [host, problems] : gathered.problems) {
    for (const topo::NodeProblem& p : problems) {
      view.warnings.push_back("host " + host + ": " + problemText(p));
    }
  }
  view.cluster = std::move(gathered.cluster);
  return view;
}

}  // namespace strata::tools
