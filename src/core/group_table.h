// A communicator's groups: the control plane and fabric of each group this rank belongs to, at
// each level of the hierarchy and of every plan's derived hierarchy, made once and shared by
// every plan that needs the same group; and the flat group that carries the whole
// communicator's data. Setup state (core/threads.h): made on the issuing thread, collectively;
// running calls use the groups through their programs' pointers.
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "common/status.h"
#include "core/setup_context.h"
#include "core/threads.h"
#include "fabrics/fabric.h"
#include "topology/hierarchy.h"

namespace strata::core {

// This rank's group at one level of a (possibly derived) hierarchy, when it is a member.
struct LevelGroup {
  std::unique_ptr<boot::Bootstrap> boot;   // the group's control plane; null: not a member
  std::unique_ptr<fabric::Fabric> fabric;  // host buffers
  // The same group on device buffers, made by the first device call that needs it (it may
  // wrap `fabric`, so it is declared after it and destroyed before it).
  std::unique_ptr<fabric::Fabric> deviceFabric;
  std::string fabricName;  // the level's fabric, as the hierarchy names it
  int index = -1;          // this rank's position in the group
  int size = 0;
};

class GroupTable {
 public:
  GroupTable() = default;
  ~GroupTable() { release(); }
  // What the table reads of its communicator (core/setup_context.h). Before any other call.
  void bind(SetupContext sc) { sc_ = std::move(sc); }
  GroupTable(const GroupTable&) = delete;
  GroupTable& operator=(const GroupTable&) = delete;

  // --- Setup: collective, every rank in the same order. ---
  // The group of this rank at `level` of `h` (the hierarchy or a plan's derived one).
  StatusOr<LevelGroup*> ensure(const topo::Hierarchy& h, int level, IssuingThread);
  // The hierarchy's own levels' groups (the reduce-scatter, all-gather and rooted paths use
  // them; allreduce plans share them where their stages match) and the flat group.
  Status buildLevels(IssuingThread);
  // With STRATA_COMPRESS on: every rank's host (hostOf()), so that plans know which stages
  // cross hosts.
  Status gatherHosts(IssuingThread);

  // --- Read by running calls: made before any call runs. ---
  LevelGroup& flat() { return *flat_; }  // the whole communicator, for its data
  const std::vector<LevelGroup*>& levels() const { return levels_; }  // the hierarchy's own
  // By rank, dense host ids; empty unless STRATA_COMPRESS is on.
  const std::vector<int>& hostOf() const { return hostOf_; }

  // strataCommAbort: every group's fabrics and control plane stop waiting on peers.
  void abandon();
  // Fabric::retire on every group: the communicator was replaced by a shrink.
  void retire();
  // Frees every group: device fabrics first (they may wrap host fabrics), then host fabrics,
  // then control planes. Local.
  void release();

 private:
  // abandon() and retire(): `how` on every group's fabrics, abandon on its control plane.
  void leave(void (fabric::Fabric::*how)());

  SetupContext sc_;
  // Every stage group made so far, by a signature of its membership.
  std::map<uint64_t, std::unique_ptr<LevelGroup>> groups_;
  std::unique_ptr<LevelGroup> flat_;
  std::vector<LevelGroup*> levels_;
  std::vector<int> hostOf_;
};

}  // namespace strata::core
