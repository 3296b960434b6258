// A communicator's plans: the plan of each allreduce size (the plan file's rule or the planner's
// choice per size bucket), plans given by tools, the forms of broadcasts, reduces,
// reduce-scatters and all-gathers, and the schedules cut from them. Setup state
// (core/threads.h): everything that makes a plan takes an IssuingThread; running calls reach
// plans only through their programs (core/program.h), except a fusion pack cut at run time,
// which reads the fusion plans made for it beforehand (fusionPlanFor).
#pragma once

#include <cstddef>
#include <map>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "common/collective.h"
#include "common/status.h"
#include "common/wire.h"
#include "core/group_table.h"
#include "core/program.h"
#include "core/setup_context.h"
#include "core/threads.h"
#include "decompose/cost_model.h"
#include "decompose/plan.h"
#include "decompose/plan_file.h"
#include "decompose/rooted.h"
#include "decompose/schedule.h"
#include "topology/hierarchy.h"

namespace strata::core {

// A plan ready to run: its derived hierarchy (one level per stage), the group of each stage,
// and its schedules by count.
struct PlanExec {
  plan::Plan plan;
  topo::Hierarchy derived;          // unused for passthrough
  std::vector<LevelGroup*> groups;  // per derived level; owned by the GroupTable
  std::string description;          // describePlan()
  ScheduleCache schedules;          // this plan's allreduce steps by piece count
  // Per derived level: the type float32 sums travel in over that stage (core/wire_steps.h).
  // The same on every rank: from the plan and agreed settings and hosts only.
  std::vector<WireType> wire;
};

class PlanBook {
 public:
  explicit PlanBook(GroupTable& groups) : groups_(groups) {}
  // What the book reads of its communicator (core/setup_context.h). Before any other call.
  void bind(SetupContext sc) { sc_ = std::move(sc); }
  PlanBook(const PlanBook&) = delete;
  PlanBook& operator=(const PlanBook&) = delete;

  // Where plans come from: a plan file's resolved rules (empty: the planner), its form rules of
  // reduce-scatter and all-gather (an empty list: the planner's choice), and how the init log
  // names the source. Set at init, before any plan is made.
  void setRules(std::vector<plan::PlanRule> rules, std::string source,
                plan::BlockRules blocks = {});
  const std::vector<plan::PlanRule>& rules() const { return rules_; }
  const plan::BlockRules& blockRules() const { return blockRules_; }
  const std::string& source() const { return source_; }
  // STRATA_PLAN_DUMP_FILE: rank 0 writes the choice for every size bucket (merged into ranges)
  // in the plan-file format, so a choice can be pinned.
  void dump(const std::string& file) const;

  // --- Setup: collective on first use (a plan's stage groups), every rank in one order. ---
  // The plan for an allreduce of `bytes`: the plan file's rule, or the planner's choice for the
  // size bucket.
  StatusOr<PlanExec*> forBytes(size_t bytes, IssuingThread me);
  // A given plan, ready to run (tools and tests that compare plans).
  StatusOr<PlanExec*> forPlan(const plan::Plan& p, IssuingThread me);
  // Makes the plans of every size up to `maxBytes` once, for fusion packs cut on the runner
  // (core/fusion_queue.h), which may not set anything up. Later calls return at once.
  Status prepareFusionPlans(size_t maxBytes, IssuingThread me);
  // The form of a broadcast or reduce (rootedForm), or of a reduce-scatter or all-gather of
  // `bytes` in all (blockForm): the planner's choice for the size bucket, or for blockForm the
  // plan file's form rule that covers `bytes` when the file pins that collective's form.
  plan::RootedForm rootedForm(Collective coll, size_t bytes, IssuingThread);
  plan::BlockForm blockForm(Collective coll, size_t bytes, IssuingThread);
  // The steps of the collectives other than the allreduce (whose steps each PlanExec keeps).
  ScheduleCache& schedules(IssuingThread) { return schedules_; }
  // Whole programs by call shape (core/prepare.cc).
  ProgramCache& programs(IssuingThread) { return programs_; }

  // --- Any thread: read-only once prepareFusionPlans made them. ---
  // The plan for `bytes` (at most prepareFusionPlans's maxBytes); null beyond.
  PlanExec* fusionPlanFor(size_t bytes) const;

  // Frees every plan (before the groups they point to go).
  void clear();

 private:
  StatusOr<std::unique_ptr<PlanExec>> makeExec(const plan::Plan& chosen, IssuingThread me);
  // The wire type of each stage of a plan's derived hierarchy (PlanExec::wire).
  std::vector<WireType> wireOf(const plan::Plan& p, const topo::Hierarchy& derived) const;
  // The key of plans_ for an allreduce of `bytes`: its size bucket, or its plan-file rule.
  int slotOf(size_t bytes) const;

  SetupContext sc_;
  GroupTable& groups_;
  std::vector<plan::PlanRule> rules_;  // empty: no plan file
  plan::BlockRules blockRules_;        // per collective; an empty list: the planner chooses
  std::string source_ = "planner (cost model)";
  std::map<int, std::unique_ptr<PlanExec>> plans_;  // by bucket or rule index
  std::vector<PlanExec*> fusionPlans_;  // by bucket or rule index, up to the fusion limit
  std::map<std::string, std::unique_ptr<PlanExec>> forced_;      // by description
  std::map<std::pair<int, int>, plan::RootedForm> rootedForms_;  // by (collective, bucket)
  // By (collective, bucket), or (collective, -1 - rule index) for a form the plan file pins.
  std::map<std::pair<int, int>, plan::BlockForm> blockForms_;
  ScheduleCache schedules_;
  ProgramCache programs_;
};

}  // namespace strata::core
