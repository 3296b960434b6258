// The plan-file reader: YAML text -> PlanFile (names) -> resolved rules (level indices).
//
// Parsing checks everything that needs no hierarchy: keys, sizes, the order of the stages and
// that the all-gathers mirror the reduce-scatters. Resolving checks what does: level and fabric
// names, that every level is in a stage, checkPlan, and that the rules tile all sizes. A plan
// file read wrong would run a valid-looking but different decomposition, so the reader is
// strict: unknown keys, duplicate keys and malformed sizes are refused, not guessed at.
#include "decompose/plan_file.h"

#include <algorithm>
#include <cstdint>
#include <utility>

#include "common/units.h"
#include "common/yaml_util.h"

namespace strata::plan {
namespace {

using yaml::Entry;
using yaml::Errors;
using yaml::kindOf;

const std::vector<std::string> kTopKeys = {"rules", "measured", "layout", "reduce_scatter",
                                           "all_gather"};
const std::vector<std::string> kBlockRuleKeys = {"min_bytes", "max_bytes", "form"};
const std::vector<std::string> kRuleKeys = {"min_bytes", "max_bytes", "plan", "stages"};
const std::vector<std::string> kStageKeys = {"stage", "fabric", "algorithm", "chunk_bytes", "wire"};
const std::vector<std::string> kMeasuredKeys = {"bandwidth_GBps", "latency_us"};

enum class Op { kReduceScatter, kAllReduce, kAllGather };

// One entry of a `stages` list.
struct StageEntry {
  Op op = Op::kAllReduce;
  std::string text;                 // "reduce_scatter@node", as written
  std::vector<std::string> levels;  // in the order written
  std::string fabric;
  std::optional<Algorithm> algorithm;  // unset when not given
  size_t chunkBytes = 0;
  std::optional<WireType> wire;
  int line = 0;
  int fabricLine = 0;
  int wireLine = 0;
};

// Level names show up in stage strings; the alphabet of topology-file names keeps '@' and '+'
// unambiguous.
bool isValidName(const std::string& name) {
  if (name.empty()) return false;
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

// A size key of `what` (min_bytes, max_bytes, chunk_bytes); `allowInf` for max_bytes.
StatusOr<size_t> sizeOf(const Entry& entry, bool allowInf, const std::string& what,
                        const Errors& errors) {
  const std::string text = entry.value.IsScalar() ? entry.value.Scalar() : "";
  if (allowInf && text == "inf") return SIZE_MAX;
  bool tooLarge = false;
  size_t value = 0;
  if (entry.value.IsScalar() && detail::parseSize(text, &value, &tooLarge)) return value;
  const std::string found = entry.value.IsScalar() ? "'" + text + "'" : kindOf(entry.value);
  if (tooLarge) {
    return errors.at(entry.keyNode.Mark(), what + " " + entry.key + " " + found +
                                               " is too large; sizes must be below 2^63");
  }
  return errors.at(entry.keyNode.Mark(), what + " " + entry.key +
                                             " must be a size in bytes: " + units::kSizeForms +
                                             (allowInf ? ", or inf" : "") + "; found " + found);
}

// Splits "op@levelA+levelB" into `entry`.
Status parseStageText(const std::string& text, int line, const Errors& errors, StageEntry* entry) {
  const std::string malformed = "malformed stage '" + text +
                                "'; expected op@level or op@levelA+levelB, e.g. "
                                "reduce_scatter@node";
  size_t at = text.find('@');
  if (at == std::string::npos || at == 0 || text.find('@', at + 1) != std::string::npos) {
    return errors.atLine(line, malformed);
  }
  const std::string op = text.substr(0, at);
  if (op == "reduce_scatter") {
    entry->op = Op::kReduceScatter;
  } else if (op == "allreduce") {
    entry->op = Op::kAllReduce;
  } else if (op == "all_gather") {
    entry->op = Op::kAllGather;
  } else {
    return errors.atLine(line, "unknown op '" + op + "' in stage '" + text +
                                   "'; known ops: reduce_scatter, allreduce, all_gather");
  }
  size_t start = at + 1;
  while (true) {
    size_t plus = std::min(text.find('+', start), text.size());
    const std::string name = text.substr(start, plus - start);
    if (!isValidName(name)) return errors.atLine(line, malformed);
    if (std::find(entry->levels.begin(), entry->levels.end(), name) != entry->levels.end()) {
      return errors.atLine(line, "level '" + name + "' appears twice in stage '" + text + "'");
    }
    entry->levels.push_back(name);
    if (plus == text.size()) break;
    start = plus + 1;
  }
  entry->text = text;
  entry->line = line;
  return Status::ok();
}

StatusOr<StageEntry> parseStageEntry(const YAML::Node& node, const std::string& what,
                                     const Errors& errors) {
  StageEntry entry;
  const int line = yaml::lineOf(node);
  if (node.IsScalar()) {
    STRATA_RETURN_IF_ERROR(parseStageText(node.Scalar(), line, errors, &entry));
    return entry;
  }
  if (!node.IsMap()) {
    return errors.atNode(node, what +
                                   " must be a string such as reduce_scatter@node or a map "
                                   "such as {stage: allreduce@network, fabric: mpi}, found " +
                                   kindOf(node));
  }
  STRATA_ASSIGN_OR_RETURN(std::vector<Entry> entries,
                          yaml::entriesOf(node, kStageKeys, what, errors));
  const Entry* stage = yaml::find(entries, "stage");
  if (stage == nullptr) return errors.atNode(node, what + " has no 'stage'");
  if (!stage->value.IsScalar()) {
    return errors.at(
        stage->keyNode.Mark(),
        what + " stage must be a string such as allreduce@network, found " + kindOf(stage->value));
  }
  STRATA_RETURN_IF_ERROR(parseStageText(stage->value.Scalar(), line, errors, &entry));
  const std::string label = "stage " + entry.text;
  for (const Entry& e : entries) {
    const YAML::Mark& mark = e.keyNode.Mark();
    const std::string found = e.value.IsScalar() ? "'" + e.value.Scalar() + "'" : kindOf(e.value);
    if (e.key == "fabric") {
      if (!e.value.IsScalar() || !isValidName(e.value.Scalar())) {
        return errors.at(mark, label + " fabric must be a fabric name, found " + found);
      }
      entry.fabric = e.value.Scalar();
      entry.fabricLine = mark.line + 1;
    } else if (e.key == "algorithm") {
      Algorithm a = Algorithm::kAuto;
      if (!e.value.IsScalar() || !parseAlgorithm(e.value.Scalar(), &a)) {
        return errors.at(mark, label + " algorithm must be auto or ring, found " + found);
      }
      if (a == Algorithm::kRing && entry.op != Op::kAllReduce) {
        return errors.at(mark, label +
                                   " has algorithm ring, which is for the allreduce stage "
                                   "only; reduce-scatters and all-gathers use auto");
      }
      entry.algorithm = a;
    } else if (e.key == "wire") {
      WireType w = WireType::kNone;
      if (!e.value.IsScalar() || !parseWireType(e.value.Scalar(), &w)) {
        return errors.at(mark, label + " wire must be none, fp16 or bf16, found " + found);
      }
      entry.wire = w;
      entry.wireLine = mark.line + 1;
    } else if (e.key == "chunk_bytes") {
      STRATA_ASSIGN_OR_RETURN(entry.chunkBytes, sizeOf(e, false, label, errors));
      // The range STRATA_CHUNK_BYTES is clamped to: one-byte chunks turn a 4 MB allreduce into
      // millions of passes (minutes), and more than 2^30 overflows MPI's int counts.
      if (entry.chunkBytes < kMinChunkBytes || entry.chunkBytes > kMaxChunkBytes) {
        return errors.at(mark, label + " chunk_bytes " + std::to_string(entry.chunkBytes) +
                                   " is outside " + std::to_string(kMinChunkBytes) + ".." +
                                   std::to_string(kMaxChunkBytes) +
                                   " (the range of STRATA_CHUNK_BYTES); leave it out for "
                                   "STRATA_CHUNK_BYTES");
      }
    }
  }
  return entry;
}

bool sameLevels(const StageEntry& a, const StageEntry& b) {
  std::vector<std::string> x = a.levels, y = b.levels;
  std::sort(x.begin(), x.end());
  std::sort(y.begin(), y.end());
  return x == y;
}

// Checks that `entries` compose into an allreduce (reduce-scatters, one allreduce, mirroring
// all-gathers; no level twice) and folds each reduce-scatter/all-gather pair into one stage.
StatusOr<std::vector<RawStage>> composeStages(const std::vector<StageEntry>& entries, int ruleLine,
                                              const Errors& errors) {
  std::vector<const StageEntry*> scatters, gathers;
  const StageEntry* allreduce = nullptr;
  for (const StageEntry& e : entries) {
    if (e.op == Op::kReduceScatter && allreduce != nullptr) {
      return errors.atLine(e.line, e.text +
                                       " comes after the allreduce; reduce-scatters come "
                                       "before it");
    }
    if (e.op == Op::kAllGather && allreduce == nullptr) {
      return errors.atLine(e.line, e.text +
                                       " comes before the allreduce; all-gathers come "
                                       "after it");
    }
    if (e.op == Op::kAllReduce && allreduce != nullptr) {
      return errors.atLine(e.line, "a second allreduce (" + e.text + ", the first at line " +
                                       std::to_string(allreduce->line) +
                                       "); a plan has exactly one");
    }
    if (e.op == Op::kReduceScatter) scatters.push_back(&e);
    if (e.op == Op::kAllGather) gathers.push_back(&e);
    if (e.op == Op::kAllReduce) allreduce = &e;
  }
  if (allreduce == nullptr) {
    return errors.atLine(ruleLine, "allreduce missing; a plan has exactly one allreduce stage");
  }
  // Each level goes through one stage: a second reduction over it would double its values.
  std::vector<const StageEntry*> stages = scatters;
  stages.push_back(allreduce);
  std::map<std::string, const StageEntry*> seen;
  for (const StageEntry* s : stages) {
    for (const std::string& name : s->levels) {
      auto [it, inserted] = seen.emplace(name, s);
      if (!inserted) {
        return errors.atLine(s->line, "level '" + name + "' appears twice: in " + it->second->text +
                                          " (line " + std::to_string(it->second->line) +
                                          ") and in " + s->text);
      }
    }
  }
  // The all-gathers undo the reduce-scatters innermost last: gather i mirrors scatter k-1-i.
  const size_t k = scatters.size();
  for (size_t i = 0; i < gathers.size(); ++i) {
    const StageEntry& g = *gathers[i];
    if (i >= k) {
      return errors.atLine(g.line, g.text + " has no reduce_scatter to mirror");
    }
    const StageEntry& s = *scatters[k - 1 - i];
    if (!sameLevels(g, s)) {
      return errors.atLine(g.line, g.text + " does not mirror " + s.text + " (line " +
                                       std::to_string(s.line) +
                                       "); all-gathers undo the reduce-scatters in reverse "
                                       "order");
    }
    if (!g.fabric.empty() && !s.fabric.empty() && g.fabric != s.fabric) {
      return errors.atLine(g.fabricLine, g.text + " has fabric '" + g.fabric + "' but " + s.text +
                                             " has '" + s.fabric +
                                             "'; both halves of a stage run on one fabric");
    }
    if (g.chunkBytes != 0 && s.chunkBytes != 0 && g.chunkBytes != s.chunkBytes) {
      return errors.atLine(g.line, g.text + " has chunk_bytes " + std::to_string(g.chunkBytes) +
                                       " but " + s.text + " has " + std::to_string(s.chunkBytes) +
                                       "; both halves of a stage use one chunk size");
    }
    if (g.wire && s.wire && *g.wire != *s.wire) {
      return errors.atLine(g.wireLine, g.text + " has wire " + wireTypeName(*g.wire) + " but " +
                                           s.text + " has " + wireTypeName(*s.wire) +
                                           "; both halves of a stage travel in one type");
    }
  }
  if (gathers.size() < k) {
    const StageEntry& s = *scatters[k - 1 - gathers.size()];
    return errors.atLine(s.line, s.text + " has no all_gather mirroring it");
  }
  std::vector<RawStage> raw;
  for (size_t i = 0; i <= k; ++i) {
    const StageEntry& s = i < k ? *scatters[i] : *allreduce;
    const StageEntry* g = i < k ? gathers[k - 1 - i] : nullptr;
    RawStage stage;
    stage.levels = s.levels;
    stage.line = s.line;
    stage.fabric = s.fabric;
    stage.fabricLine = s.fabricLine;
    if (g != nullptr && stage.fabric.empty()) {
      stage.fabric = g->fabric;
      stage.fabricLine = g->fabricLine;
    }
    stage.chunkBytes = s.chunkBytes != 0 || g == nullptr ? s.chunkBytes : g->chunkBytes;
    if (s.algorithm) stage.algorithm = *s.algorithm;
    stage.wire = s.wire || g == nullptr ? s.wire : g->wire;
    raw.push_back(std::move(stage));
  }
  return raw;
}

// A rule's [min_bytes, max_bytes) (min_bytes required, max_bytes inf when left out).
Status parseRange(const YAML::Node& node, const std::vector<Entry>& entries,
                  const std::string& what, const Errors& errors, size_t* minBytes,
                  size_t* maxBytes) {
  const Entry* min = yaml::find(entries, "min_bytes");
  if (min == nullptr) return errors.atNode(node, what + " has no min_bytes");
  STRATA_ASSIGN_OR_RETURN(*minBytes, sizeOf(*min, false, what, errors));
  *maxBytes = SIZE_MAX;
  if (const Entry* max = yaml::find(entries, "max_bytes")) {
    STRATA_ASSIGN_OR_RETURN(*maxBytes, sizeOf(*max, true, what, errors));
    if (*minBytes >= *maxBytes) {
      return errors.at(max->keyNode.Mark(),
                       what + " covers nothing: min_bytes " + detail::sizeText(*minBytes) +
                           " is not below max_bytes " + detail::sizeText(*maxBytes));
    }
  }
  return Status::ok();
}

StatusOr<PlanRule> parseRule(const YAML::Node& node, int index, const std::string& source,
                             const Errors& errors) {
  const std::string what = "rule " + std::to_string(index + 1);
  if (!node.IsMap()) {
    return errors.atNode(node, what +
                                   " must be a map such as {min_bytes: 0, plan: passthrough}, "
                                   "found " +
                                   kindOf(node));
  }
  STRATA_ASSIGN_OR_RETURN(std::vector<Entry> entries,
                          yaml::entriesOf(node, kRuleKeys, what, errors));
  PlanRule rule;
  rule.line = yaml::lineOf(node);
  STRATA_RETURN_IF_ERROR(parseRange(node, entries, what, errors, &rule.minBytes, &rule.maxBytes));
  const Entry* plan = yaml::find(entries, "plan");
  const Entry* stages = yaml::find(entries, "stages");
  if ((plan == nullptr) == (stages == nullptr)) {
    return errors.atNode(node, what + (plan ? " has both 'plan' and 'stages'; give one"
                                            : " has neither 'plan' nor 'stages'; give one"));
  }
  rule.plan.note = "plan file " + source + ":" + std::to_string(rule.line);
  if (plan != nullptr) {
    const std::string name = plan->value.IsScalar() ? plan->value.Scalar() : "";
    if (name == "passthrough") {
      rule.plan.name = "passthrough";
      rule.plan.passthrough = true;
    } else if (name == "flat") {
      rule.plan.name = "flat-ring";
      RawStage all;
      all.allLevels = true;
      all.algorithm = Algorithm::kRing;
      all.line = rule.line;
      rule.rawStages.push_back(all);
    } else {
      const std::string found = plan->value.IsScalar() ? "'" + name + "'" : kindOf(plan->value);
      return errors.at(plan->keyNode.Mark(), what + " plan must be passthrough or flat, found " +
                                                 found + "; list other plans under 'stages'");
    }
    return rule;
  }
  if (!stages->value.IsSequence() || stages->value.size() == 0) {
    const std::string found = stages->value.IsSequence() ? "an empty list" : kindOf(stages->value);
    return errors.at(stages->keyNode.Mark(),
                     what +
                         " stages must be a list such as [reduce_scatter@node, "
                         "allreduce@network, all_gather@node], found " +
                         found);
  }
  std::vector<StageEntry> list;
  for (size_t s = 0; s < stages->value.size(); ++s) {
    const std::string stageWhat = what + " stage " + std::to_string(s + 1);
    STRATA_ASSIGN_OR_RETURN(StageEntry e, parseStageEntry(stages->value[s], stageWhat, errors));
    list.push_back(std::move(e));
  }
  rule.plan.name = "file";
  STRATA_ASSIGN_OR_RETURN(rule.rawStages,
                          composeStages(list, yaml::lineOf(stages->keyNode), errors));
  return rule;
}

// `reduce_scatter:` or `all_gather:` (`key`): a non-empty list of {min_bytes, max_bytes, form}.
Status parseBlockRules(const Entry& list, const Errors& errors, std::vector<BlockRule>* out) {
  const std::string& key = list.key;
  if (!list.value.IsSequence() || list.value.size() == 0) {
    const std::string found = list.value.IsSequence() ? "an empty list" : kindOf(list.value);
    return errors.at(list.keyNode.Mark(), "'" + key +
                                              "' must be a list of rules such as {min_bytes: 0, "
                                              "form: hierarchical}, found " +
                                              found);
  }
  for (size_t r = 0; r < list.value.size(); ++r) {
    const YAML::Node& node = list.value[r];
    const std::string what = key + " rule " + std::to_string(r + 1);
    if (!node.IsMap()) {
      return errors.atNode(
          node, what + " must be a map such as {min_bytes: 0, form: flat}, found " + kindOf(node));
    }
    STRATA_ASSIGN_OR_RETURN(std::vector<Entry> entries,
                            yaml::entriesOf(node, kBlockRuleKeys, what, errors));
    BlockRule rule;
    rule.line = yaml::lineOf(node);
    STRATA_RETURN_IF_ERROR(parseRange(node, entries, what, errors, &rule.minBytes, &rule.maxBytes));
    const Entry* form = yaml::find(entries, "form");
    if (form == nullptr) return errors.atNode(node, what + " has no form (flat or hierarchical)");
    const std::string name = form->value.IsScalar() ? form->value.Scalar() : "";
    if (name == "flat") {
      rule.form = BlockForm::kFlat;
    } else if (name == "hierarchical") {
      rule.form = BlockForm::kHierarchical;
    } else {
      const std::string found = form->value.IsScalar() ? "'" + name + "'" : kindOf(form->value);
      return errors.at(form->keyNode.Mark(),
                       what + " form must be flat or hierarchical, found " + found);
    }
    out->push_back(rule);
  }
  return Status::ok();
}

Status parseMeasured(const Entry& measured, const Errors& errors, PlanFile* file) {
  if (!measured.value.IsMap()) {
    return errors.at(measured.keyNode.Mark(),
                     "measured must be a map such as {node: {bandwidth_GBps: 20, latency_us: 2}}"
                     ", found " +
                         kindOf(measured.value));
  }
  for (auto it = measured.value.begin(); it != measured.value.end(); ++it) {
    // Copies: the iterator's pair is a temporary proxy.
    const YAML::Node key = it->first, body = it->second;
    if (!key.IsScalar() || !isValidName(key.Scalar())) {
      return errors.atNode(key, "measured has a key that is not a level name");
    }
    const std::string name = key.Scalar();
    if (file->measured.count(name) != 0) {
      return errors.at(key.Mark(), "measured has level '" + name + "' twice");
    }
    const std::string what = "measured level '" + name + "'";
    if (!body.IsMap()) {
      return errors.at(key.Mark(), what +
                                       " must be a map such as {bandwidth_GBps: 20, "
                                       "latency_us: 2}, found " +
                                       kindOf(body));
    }
    STRATA_ASSIGN_OR_RETURN(std::vector<Entry> entries,
                            yaml::entriesOf(body, kMeasuredKeys, what, errors));
    if (entries.empty()) {
      return errors.at(key.Mark(), what + " gives neither bandwidth_GBps nor latency_us");
    }
    topo::LinkModel link;
    link.source = "measured";
    for (const Entry& e : entries) {
      double value = 0;
      if (!yaml::parsePositiveNumber(e.value, 1e9, &value)) {
        const std::string found =
            e.value.IsScalar() ? "'" + e.value.Scalar() + "'" : kindOf(e.value);
        return errors.at(e.keyNode.Mark(),
                         what + " " + e.key + " must be a positive number, found " + found);
      }
      (e.key == "bandwidth_GBps" ? link.bandwidthGBps : link.latencyUs) = value;
    }
    file->measured[name] = link;
    file->measuredLines[name] = key.Mark().line + 1;
  }
  return Status::ok();
}

StatusOr<PlanFile> parseDocument(const YAML::Node& root, const std::string& source,
                                 const Errors& errors) {
  if (!root.IsMap()) {
    return errors.atNode(root,
                         "expected a map with a 'rules' list at the top, found " + kindOf(root));
  }
  STRATA_ASSIGN_OR_RETURN(std::vector<Entry> entries,
                          yaml::entriesOf(root, kTopKeys, "the top level", errors));
  const Entry* rules = yaml::find(entries, "rules");
  if (rules == nullptr) return errors.whole("missing 'rules'");
  if (!rules->value.IsSequence()) {
    return errors.at(rules->keyNode.Mark(),
                     "'rules' must be a list of rules, found " + kindOf(rules->value));
  }
  if (rules->value.size() == 0) {
    return errors.at(rules->keyNode.Mark(), "'rules' is empty; give at least one rule");
  }
  PlanFile file;
  for (size_t r = 0; r < rules->value.size(); ++r) {
    STRATA_ASSIGN_OR_RETURN(PlanRule rule,
                            parseRule(rules->value[r], static_cast<int>(r), source, errors));
    file.rules.push_back(std::move(rule));
  }
  if (const Entry* measured = yaml::find(entries, "measured")) {
    STRATA_RETURN_IF_ERROR(parseMeasured(*measured, errors, &file));
  }
  if (const Entry* layout = yaml::find(entries, "layout")) {
    if (!layout->value.IsScalar()) {
      return errors.at(layout->keyNode.Mark(),
                       "layout must be text such as \"node(4) x network(2), 8 ranks\", found " +
                           kindOf(layout->value));
    }
    file.layout = layout->value.Scalar();
  }
  if (const Entry* rs = yaml::find(entries, "reduce_scatter")) {
    STRATA_RETURN_IF_ERROR(parseBlockRules(*rs, errors, &file.blocks.reduceScatter));
    file.reduceScatterLine = rs->keyNode.Mark().line + 1;
  }
  if (const Entry* ag = yaml::find(entries, "all_gather")) {
    STRATA_RETURN_IF_ERROR(parseBlockRules(*ag, errors, &file.blocks.allGather));
    file.allGatherLine = ag->keyNode.Mark().line + 1;
  }
  return file;
}

}  // namespace

StatusOr<PlanFile> parsePlanFile(const std::string& text, const std::string& source) {
  Errors errors("plan file", source);
  STRATA_ASSIGN_OR_RETURN(YAML::Node root,
                          yaml::loadDocument(text, "a map with a 'rules' list", errors));
  // Node accessors throw on misuse; nothing below should misuse them, but nothing may escape.
  try {
    return parseDocument(root, source, errors);
  } catch (const YAML::Exception& e) {
    return internalError("plan file " + source + ": unexpected yaml error: " + e.msg);
  }
}

}  // namespace strata::plan
