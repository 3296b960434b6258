// The communicator behind strataComm_t: the user's ranks, the hierarchy, and one stage group
// (sub-communicator plus fabric) per level.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "decompose/cost_model.h"
#include "decompose/plan.h"
#include "decompose/plan_file.h"
#include "decompose/schedule.h"
#include "fabrics/fabric.h"
#include "topology/hierarchy.h"

namespace strata::core {

// This rank's group at one level of a (possibly derived) hierarchy, when it is a member.
struct LevelGroup {
  MPI_Comm comm = MPI_COMM_NULL;             // owned; MPI_COMM_NULL when not a member
  std::unique_ptr<fabric::Fabric> fabric;    // runs on comm, on host buffers
  // The same group on device buffers, made on the first device call that needs it (it may wrap
  // `fabric`, so it is declared after it and destroyed before it).
  std::unique_ptr<fabric::Fabric> deviceFabric;
  int index = -1;                            // this rank's position in the group
  int size = 0;
};

// Schedules by (collective, count), so repeated calls of one size compute nothing new.
// Bounded (a training loop has few sizes): when full, an entry is evicted, never the one the
// previous get() returned, so the references of the last two calls stay valid (the pipeline
// holds a full piece's schedule and the last piece's).
class ScheduleCache {
 public:
  template <typename Make>
  const std::vector<plan::Step>& get(int collective, size_t count, Make make) {
    const Key key{collective, count};
    auto it = cache_.find(key);
    if (it == cache_.end()) {
      if (cache_.size() >= kMaxEntries) {
        auto victim = cache_.begin();
        if (victim->first == last_) ++victim;
        cache_.erase(victim);
      }
      it = cache_.emplace(key, make()).first;
    }
    last_ = key;
    return it->second;
  }

 private:
  using Key = std::pair<int, size_t>;
  static constexpr size_t kMaxEntries = 256;
  std::map<Key, std::vector<plan::Step>> cache_;
  Key last_{-1, 0};
};

// A plan ready to run: its derived hierarchy (one level per stage), the group of each stage,
// and its schedules by count.
struct PlanExec {
  plan::Plan plan;
  topo::Hierarchy derived;           // unused for passthrough
  std::vector<LevelGroup*> groups;   // per derived level; owned by strataComm::groups
  std::string description;           // describePlan()
  ScheduleCache schedules;            // this plan's allreduce steps by count
};

// Working memory reused across calls, so the steady state allocates nothing.
class Scratch {
 public:
  void* get(size_t bytes) {
    if (bytes > buf_.size()) buf_.resize(bytes);
    return buf_.data();
  }

 private:
  std::vector<char> buf_;
};

// The GPU side of a communicator (gpu/device_state.h): its stream, device scratch, progress
// thread and the whole communicator's device fabric. Null until the first device call.
struct DeviceState;
struct DeviceStateDeleter {
  void operator()(DeviceState* d) const;
};

}  // namespace strata::core

// Defined in the global namespace: the public header declares `struct strataComm`.
struct strataComm {
  MPI_Comm mpi = MPI_COMM_NULL;  // our duplicate of the user's communicator (MPI_ERRORS_RETURN)
  int rank = 0;
  int size = 0;
  strata::topo::Hierarchy hierarchy;
  std::string hierarchySource;  // "topology file X", "detected", ...
  // Every stage group made so far, by a signature of its membership (so plans that share a
  // group share its sub-communicator). Created collectively, the first time a plan needs it.
  std::map<uint64_t, std::unique_ptr<strata::core::LevelGroup>> groups;
  std::vector<strata::core::LevelGroup*> levels;  // the hierarchy's own levels (RS/AG paths)
  // Plans: from STRATA_PLAN_FILE when set, else chosen by the planner per size bucket.
  std::vector<strata::plan::PlanRule> planRules;  // empty: no plan file
  std::string planSource;
  std::map<int, std::unique_ptr<strata::core::PlanExec>> plans;  // by bucket or rule index
  std::map<std::string, std::unique_ptr<strata::core::PlanExec>> forcedPlans;  // by description
  strata::plan::CostParams costParams;
  std::unique_ptr<strata::fabric::Fabric> flat;  // the whole communicator, on mpi
  strata::core::Scratch scratch;
  strata::core::ScheduleCache schedules;
  size_t chunkBytes = 0;  // STRATA_CHUNK_BYTES: the largest pass
  strata::fabric::FabricOptions fabricOptions;  // STRATA_SHM_SLOT_BYTES, ...
  size_t pipelineBytes = 0;  // STRATA_PIPELINE_BYTES: a pipeline piece (0: none)
  std::unique_ptr<strata::core::DeviceState, strata::core::DeviceStateDeleter> device;
  // True while a call on device buffers runs (core/device_path.h): the dispatcher's memory and
  // fabrics are then the GPU's. Only the thread running the call reads it.
  bool onDevice = false;
  std::string lastError;
};
