// Where strata-plan's hierarchy comes from: a topology file, a saved node description made into
// a cluster of identical nodes, the `--cluster NODESxGPUS` shorthand, or (--live) the
// communicator strataCommInitMPI builds for this mpirun job.
#pragma once

#include <string>
#include <vector>

#include "common/status.h"
#include "decompose/cost_model.h"
#include "decompose/plan_file.h"
#include "plan_args.h"
#include "plan_published.h"
#include "topology/hierarchy.h"

struct strataComm;

namespace strata::tools {

struct SourceOptions {
  std::string topo;          // --topo: a STRATA_TOPO_FILE
  std::string input;         // --input: hwloc XML, NCCL XML or nvidia-smi topo -m output
  int nodes = 1;             // --nodes, with --input
  int ranksPerNode = 0;      // --ranks-per-node, with --input; 0: one per GPU, else per package
  SimulatedCluster cluster;  // --cluster and its link options; shape empty: not given
  bool live = false;         // --live
};

// The hierarchy to plan for, and how it was made.
struct Target {
  topo::Hierarchy hierarchy;
  std::string source;              // "topology file x.yaml", "simulated cluster 24x8", ...
  std::vector<std::string> notes;  // differences between hosts, links left unknown, ...
  // Whether the ranks are known to be GPUs (a --cluster, a node description with GPUs, a
  // topology file with a gpu key), and their generation and CPU vendor where known, for the
  // NCCL baseline (plan_baseline.h).
  bool gpus = false;
  std::string gpu;
  std::string cpu;
  // What the topology file says was measured (its `# published:` lines), for the NCCL baseline.
  std::vector<PublishedFigure> published;
  // --live only: what the communicator itself runs with (STRATA_PLAN_FILE, cost parameters).
  bool live = false;
  std::vector<plan::PlanRule> commRules;
  plan::BlockRules commBlocks;  // the file's pinned reduce-scatter and all-gather forms
  std::string commPlanSource;
  plan::CostParams commParams;
};

// An error unless exactly one source is given, and --nodes/--ranks-per-node only with --input.
// `allowLive` false refuses --live (simulate describes clusters that are not here).
Status checkSource(const SourceOptions& o, bool allowLive);

// Every source but --live. Problems of the command line's own values (a --cluster spec, too
// many ranks) are kInvalidUsage; a file that cannot be read or used is another code.
StatusOr<Target> loadTarget(const SourceOptions& o);

// --live: MPI and a strata communicator over MPI_COMM_WORLD, for the lifetime of the object.
// Rank 0 reports; the others only take part in the collectives.
class LiveJob {
 public:
  LiveJob();   // MPI_Init
  ~LiveJob();  // strataCommDestroy when a communicator was made, then MPI_Finalize
  LiveJob(const LiveJob&) = delete;
  LiveJob& operator=(const LiveJob&) = delete;

  // strataCommInitMPI(MPI_COMM_WORLD). Collective; fails on every rank alike.
  Status initComm();
  int rank() const { return rank_; }
  // The communicator's hierarchy and plan settings. Call after initComm succeeded.
  Target target() const;

 private:
  strataComm* comm_ = nullptr;
  int rank_ = 0;
  int size_ = 1;
};

}  // namespace strata::tools
