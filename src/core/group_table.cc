#include "core/group_table.h"

#include <map>
#include <string>

#include "common/log.h"
#include "core/names.h"
#include "fabrics/registry.h"

namespace strata::core {
namespace {

// FNV-1a over every rank's (member, color, index) at `level` and the fabric name: equal on all
// ranks, and equal for two hierarchies only when they split the ranks into the same groups in
// the same member order.
uint64_t signature(const topo::Hierarchy& h, int level) {
  uint64_t x = 1469598103934665603ull;
  auto mix = [&](uint64_t v) {
    for (int i = 0; i < 8; ++i) {
      x ^= (v >> (8 * i)) & 0xff;
      x *= 1099511628211ull;
    }
  };
  for (int r = 0; r < h.numRanks(); ++r) {
    const topo::StageGroup g = topo::stageGroup(h, level, r);
    mix(g.member ? 1 : 0);
    mix(static_cast<uint64_t>(g.color + 1));
    mix(static_cast<uint64_t>(g.index + 1));
  }
  for (char ch : h.level(level).fabric) mix(static_cast<unsigned char>(ch));
  return x;
}

}  // namespace

StatusOr<LevelGroup*> GroupTable::ensure(const topo::Hierarchy& h, int level, IssuingThread) {
  const uint64_t key = signature(h, level);
  auto it = groups_.find(key);
  if (it != groups_.end()) return it->second.get();
  // Making a group talks to other ranks: the queued calls run first. Without a progress thread
  // they run only when waited for, and ranks may wait at different points: one could enter
  // this collective while a peer waits in a queued call for it. Every rank makes the same
  // groups at the same point of its call sequence, so all drain here.
  STRATA_RETURN_IF_ERROR(sc_.quiesce());
  const topo::StageGroup g = topo::stageGroup(h, level, sc_.rank);
  auto lg = std::make_unique<LevelGroup>();
  lg->fabricName = h.level(level).fabric;
  STRATA_ASSIGN_OR_RETURN(lg->boot, (*sc_.boot).split(g.member ? g.color : -1, g.index));
  Status st = Status::ok();
  if (g.member) {
    lg->index = g.index;
    lg->size = g.size;
    StatusOr<std::unique_ptr<fabric::Fabric>> f =
        fabric::createFabric(lg->fabricName, *lg->boot, (*sc_.fabrics));
    if (f.isOk()) {
      lg->fabric = f.take();
    } else {
      st = f.status().withContext("level '" + h.level(level).name + "'");
    }
  }
  STRATA_RETURN_IF_ERROR(boot::agree((*sc_.boot), st));
  // The host path's fabric choice (the hierarchy's level, or a plan stage's `fabric:`), once per
  // group made: at init for the hierarchy's levels, on a plan's first use for its stages.
  if (g.member) {
    STRATA_INFO(kSubsysInit | kSubsysFabric,
                "commHash %s host fabric %s for level '%s': group of %d, this rank at %d",
                hashText(sc_.hash).c_str(), lg->fabricName.c_str(), h.level(level).name.c_str(),
                g.size, g.index);
  }
  LevelGroup* out = lg.get();
  groups_.emplace(key, std::move(lg));
  return out;
}

Status GroupTable::buildLevels(IssuingThread me) {
  const topo::Hierarchy& h = (*sc_.hierarchy);
  for (int l = 0; l < h.numLevels(); ++l) {
    STRATA_ASSIGN_OR_RETURN(LevelGroup * g, ensure(h, l, me));
    levels_.push_back(g);
  }
  auto flat = std::make_unique<LevelGroup>();
  flat->fabricName = (*sc_.fabrics).net;
  flat->index = sc_.rank;
  flat->size = sc_.size;
  STRATA_ASSIGN_OR_RETURN(flat->boot, (*sc_.boot).split(0, sc_.rank));
  StatusOr<std::unique_ptr<fabric::Fabric>> f =
      fabric::createFabric(flat->fabricName, *flat->boot, (*sc_.fabrics));
  STRATA_RETURN_IF_ERROR(boot::agree((*sc_.boot), f.status()));
  flat->fabric = f.take();
  STRATA_INFO(kSubsysInit | kSubsysFabric,
              "commHash %s host fabric %s for the whole communicator: %d ranks",
              hashText(sc_.hash).c_str(), flat->fabricName.c_str(), sc_.size);
  flat_ = std::move(flat);
  return Status::ok();
}

Status GroupTable::gatherHosts(IssuingThread) {
  hostOf_.clear();
  // Every rank has the same STRATA_COMPRESS (an agreed setting), so all take this branch alike.
  if (sc_.settings->compress == WireType::kNone) return Status::ok();
  STRATA_ASSIGN_OR_RETURN(std::vector<std::string> hosts,
                          boot::allGatherStrings((*sc_.boot), sc_.settings->hostName));
  std::map<std::string, int> ids;
  for (const std::string& host : hosts) {
    hostOf_.push_back(ids.emplace(host, static_cast<int>(ids.size())).first->second);
  }
  return Status::ok();
}

void GroupTable::abandon() { leave(&fabric::Fabric::abandon); }

void GroupTable::retire() { leave(&fabric::Fabric::retire); }

void GroupTable::leave(void (fabric::Fabric::*how)()) {
  auto leaveGroup = [how](LevelGroup& g) {
    if (g.deviceFabric) (g.deviceFabric.get()->*how)();
    if (g.fabric) (g.fabric.get()->*how)();
    if (g.boot) g.boot->abandon();  // a control plane only stops waiting
  };
  for (auto& [key, g] : groups_) leaveGroup(*g);
  if (flat_) leaveGroup(*flat_);
}

void GroupTable::release() {
  levels_.clear();
  auto release = [](LevelGroup& g) {
    g.deviceFabric.reset();
    g.fabric.reset();
    g.boot.reset();
  };
  for (auto& [key, g] : groups_) release(*g);
  if (flat_) release(*flat_);
  groups_.clear();
  flat_.reset();
}

}  // namespace strata::core
