// Plan-file rules against a hierarchy: resolving level names, checking that the rules tile every
// message size, writing rules back as a plan file, hashing them, and looking one up by size.
#include <algorithm>
#include <utility>

#include "common/yaml_util.h"
#include "decompose/plan_file.h"
#include "decompose/schedule.h"

namespace strata::plan {
namespace {

std::string levelNames(const topo::Hierarchy& h) {
  std::vector<std::string> names;
  for (const topo::Level& level : h.levels()) names.push_back(level.name);
  return yaml::joined(names);
}

// "reduce_scatter@socket+node" as parsePlanFile reads it. Written here rather than with
// stageName so that the file format stays fixed whatever describe output becomes.
std::string stageText(const topo::Hierarchy& h, const char* op, const Stage& stage) {
  std::string text = std::string(op) + "@";
  for (size_t i = 0; i < stage.levels.size(); ++i) {
    text += (i ? "+" : "") + h.level(stage.levels[i]).name;
  }
  return text;
}

// The level set of a stage as written ("socket+node"), or "every level" for `plan: flat`.
std::string rawLevels(const RawStage& stage) {
  if (stage.allLevels) return "every level";
  std::string text;
  for (const std::string& name : stage.levels) text += (text.empty() ? "" : "+") + name;
  return text;
}

// Maps one rule's stages to level indices and checks them against `h`.
Status resolveRule(const topo::Hierarchy& h, const std::vector<std::string>& knownFabrics,
                   const yaml::Errors& errors, PlanRule* rule) {
  rule->plan.stages.clear();
  if (rule->plan.passthrough) return Status::ok();
  if (rule->rawStages.empty()) return errors.atLine(rule->line, "rule has no stages");
  std::vector<int> stageOf(h.numLevels(), -1);
  for (const RawStage& raw : rule->rawStages) {
    // The last stage is the allreduce; the others are reduce-scattered and gathered.
    const bool last = &raw == &rule->rawStages.back();
    Stage stage;
    stage.fabric = raw.fabric;
    stage.algorithm = raw.algorithm;
    stage.chunkBytes = raw.chunkBytes;
    stage.wire = raw.wire;
    // parsePlanFile refuses this already; a PlanFile built by hand is not taken on trust.
    if (stage.chunkBytes != 0 &&
        (stage.chunkBytes < kMinChunkBytes || stage.chunkBytes > kMaxChunkBytes)) {
      return errors.atLine(raw.line, "chunk_bytes " + std::to_string(stage.chunkBytes) +
                                         " is outside " + std::to_string(kMinChunkBytes) + ".." +
                                         std::to_string(kMaxChunkBytes) +
                                         " (the range of STRATA_CHUNK_BYTES)");
    }
    if (raw.allLevels) {
      for (int l = 0; l < h.numLevels(); ++l) stage.levels.push_back(l);
    }
    for (const std::string& name : raw.levels) {
      int index = -1;
      for (int l = 0; l < h.numLevels(); ++l) {
        if (h.level(l).name == name) index = l;
      }
      if (index < 0) {
        return errors.atLine(raw.line, "unknown level '" + name + "' in " +
                                           (last ? "allreduce@" : "reduce_scatter@") +
                                           rawLevels(raw) + "; levels: " + levelNames(h));
      }
      stage.levels.push_back(index);
    }
    for (int l : stage.levels) {
      // parsePlanFile refuses this already; a PlanFile built by hand is not taken on trust.
      if (stageOf[l] >= 0) {
        return errors.atLine(raw.line, "level '" + h.level(l).name + "' appears twice");
      }
      stageOf[l] = static_cast<int>(rule->plan.stages.size());
    }
    if (!stage.fabric.empty() &&
        std::find(knownFabrics.begin(), knownFabrics.end(), stage.fabric) == knownFabrics.end()) {
      return errors.atLine(raw.fabricLine > 0 ? raw.fabricLine : raw.line,
                           "unknown fabric '" + stage.fabric + "' on the " + rawLevels(raw) +
                               " stage; known fabrics: " + yaml::joined(knownFabrics));
    }
    std::sort(stage.levels.begin(), stage.levels.end());
    rule->plan.stages.push_back(std::move(stage));
  }
  for (int l = 0; l < h.numLevels(); ++l) {
    if (stageOf[l] < 0) {
      return errors.atLine(
          rule->line, "level '" + h.level(l).name + "' is in no stage; every level must be in one");
    }
  }
  Status status = checkPlan(h, rule->plan);
  if (!status.isOk()) return errors.atLine(rule->line, status.message());
  return Status::ok();
}

// Checks that `rules` (PlanRule or BlockRule), sorted by minBytes, tile [0, inf) exactly.
// `kind` names them in messages: "" for the allreduce rules, "reduce_scatter " for form rules.
template <typename Rule>
Status checkRanges(const std::vector<Rule>& rules, const std::string& kind,
                   const yaml::Errors& errors) {
  if (rules.empty()) return errors.whole("has no " + kind + "rules");
  using detail::sizeText;
  if (rules.front().minBytes != 0) {
    return errors.atLine(rules.front().line, "no " + kind + "rule covers [0, " +
                                                 sizeText(rules.front().minBytes) + "); the " +
                                                 kind + "rules must start at min_bytes: 0");
  }
  for (size_t i = 1; i < rules.size(); ++i) {
    const Rule &a = rules[i - 1], &b = rules[i];
    const std::string lines =
        kind + "rules at lines " + std::to_string(a.line) + " and " + std::to_string(b.line);
    if (b.minBytes < a.maxBytes) {
      return errors.atLine(b.line, lines + " overlap on [" + sizeText(b.minBytes) + ", " +
                                       sizeText(std::min(a.maxBytes, b.maxBytes)) + ")");
    }
    if (b.minBytes > a.maxBytes) {
      return errors.atLine(b.line, lines + " leave a gap: no " + kind + "rule covers [" +
                                       sizeText(a.maxBytes) + ", " + sizeText(b.minBytes) + ")");
    }
  }
  if (rules.back().maxBytes != SIZE_MAX) {
    return errors.atLine(rules.back().line, "no " + kind + "rule covers [" +
                                                sizeText(rules.back().maxBytes) +
                                                ", inf); the last " + kind +
                                                "rule must have no max_bytes (or max_bytes: inf)");
  }
  return Status::ok();
}

// A hierarchical form pinned where `h` cannot run it (schedule.h: hierarchicalBlocksPossible).
Status checkForms(const std::vector<BlockRule>& rules, Collective coll, const topo::Hierarchy& h,
                  const yaml::Errors& errors) {
  if (hierarchicalBlocksPossible(h)) return Status::ok();
  for (const BlockRule& rule : rules) {
    if (rule.form != BlockForm::kHierarchical) continue;
    const std::string why = h.numLevels() < 2 ? "it has one level" : "its layout is irregular";
    return errors.atLine(rule.line, std::string(blockRulesKey(coll)) +
                                        " rule pins form hierarchical, which this hierarchy "
                                        "cannot run (" +
                                        why +
                                        "; the hierarchical form needs a regular layout of "
                                        "several levels); pin flat or leave the form to the "
                                        "cost model");
  }
  return Status::ok();
}

// The form rules of `file` sorted and checked against `h`; `*againstHierarchy` says whether a
// failure is about `h` (a form it cannot run) rather than the ranges.
Status resolveBlocks(const PlanFile& file, const topo::Hierarchy& h, const yaml::Errors& errors,
                     BlockRules* out, bool* againstHierarchy) {
  *out = file.blocks;
  for (Collective coll : {Collective::kReduceScatter, Collective::kAllGather}) {
    std::vector<BlockRule>& rules =
        coll == Collective::kReduceScatter ? out->reduceScatter : out->allGather;
    if (rules.empty()) continue;
    Status status = checkForms(rules, coll, h, errors);
    if (!status.isOk()) {
      *againstHierarchy = true;
      return status;
    }
    std::stable_sort(rules.begin(), rules.end(), [](const BlockRule& a, const BlockRule& b) {
      return a.minBytes < b.minBytes;
    });
    STRATA_RETURN_IF_ERROR(checkRanges(rules, std::string(blockRulesKey(coll)) + " ", errors));
  }
  return Status::ok();
}

std::string oneLine(std::string text) {
  std::replace(text.begin(), text.end(), '\n', ' ');
  return text;
}

// A stage entry of a stages list: a plain string unless it sets something.
std::string stageEntry(const topo::Hierarchy& h, const char* op, const Stage& stage,
                       bool isAllReduce) {
  std::string keys;
  if (!stage.fabric.empty()) keys += ", fabric: " + stage.fabric;
  if (isAllReduce && stage.algorithm != Algorithm::kAuto) {
    keys += std::string(", algorithm: ") + algorithmName(stage.algorithm);
  }
  if (stage.chunkBytes != 0) keys += ", chunk_bytes: " + detail::sizeText(stage.chunkBytes);
  if (stage.wire) keys += std::string(", wire: ") + wireTypeName(*stage.wire);
  const std::string text = stageText(h, op, stage);
  return keys.empty() ? text : "{stage: " + text + keys + "}";
}

// `reduce_scatter:` and `all_gather:` with their form rules (nothing for an empty list).
std::string formatBlocks(const BlockRules& blocks) {
  std::string out;
  for (Collective coll : {Collective::kReduceScatter, Collective::kAllGather}) {
    const std::vector<BlockRule>& rules = blocks.of(coll);
    if (rules.empty()) continue;
    out += std::string(blockRulesKey(coll)) + ":\n";
    for (const BlockRule& rule : rules) {
      out += "  - {min_bytes: " + detail::sizeText(rule.minBytes) +
             ", max_bytes: " + detail::sizeText(rule.maxBytes) +
             ", form: " + blockFormName(rule.form) + "}\n";
    }
  }
  return out;
}

std::string formatRules(const std::vector<PlanRule>& rules, const topo::Hierarchy& h,
                        const std::map<std::string, topo::LinkModel>& measured, bool comments,
                        const BlockRules& blocks) {
  std::string out;
  if (comments) {
    out += "# strata plan file (STRATA_PLAN_FILE) for " + h.describe() + "\n";
    out += "# each rule covers message sizes [min_bytes, max_bytes); K/M/G suffixes are binary\n";
  }
  out += "rules:\n";
  for (const PlanRule& rule : rules) {
    if (comments) {
      out += "  # " + oneLine(rule.plan.name);
      out += rule.plan.note.empty() ? "\n" : ": " + oneLine(rule.plan.note) + "\n";
    }
    const std::string min = detail::sizeText(rule.minBytes);
    const std::string max = detail::sizeText(rule.maxBytes);
    if (rule.plan.passthrough) {
      out += "  - {min_bytes: " + min + ", max_bytes: " + max + ", plan: passthrough}\n";
      continue;
    }
    out += "  - min_bytes: " + min + "\n    max_bytes: " + max + "\n    stages:\n";
    // Stage s is reduce-scattered before the allreduce (the last stage) and gathered after it,
    // in reverse order.
    const std::vector<Stage>& stages = rule.plan.stages;
    const size_t k = stages.empty() ? 0 : stages.size() - 1;
    for (size_t s = 0; s < k; ++s) {
      out += "      - " + stageEntry(h, "reduce_scatter", stages[s], false) + "\n";
    }
    if (!stages.empty()) out += "      - " + stageEntry(h, "allreduce", stages[k], true) + "\n";
    for (size_t s = k; s-- > 0;) {
      out += "      - " + stageEntry(h, "all_gather", stages[s], false) + "\n";
    }
  }
  // The layout is for messages only, so the hash (comments off) leaves it out.
  if (comments) out += "layout: \"" + planLayout(h) + "\"  # the hierarchy it was written for\n";
  if (comments && !blocks.empty()) {
    out += "# the forms of reduce-scatter and all-gather by size (bytes of every rank's block)\n";
  }
  out += formatBlocks(blocks);
  if (measured.empty()) return out;
  out += comments ? "measured:  # links measured by strata-tune\n" : "measured:\n";
  // Hierarchy order first, so the file reads innermost first; any other names after.
  std::vector<std::string> names;
  for (const topo::Level& level : h.levels()) {
    if (measured.count(level.name)) names.push_back(level.name);
  }
  for (const auto& [name, link] : measured) {
    if (std::find(names.begin(), names.end(), name) == names.end()) names.push_back(name);
  }
  for (const std::string& name : names) {
    const topo::LinkModel& link = measured.at(name);
    std::string keys;
    if (link.bandwidthGBps > 0) keys += "bandwidth_GBps: " + yaml::numberText(link.bandwidthGBps);
    if (link.latencyUs > 0) {
      keys += (keys.empty() ? "" : ", ") + std::string("latency_us: ") +
              yaml::numberText(link.latencyUs);
    }
    if (!keys.empty()) out += "  " + name + ": {" + keys + "}\n";
  }
  return out;
}

}  // namespace

StatusOr<std::vector<PlanRule>> resolvePlanFile(const PlanFile& file, const topo::Hierarchy& h,
                                                const std::vector<std::string>& knownFabrics,
                                                const std::string& source, BlockRules* blocks) {
  yaml::Errors errors("plan file", source);
  std::vector<PlanRule> rules = file.rules;
  BlockRules forms;
  Status status;
  for (PlanRule& rule : rules) {
    status = resolveRule(h, knownFabrics, errors, &rule);
    if (!status.isOk()) break;
  }
  for (auto it = file.measured.begin(); status.isOk() && it != file.measured.end(); ++it) {
    bool known = false;
    for (const topo::Level& level : h.levels()) known = known || level.name == it->first;
    if (!known) {
      auto line = file.measuredLines.find(it->first);
      status = errors.atLine(
          line == file.measuredLines.end() ? 0 : line->second,
          "measured link for unknown level '" + it->first + "'; levels: " + levelNames(h));
    }
  }
  // Failures so far are the rules against `h` (levels, plans); the ranges below are not.
  bool againstHierarchy = !status.isOk();
  if (status.isOk()) {
    // Stable, so that rules with equal min_bytes keep file order and the overlap message names
    // them in the order written.
    std::stable_sort(rules.begin(), rules.end(),
                     [](const PlanRule& a, const PlanRule& b) { return a.minBytes < b.minBytes; });
    status = checkRanges(rules, "", errors);
  }
  if (status.isOk()) status = resolveBlocks(file, h, errors, &forms, &againstHierarchy);
  if (status.isOk()) {
    if (blocks != nullptr) *blocks = std::move(forms);
    return rules;
  }
  if (againstHierarchy) {
    // A file tuned on another job is the usual reason it does not fit: name both layouts.
    const std::string mine = planLayout(h);
    status = Status(
        status.code(),
        status.message() +
            (file.layout.empty()
                 ? "; this job's layout is " + mine + " (the file records none: no `layout:`)"
                 : "; the file was written for " + file.layout + ", this job's layout is " + mine));
  }
  return status;
}

std::string planLayout(const topo::Hierarchy& h) {
  return h.describe() + ", " + std::to_string(h.numRanks()) + " ranks";
}

std::string formatPlanFile(const std::vector<PlanRule>& rules, const topo::Hierarchy& h,
                           const std::map<std::string, topo::LinkModel>& measured,
                           const BlockRules& blocks) {
  return formatRules(rules, h, measured, true, blocks);
}

uint64_t planHash(const std::vector<PlanRule>& rules, const topo::Hierarchy& h,
                  const BlockRules& blocks) {
  // FNV-1a: simple, stable across builds and platforms, and enough to tell plans apart.
  uint64_t hash = 0xcbf29ce484222325ull;
  for (unsigned char c : formatRules(rules, h, {}, false, blocks)) {
    hash = (hash ^ c) * 0x100000001b3ull;
  }
  return hash;
}

int ruleIndexFor(const std::vector<PlanRule>& rules, size_t bytes) {
  for (size_t i = 0; i < rules.size(); ++i) {
    const PlanRule& rule = rules[i];
    if (bytes >= rule.minBytes && (bytes < rule.maxBytes || rule.maxBytes == SIZE_MAX)) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

const std::vector<BlockRule>& BlockRules::of(Collective coll) const {
  static const std::vector<BlockRule> kNone;
  if (coll == Collective::kReduceScatter) return reduceScatter;
  return coll == Collective::kAllGather ? allGather : kNone;
}

const char* blockRulesKey(Collective coll) {
  return coll == Collective::kReduceScatter ? "reduce_scatter" : "all_gather";
}

int blockRuleIndexFor(const std::vector<BlockRule>& rules, size_t bytes) {
  for (size_t i = 0; i < rules.size(); ++i) {
    const BlockRule& rule = rules[i];
    if (bytes >= rule.minBytes && (bytes < rule.maxBytes || rule.maxBytes == SIZE_MAX)) {
      return static_cast<int>(i);
    }
  }
  return -1;
}

const BlockRule* blockRuleFor(const std::vector<BlockRule>& rules, size_t bytes) {
  const int i = blockRuleIndexFor(rules, bytes);
  return i < 0 ? nullptr : &rules[i];
}

const Plan* planFor(const std::vector<PlanRule>& rules, size_t bytes) {
  const int i = ruleIndexFor(rules, bytes);
  return i < 0 ? nullptr : &rules[i].plan;
}

}  // namespace strata::plan
