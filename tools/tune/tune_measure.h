// strata-tune, step 1: the latency (alpha) and bandwidth (1 / beta) of every level of the
// hierarchy, measured by ping-pong on the job's own ranks, and the hierarchy that carries them
// so the cost model can be evaluated with measured rather than table parameters.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <functional>
#include <map>
#include <string>
#include <vector>

#include "common/status.h"
#include "tools_iface/tools_comm.h"
#include "topology/hierarchy.h"

namespace strata::tools {

struct PingPongOptions {
  size_t smallBytes = 8;         // alpha: latency dominates
  size_t largeBytes = 4u << 20;  // beta: bandwidth dominates
  int smallWarmups = 20;
  int smallReps = 200;
  int largeWarmups = 2;
  int largeReps = 9;
};

struct LevelMeasurement {
  int level = 0;
  int rankA = -1, rankB = -1;  // the pair measured (ranks of the job)
  double latencyUs = 0;        // median half round trip of smallBytes
  double largeHalfRttUs = 0;   // median half round trip of largeBytes
  double bandwidthGBps = 0;    // largeBytes / (largeHalfRttUs - latencyUs)
};

// The pair of ranks that measures `level` of `h`: index 0 and 1 of the stage group of the
// lowest rank whose group has two members or more. {-1, -1} when no group has two.
std::pair<int, int> measuringPair(const topo::Hierarchy& h, int level);

// Measures every level of c.hierarchy, one after another, between the two ranks of one of its
// groups (measuringPair). Collective over MPI_COMM_WORLD, whose ranks are c's; every rank gets the
// same numbers (the measuring rank broadcasts them). `progress` (may be empty) is called on rank 0
// before each level.
StatusOr<std::vector<LevelMeasurement>> measureLevels(
    tools_iface::ToolsComm& c, const PingPongOptions& o,
    const std::function<void(int level)>& progress);

// Each level's measured link: the measurement's latency and bandwidth, source "measured", the
// level's own link kind. Levels without a measurement keep their link.
std::map<std::string, topo::LinkModel> measuredLinks(const topo::Hierarchy& h,
                                                     const std::vector<LevelMeasurement>& m);

// `h` with each level's link replaced by `links` (by level name), rebuilt from every rank's
// groups with Hierarchy::fromKeys, so that predict() evaluates plans with measured parameters.
StatusOr<topo::Hierarchy> withLinks(const topo::Hierarchy& h,
                                    const std::map<std::string, topo::LinkModel>& links);

// The median of `v` (the mean of the middle two for an even count); 0 when empty.
double median(std::vector<double> v);

// `x` rounded to three significant digits: what the plan file and the tables show, kept the
// same in memory so the file and the predictions agree.
double roundSignificant(double x);

// A barrier that sleeps between polls, for ranks that only wait: on an oversubscribed host a
// spinning rank would take the core the measuring pair needs.
Status lazyBarrier(MPI_Comm comm);

}  // namespace strata::tools
