// strata-topo: what strata sees of this machine, of a saved machine description, or of the
// nodes of an mpirun job, and the levels (hierarchy) it builds from that.
//
// Alone it describes this machine and the levels strata would use on N such nodes; with
// --input it describes a saved hwloc XML, NCCL topology XML or `nvidia-smi topo -m` output;
// under mpirun with several ranks it describes the job's cluster, with the levels that
// strataCommInitMPI built. --save writes those levels as a STRATA_TOPO_FILE.
#include <mpi.h>

#include <CLI/CLI.hpp>
#include <cstdio>
#include <exception>
#include <iostream>
#include <map>
#include <nlohmann/json.hpp>
#include <string>
#include <utility>
#include <vector>

#include "common/env.h"
#include "tool_cli.h"
#include "tool_main.h"
#include "topo_input.h"
#include "topo_levels.h"
#include "topo_mpi.h"
#include "topo_render.h"
#include "topology/topo_json.h"

namespace strata::tools {
namespace {

// Beyond this an imagined cluster only makes the tool slow: a topology file's own limit.
constexpr long long kMaxRanks = 1 << 20;

struct Options {
  std::string input;
  std::string format = "text";
  int nodes = 1;
  int ranksPerNode = 0;  // 0: one per GPU, else one per package
  std::string save;
};

void warn(const std::string& message) {
  std::fprintf(stderr, "strata-topo: warning: %s\n", message.c_str());
}

constexpr const char* kTool = "strata-topo";
int fail(const std::string& message) { return toolError(kTool, message); }

void printStructured(const Options& o, const nlohmann::json& j) {
  if (o.format == "json") {
    std::cout << j.dump(2) << "\n";
  } else {
    std::cout << topo::jsonToYaml(j);
  }
  std::cout.flush();
}

void printSection(const std::string& title, const std::string& body) {
  std::cout << "=== " << title << " ===\n" << body << "\n";
}

// --save, in either mode.
int saveLevels(const LevelsReport& levels, const std::string& path) {
  const Status st = saveTopoFile(levels.hierarchy, path);
  if (!st.isOk()) return fail(st.message());
  std::fprintf(stderr,
               "strata-topo: wrote %s: %s over %d ranks, placed in rank order; run with "
               "STRATA_TOPO_FILE=%s\n",
               path.c_str(), levels.hierarchy.describe().c_str(), levels.hierarchy.numRanks(),
               path.c_str());
  return 0;
}

// One node, from the live machine or a file, as `nodes` identical nodes of a job.
int runLocal(const Options& o) {
  NodeDescription node;
  if (o.input.empty()) {
    std::vector<std::string> warnings;
    node = describeLiveNode(env::get(env::var::STRATA_HOSTNAME), &warnings);
    for (const std::string& w : warnings) warn(w);
  } else {
    StatusOr<NodeDescription> read = readNodeFile(o.input);
    if (!read.isOk()) return fail(read.status().message());
    node = read.take();
  }
  const int ranksPerNode = o.ranksPerNode > 0 ? o.ranksPerNode : defaultRanksPerNode(node.topo);
  if (static_cast<long long>(o.nodes) * ranksPerNode > kMaxRanks) {
    return usageError(kTool, "--nodes x --ranks-per-node is " +
                                 std::to_string(static_cast<long long>(o.nodes) * ranksPerNode) +
                                 " ranks; at most " + std::to_string(kMaxRanks));
  }
  StatusOr<LevelsReport> levels =
      levelsOfCluster(imaginedCluster(node.topo, o.nodes, ranksPerNode));
  if (!levels.isOk()) return fail("cannot build the levels: " + levels.status().message());
  const std::string topoFile = env::get(env::var::STRATA_TOPO_FILE);

  if (o.format == "text") {
    printSection("node", formatNodeTree(node.topo));
    printSection("GPU/NIC connection matrix", formatNodeMatrix(node));
    std::string how = o.ranksPerNode > 0        ? ""
                      : !node.topo.gpus.empty() ? " (one per GPU)"
                      : node.topo.packages > 0  ? " (one per package)"
                                                : "";
    std::string body = formatLevels(levels.value());
    if (!topoFile.empty()) {
      body += "note: STRATA_TOPO_FILE=" + topoFile +
              " is set: strataCommInitMPI would take the levels from that file instead\n";
    }
    printSection("levels strata would use: " + std::to_string(o.nodes) + " node" +
                     (o.nodes == 1 ? "" : "s") + " x " + std::to_string(ranksPerNode) + " rank" +
                     (ranksPerNode == 1 ? "" : "s") + how,
                 body);
    std::cout.flush();
  } else {
    nlohmann::json j = nodeJson(node);
    j["assumed"] = {{"nodes", o.nodes}, {"ranks_per_node", ranksPerNode}};
    addLevelsJson(levels.value(), &j);
    printStructured(o, j);
  }
  return o.save.empty() ? 0 : saveLevels(levels.value(), o.save);
}

// The hosts of a cluster grouped by identical descriptions, in order of their first rank.
std::vector<std::vector<std::string>> identicalHosts(const ClusterView& view) {
  std::vector<std::vector<std::string>> groups;
  std::map<std::string, size_t> groupOf;  // description without the host name -> group
  for (const std::string& host : view.hosts) {
    nlohmann::json j = nodeJson(view.nodes.at(host));
    j.erase("host");
    auto [it, added] = groupOf.emplace(j.dump(), groups.size());
    if (added) groups.emplace_back();
    groups[it->second].push_back(host);
  }
  return groups;
}

void printClusterText(const ClusterView& view, const LevelsReport& levels) {
  std::string nodes;
  for (const std::string& host : view.hosts) {
    const std::vector<int>& ranks = view.ranksOf.at(host);
    nodes += "node " + host + ": " + std::to_string(ranks.size()) + " rank" +
             (ranks.size() == 1 ? "" : "s") + " (" + formatRanges(ranks) + ")\n";
  }
  printSection("cluster: " + std::to_string(view.ranks) + " ranks on " +
                   std::to_string(view.hosts.size()) + " node" +
                   (view.hosts.size() == 1 ? "" : "s"),
               nodes);
  for (const std::vector<std::string>& hosts : identicalHosts(view)) {
    std::string names;
    for (const std::string& h : hosts) names += (names.empty() ? "" : ", ") + h;
    const NodeDescription& node = view.nodes.at(hosts[0]);
    printSection(
        "node " + names + (hosts.size() > 1 ? " (identical)" : ""),
        formatNodeTree(node.topo) + "\nGPU/NIC connection matrix:\n" + formatNodeMatrix(node));
  }
  // The library's own words; the differences between hosts are only in its log, so they are
  // added from the rebuilt levels.
  std::string body = view.describeText;
  for (const std::string& d : levels.differences) body += "  difference: " + d + "\n";
  printSection("levels strataCommInitMPI built (strataCommDescribe on rank 0)", body);
  std::cout.flush();
}

nlohmann::json clusterJson(const ClusterView& view, const LevelsReport& levels) {
  nlohmann::json nodes = nlohmann::json::array(), placement = nlohmann::json::array();
  for (const std::string& host : view.hosts) {
    nlohmann::json j = nodeJson(view.nodes.at(host));
    j["host"] = host;
    j["ranks"] = view.ranksOf.at(host);
    nodes.push_back(std::move(j));
  }
  for (size_t r = 0; r < view.cluster.ranks.size(); ++r) {
    const topo::RankPlace& p = view.cluster.ranks[r];
    placement.push_back(
        {{"rank", r}, {"host", p.host}, {"package", p.package}, {"gpu_pci", p.gpuBusid}});
  }
  nlohmann::json j{{"ranks", view.ranks}, {"nodes", nodes}, {"placement", placement}};
  addLevelsJson(levels, &j);
  j["describe"] = view.describeText;
  return j;
}

// The ranks of this mpirun job. Collective over MPI_COMM_WORLD; only rank 0 prints.
int runCluster(const Options& o, int rank) {
  StatusOr<ClusterView> gathered = gatherClusterView();
  if (!gathered.isOk()) return rank == 0 ? fail(gathered.status().message()) : 1;
  if (rank != 0) return 0;
  const ClusterView view = gathered.take();
  for (const std::string& w : view.warnings) warn(w);
  if (o.nodes != 1 || o.ranksPerNode != 0) {
    warn("--nodes and --ranks-per-node are ignored under mpirun: the job's own ranks are shown");
  }
  // The levels as strataCommInitMPI made them: from STRATA_TOPO_FILE when set, else detected
  // from the same places and node descriptions it exchanged.
  const std::string topoFile = env::get(env::var::STRATA_TOPO_FILE);
  StatusOr<LevelsReport> levels =
      topoFile.empty() ? levelsOfCluster(view.cluster) : levelsOfTopoFile(topoFile, view.ranks);
  if (!levels.isOk()) return fail("cannot build the levels: " + levels.status().message());

  if (o.format == "text") {
    printClusterText(view, levels.value());
  } else {
    printStructured(o, clusterJson(view, levels.value()));
  }
  if (o.save.empty()) return 0;
  const int misplaced = firstRankOutOfOrder(levels.value().hierarchy);
  if (misplaced >= 0) {
    warn(
        "rank " + std::to_string(misplaced) + " (host " + view.cluster.ranks[misplaced].host +
        ") is not where a topology file puts it: the file places ranks node by node in rank "
        "order (mpirun --map-by slot or core), so it describes a job of the same shape placed that "
        "way, not this placement");
  }
  return saveLevels(levels.value(), o.save);
}

int run(const Options& o, int* argc, char*** argv) {
  MPI_Init(argc, argv);
  int rank = 0, size = 1;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  int code = 0;
  if (size > 1 && o.input.empty()) {
    code = runCluster(o, rank);
  } else if (rank == 0) {
    // A file describes one node, whatever the job: rank 0 alone prints it.
    code = runLocal(o);
  }
  MPI_Finalize();
  return code;
}

constexpr const char* kFooter =
    R"(Output (text): the node as a tree (packages, NUMA nodes, GPUs, NICs, NVLink/NVSwitch
and the inter-socket link), the GPU/NIC connection matrix (as nvidia-smi topo -m prints it),
and the levels strata would use: each level's group sizes, link, bandwidth and latency.
JSON and YAML hold the same: packages, numa_nodes, cores, gpus, nics, links, matrix, levels.

Under mpirun with several ranks the tool describes the job instead: its nodes (host names,
or STRATA_HOSTNAME per rank), each distinct node once, and the levels strataCommInitMPI
built (JSON: "nodes": [{host, ranks, ...}], "levels"). --nodes and --ranks-per-node are
then ignored. With --input, only rank 0 prints.

--save FILE writes the levels as a topology file for STRATA_TOPO_FILE. The file maps ranks
in order: rank r sits at position r % size[0] of its level-0 group, its level-0 group at
(r / size[0]) % size[1] of its level-1 group, and so on. It therefore fits a job whose ranks
fill each group in rank order: node by node, and socket by socket within a node (mpirun
--map-by slot or --map-by core; not --map-by node or socket, which deal ranks round-robin).
Under mpirun the tool warns when the job's placement is not that order. Only regular
hierarchies (every group of a level the same size) can be saved.

Examples:
  strata-topo
      this machine, and the levels of one such node with one rank per GPU (or package)
  strata-topo --input tests/data/topologies/hwloc/nvidiaDGX2.xml
      a DGX-2 from its hwloc export: 16 V100s on NVSwitches, levels nvlink(16)
  strata-topo --input tests/data/topologies/hwloc/nvidiaDGX2.xml --nodes 4 --format json
      the same as JSON, with the levels of 4 such nodes: nvlink(16) x network(4)
  nvidia-smi topo -m > topo.txt; strata-topo --input topo.txt
      a node described by nvidia-smi (its own matrix is shown as printed)
  mpirun -n 16 --map-by slot strata-topo
      the nodes of the job and the levels strataCommInitMPI builds on them
  mpirun -n 2 env STRATA_HOSTNAME=a strata-topo : -n 2 env STRATA_HOSTNAME=b strata-topo
      two nodes emulated on one machine: levels node(2) x network(2)
  strata-topo --input tests/data/topologies/hwloc/nvidiaDGX2.xml --nodes 2 --save dgx2x2.yaml
  STRATA_TOPO_FILE=dgx2x2.yaml mpirun -n 32 strata-allreduce-demo
      save the levels of two DGX-2s and make a 32-rank job use them without detection)";

}  // namespace
}  // namespace strata::tools

int main(int argc, char** argv) {
  using strata::tools::Options;
  Options o;
  CLI::App app{
      "strata-topo: describe this machine, a saved machine description, or the nodes of an "
      "mpirun job as strata sees them, with the levels (hierarchy) strata builds from it."};
  strata::tools::setFooter(app, strata::tools::kFooter);
  app.add_option("--input", o.input,
                 "read a saved description instead of this machine: an hwloc XML export "
                 "(lstopo foo.xml), an NCCL topology XML (NCCL_TOPO_DUMP_FILE) or the text "
                 "output of nvidia-smi topo -m")
      ->check(strata::tools::nonEmptyPath());
  app.add_option("--format", o.format, "output format: text, yaml or json")
      ->check(CLI::IsMember({"text", "yaml", "json"}))
      ->capture_default_str();
  app.add_option("--nodes", o.nodes, "levels for this many identical nodes (not under mpirun)")
      ->check(CLI::Range(1, 1 << 20))
      ->capture_default_str();
  app.add_option("--ranks-per-node", o.ranksPerNode,
                 "ranks on each node (not under mpirun); default one per GPU, else one per "
                 "package. Rank i of a node uses GPU i % GPUs")
      ->check(CLI::Range(1, 1 << 20));
  app.add_option("--save", o.save,
                 "write the levels to this YAML topology file (for STRATA_TOPO_FILE); ranks "
                 "map to it in order, see below")
      ->check(strata::tools::nonEmptyPath());
  // The short spellings before the tools shared one flag language.
  if (auto rc = strata::tools::refuseRenamedFlags(
          "strata-topo", argc, argv,
          {{"-i", "--input FILE"}, {"-f", "--format text|yaml|json"}, {"-s", "--save FILE"}})) {
    return *rc;
  }
  if (auto rc = strata::tools::parseCommandLine(app, argc, argv)) return *rc;
  return strata::tools::guardedMain("strata-topo",
                                    [&] { return strata::tools::run(o, &argc, &argv); });
}
