// What a fabric declares about itself (fabrics/registry.h holds one entry per fabric), in a
// form the pure planner can read without knowing any fabric: the planner and the cost model
// read these traits and cost hints, never fabric names.
#pragma once

#include <string>
#include <vector>

namespace strata {

enum class MemoryKind { kHost, kDevice };

// How the cost model charges a fabric's collectives (decompose/cost_model.h).
// The allreduce a message fabric runs on its own below FabricTraits::smallAllReduceBytes (a stage
// whose algorithm is auto; from that size on, its ring).
enum class SmallAllReduce {
  kAny,                // the cost model takes the cheapest of ring, rhd and direct
  kRecursiveDoubling,  // log2(p) rounds of the whole vector (mpi: fabrics/mpi/mpi_small.h)
  kDirect,             // every vector to every member in one round (ucx: p2p_collectives.h)
};

enum class CostStyle {
  kMessages,     // point-to-point messages between members (MPI): ring, halving-doubling, direct
  kSharedSlots,  // copies through slots in shared memory and a shared-memory barrier (shm)
};

struct FabricTraits {
  std::string name;  // as topology and plan files name it: "mpi", "shm", "nccl", ...
  MemoryKind memory = MemoryKind::kHost;  // the buffers its collectives take
  bool sameHost = false;                  // every member must run on one host
  bool async = false;      // allReduceStart makes progress while the caller does other work
  bool wrapsHost = false;  // runs a host fabric's collectives on device buffers (staged, ...)
  CostStyle cost = CostStyle::kMessages;
  // Messages between ranks that share memory pass through the MPI library's own shared FIFOs:
  // bandwidth divided and latency multiplied by these (1: the link as it is).
  double sharedMemoryBandwidthDivisor = 1;
  double sharedMemoryLatencyFactor = 1;
  // What the fabric's own allreduce runs: `smallAllReduce` below this many bytes, a ring from
  // there on, so that the planner costs what runs (kAny: whatever is cheapest).
  SmallAllReduce smallAllReduce = SmallAllReduce::kAny;
  double smallAllReduceBytes = 0;
};

// The traits named `name` in `table`, or those of a message-passing fabric with no cost hints
// when the table has none (a fabric of this name is then checked elsewhere: topology and plan
// files only accept registered names).
const FabricTraits& traitsOf(const std::vector<FabricTraits>& table, const std::string& name);

}  // namespace strata
