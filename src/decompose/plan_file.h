// Plan files (STRATA_PLAN_FILE, written by STRATA_PLAN_DUMP_FILE and strata-tune): which plan
// an allreduce uses, by message size, as NCCL's graph files pin its rings and trees.
//
//   # strata plan file
//   rules:
//     - {min_bytes: 0, max_bytes: 64KiB, plan: passthrough}
//     - {min_bytes: 64KiB, max_bytes: 8MiB, plan: flat}
//     - min_bytes: 8MiB                  # no max_bytes (or max_bytes: inf): no upper bound
//       stages:
//         - reduce_scatter@node
//         - {stage: allreduce@network, fabric: mpi, algorithm: auto, chunk_bytes: 4MiB}
//         - all_gather@node
//   measured:                            # optional; strata-tune writes it
//     node: {bandwidth_GBps: 21.5, latency_us: 1.8}
//   layout: "node(4) x network(2), 8 ranks"   # optional; strata-tune and STRATA_PLAN_DUMP_FILE
//                                            # write it
//   reduce_scatter:                      # optional: pins the reduce-scatter's form by size
//     - {min_bytes: 0, max_bytes: 1MiB, form: hierarchical}
//     - {min_bytes: 1MiB, form: flat}
//   all_gather:                          # optional: the same for the all-gather
//     - {min_bytes: 0, form: hierarchical}
//
// The top level holds `rules` (required, a non-empty list), `measured` (optional), `layout`
// (optional text: the hierarchy the file was written for, planLayout(); it changes nothing but
// the messages, which compare it with the job's when the file does not fit, or fits another
// layout) and `reduce_scatter` and `all_gather` (optional, each a non-empty list of form rules).
// A form rule {min_bytes, max_bytes, form} pins the form (schedule.h: BlockForm) of that
// collective for calls of [min_bytes, max_bytes) bytes in all (every rank's block together,
// the size the planner's choice is made for): `flat` (one collective over the whole
// communicator) or `hierarchical` (level by level, innermost first; only on a regular hierarchy
// of several levels: elsewhere the file is refused). A collective's form rules tile [0, inf) as
// the allreduce rules do; a collective without them is left to the cost model (chooseBlocks).
// A rule
// covers message sizes [min_bytes, max_bytes) and holds exactly one of:
//   plan: passthrough  one MPI_Allreduce on the whole communicator;
//   plan: flat         one ring allreduce over every level at once;
//   stages: [...]      a staged plan (plan.h): zero or more reduce_scatter stages, exactly one
//                      allreduce, then an all_gather per reduce_scatter, in reverse order and
//                      over the same levels. Every level of the hierarchy is in exactly one of
//                      the reduce_scatter and allreduce stages.
// A stage is a string "op@level" or "op@levelA+levelB" (op: reduce_scatter, allreduce,
// all_gather; the levels in any order), or a map {stage: "op@...", fabric: NAME, algorithm:
// auto|ring, chunk_bytes: SIZE, wire: none|fp16|bf16} whose keys other than `stage` are
// optional. `algorithm: ring` is for the allreduce stage only. fabric, chunk_bytes and wire
// apply to the reduce-scatter and the all-gather of a level set alike: give them on either, or
// on both with the same value. `wire` overrides STRATA_COMPRESS for the stage (plan.h: Stage).
// Sizes (min_bytes, max_bytes, chunk_bytes) are read with the one size grammar of
// common/units.h (4096, 64K, "64 KiB", 4MiB, 1GB; docs/env.md). max_bytes may be `inf`. chunk_bytes
// must be in 4096..2^30, the range STRATA_CHUNK_BYTES is clamped to (leave it out for
// STRATA_CHUNK_BYTES). A `measured` entry maps a level name to {bandwidth_GBps, latency_us}, both
// positive numbers. Any other key anywhere, or a key given twice, is refused: a typo must not be
// silently ignored.
//
// Reading is two pure steps: parsePlanFile checks the syntax and shape, with levels and fabrics
// by name; resolvePlanFile checks them against a hierarchy and the fabrics of the build, checks
// each plan (checkPlan), and checks that the rules tile [0, inf) without gaps or overlaps.
// Neither reads a file nor logs: core/plan_load.h reads the file and logs a failure, as the
// planner's layer stays pure (docs/architecture.md).
// Errors are kInvalidArgument: "plan file <source>:<line>: <problem>"; a file that is not there
// or cannot be read is kSystemError ("plan file x.yaml: file not found").
#pragma once

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

#include "common/collective.h"
#include "common/status.h"
#include "common/units.h"
#include "decompose/plan.h"
#include "decompose/schedule.h"  // BlockForm
#include "topology/hierarchy.h"

namespace strata::plan {

// The chunk sizes a plan file may give, the range core/settings.cc clamps STRATA_CHUNK_BYTES to:
// below, a large call runs in millions of passes; above, MPI's int counts overflow.
constexpr size_t kMinChunkBytes = 4096;
constexpr size_t kMaxChunkBytes = size_t{1} << 30;

// One stage of a rule as written: its levels by name, before resolvePlanFile maps them to the
// hierarchy's level indices.
struct RawStage {
  std::vector<std::string> levels;  // level names in the order written
  bool allLevels = false;           // `plan: flat`: every level of the hierarchy
  std::string fabric;               // empty: the fabric of the stage's outermost level (plan.h)
  Algorithm algorithm = Algorithm::kAuto;
  size_t chunkBytes = 0;         // 0: STRATA_CHUNK_BYTES
  std::optional<WireType> wire;  // unset: STRATA_COMPRESS decides
  int line = 0;        // where the stage is written (its reduce_scatter or allreduce entry)
  int fabricLine = 0;  // where its fabric is given, when it is
};

struct PlanRule {
  size_t minBytes = 0;
  size_t maxBytes = SIZE_MAX;  // exclusive; SIZE_MAX: no upper bound
  // parsePlanFile sets its name ("passthrough", "flat-ring" for `plan: flat`, "file" for a
  // stages list) and passthrough; resolvePlanFile fills its stages.
  Plan plan;
  int line = 0;  // 1-based line of the rule in its file; 0 when not read from one
  std::vector<RawStage> rawStages;  // as parsed; empty for passthrough
};

// A pinned form of a reduce-scatter or all-gather for calls of [minBytes, maxBytes) bytes in all.
struct BlockRule {
  size_t minBytes = 0;
  size_t maxBytes = SIZE_MAX;  // exclusive; SIZE_MAX: no upper bound
  BlockForm form = BlockForm::kFlat;
  int line = 0;  // 1-based line of the rule in its file; 0 when not read from one
};

// The form rules of a plan file, per collective (`reduce_scatter:`, `all_gather:`). An empty
// list leaves that collective's form to the cost model.
struct BlockRules {
  std::vector<BlockRule> reduceScatter;
  std::vector<BlockRule> allGather;
  bool empty() const { return reduceScatter.empty() && allGather.empty(); }
  // The list of `coll` (kReduceScatter or kAllGather; any other: an empty list).
  const std::vector<BlockRule>& of(Collective coll) const;
};

// The plan-file key of `coll`'s form rules: "reduce_scatter" or "all_gather".
const char* blockRulesKey(Collective coll);

struct PlanFile {
  std::vector<PlanRule> rules;  // in file order
  BlockRules blocks;            // in file order; empty lists when the file pins no form
  int reduceScatterLine = 0;    // the line of the `reduce_scatter:` key, when given
  int allGatherLine = 0;        // ... of `all_gather:`
  // Level name -> link measured by strata-tune (source "measured", kind unknown).
  std::map<std::string, topo::LinkModel> measured;
  std::map<std::string, int> measuredLines;  // level name -> line of its entry
  std::string layout;                        // `layout:`, empty when the file has none
};

// The layout a plan file records and messages compare: "node(4) x network(2), 8 ranks".
std::string planLayout(const topo::Hierarchy& h);

// Parses YAML text: syntax and shape only (keys, sizes, ops, the order of the stages). `source`
// names the text in messages (a path, or "<string>").
StatusOr<PlanFile> parsePlanFile(const std::string& text, const std::string& source);

// Resolves level names against `h` and checks fabric names against `knownFabrics`, every plan
// against `h` (checkPlan), `measured` names against `h`, and that the rules, sorted by
// min_bytes, start at 0, leave no gap, do not overlap and have no upper bound at the end.
// Also checks the form rules: a hierarchical form only where `h` admits it
// (hierarchicalBlocksPossible), and each collective's rules tiling [0, inf) like the allreduce's.
// Returns the rules sorted by minBytes, with their plans' stages filled, and sets `*blocks` (when
// given) to the form rules, each list sorted by minBytes. Does not log (the caller, at the edge,
// does). A failure's message ends with the layout the file was written for (when it records
// one) and `h`'s, since a file made for another job is the usual cause.
StatusOr<std::vector<PlanRule>> resolvePlanFile(const PlanFile& file, const topo::Hierarchy& h,
                                                const std::vector<std::string>& knownFabrics,
                                                const std::string& source,
                                                BlockRules* blocks = nullptr);

// The plan-file text of resolved rules, which parsePlanFile and resolvePlanFile read back to the
// same rules: a comment header (the hierarchy), each rule's name and note as a comment, sizes
// with the largest exact binary suffix, a `measured` map when one is given, `layout`, and the
// form rules of `blocks` when it has any.
std::string formatPlanFile(const std::vector<PlanRule>& rules, const topo::Hierarchy& h,
                           const std::map<std::string, topo::LinkModel>& measured = {},
                           const BlockRules& blocks = {});

// A stable hash (FNV-1a, 64-bit) of what the rules do: formatPlanFile's text without comments
// or measured links, so equal rules hash equal however they were written. Ranks compare it at
// init. Form rules count (a file without them hashes as before they existed).
uint64_t planHash(const std::vector<PlanRule>& rules, const topo::Hierarchy& h,
                  const BlockRules& blocks = {});

// The index of the rule covering `bytes`, or -1.
int ruleIndexFor(const std::vector<PlanRule>& rules, size_t bytes);
// The index of the form rule of `rules` (one collective's) that covers `bytes`, or -1; and the
// rule itself, or nullptr.
int blockRuleIndexFor(const std::vector<BlockRule>& rules, size_t bytes);
const BlockRule* blockRuleFor(const std::vector<BlockRule>& rules, size_t bytes);
// The plan of the rule that covers `bytes` (a rule with maxBytes SIZE_MAX covers SIZE_MAX too),
// or nullptr when none does. The pointer lives as long as `rules`.
const Plan* planFor(const std::vector<PlanRule>& rules, size_t bytes);

namespace detail {
// The one size grammar (common/units.h) under the names plan-file code and the tools use:
// false for anything else, and for values of 2^63 or more (setting *tooLarge).
inline bool parseSize(const std::string& text, size_t* out, bool* tooLarge) {
  uint64_t value = 0;
  const units::Problem problem = units::parseBytes(text, &value);
  *tooLarge = problem == units::Problem::kTooLarge;
  if (problem != units::Problem::kNone) return false;
  *out = static_cast<size_t>(value);
  return true;
}
// A size as plan files write it: with the largest binary unit that divides it exactly
// ("64KiB", "3MiB", "1000"), or "inf" for SIZE_MAX.
inline std::string sizeText(size_t bytes) {
  return bytes == SIZE_MAX ? "inf" : units::bytesText(bytes);
}
}  // namespace detail

}  // namespace strata::plan
