// The communicator behind strataComm_t: the user's ranks, the hierarchy, and one stage group
// (sub-communicator plus fabric) per level.
#pragma once

#include <mpi.h>

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "decompose/schedule.h"
#include "fabrics/fabric.h"
#include "topology/hierarchy.h"

namespace strata::core {

// This rank's group at one level, when it is a member.
struct LevelGroup {
  MPI_Comm comm = MPI_COMM_NULL;             // owned; MPI_COMM_NULL when not a member
  std::unique_ptr<fabric::Fabric> fabric;    // runs on comm
  int index = -1;                            // this rank's position in the group
  int size = 0;
};

// Schedules by (collective, count), so repeated calls of one size compute nothing new.
class ScheduleCache {
 public:
  template <typename Make>
  const std::vector<plan::Step>& get(int collective, size_t count, Make make) {
    auto key = std::make_pair(collective, count);
    auto it = cache_.find(key);
    if (it != cache_.end()) return it->second;
    if (cache_.size() >= kMaxEntries) cache_.clear();  // bounded: a training loop has few sizes
    return cache_.emplace(key, make()).first->second;
  }

 private:
  static constexpr size_t kMaxEntries = 256;
  std::map<std::pair<int, size_t>, std::vector<plan::Step>> cache_;
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

}  // namespace strata::core

// Defined in the global namespace: the public header declares `struct strataComm`.
struct strataComm {
  MPI_Comm mpi = MPI_COMM_NULL;  // our duplicate of the user's communicator (MPI_ERRORS_RETURN)
  int rank = 0;
  int size = 0;
  strata::topo::Hierarchy hierarchy;
  std::string hierarchySource;  // "topology file X", "detected", ...
  std::vector<strata::core::LevelGroup> levels;  // one per hierarchy level
  std::unique_ptr<strata::fabric::Fabric> flat;  // the whole communicator, on mpi
  strata::core::Scratch scratch;
  strata::core::ScheduleCache schedules;
  size_t chunkBytes = 0;  // STRATA_CHUNK_BYTES: the largest pass
  std::string lastError;
};
