// A rule's `stages` list, read (plan_file_stages.h): each stage's text or map, then the check
// that the stages compose into an allreduce, folded into one RawStage per level set.
#include "decompose/plan_file_stages.h"

#include <algorithm>
#include <cstdint>
#include <map>
#include <optional>
#include <utility>

#include "common/units.h"

namespace strata::plan {
namespace {

using detail::isValidName;
using detail::sizeOf;
using yaml::Entry;
using yaml::Errors;
using yaml::kindOf;

const std::vector<std::string> kStageKeys = {"stage", "fabric", "algorithm", "chunk_bytes", "wire"};

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

}  // namespace

namespace detail {

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

StatusOr<std::vector<RawStage>> parseStages(const Entry& stages, const std::string& what,
                                            const Errors& errors) {
  if (!stages.value.IsSequence() || stages.value.size() == 0) {
    const std::string found = stages.value.IsSequence() ? "an empty list" : kindOf(stages.value);
    return errors.at(stages.keyNode.Mark(),
                     what +
                         " stages must be a list such as [reduce_scatter@node, "
                         "allreduce@network, all_gather@node], found " +
                         found);
  }
  std::vector<StageEntry> list;
  for (size_t s = 0; s < stages.value.size(); ++s) {
    const std::string stageWhat = what + " stage " + std::to_string(s + 1);
    STRATA_ASSIGN_OR_RETURN(StageEntry e, parseStageEntry(stages.value[s], stageWhat, errors));
    list.push_back(std::move(e));
  }
  return composeStages(list, yaml::lineOf(stages.keyNode), errors);
}

}  // namespace detail

}  // namespace strata::plan
