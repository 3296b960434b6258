// The plan-file reader: YAML text -> PlanFile (names) -> resolved rules (level indices).
//
// Parsing checks everything that needs no hierarchy: keys, sizes, the order of the stages and
// that the all-gathers mirror the reduce-scatters. Resolving checks what does: level and fabric
// names, that every level is in a stage, checkPlan, and that the rules tile all sizes. A plan
// file read wrong would run a valid-looking but different decomposition, so the reader is
// strict: unknown keys, duplicate keys and malformed sizes are refused, not guessed at.
//
// This file parses the document (the top level, rules, form rules, measured links); a rule's
// stages list is read in plan_file_stages.cc, and resolving is in plan_file_rules.cc.
#include "decompose/plan_file.h"

#include <cstdint>
#include <utility>

#include "common/yaml_util.h"
#include "decompose/plan_file_stages.h"

namespace strata::plan {
namespace {

using detail::isValidName;
using detail::sizeOf;
using yaml::Entry;
using yaml::Errors;
using yaml::kindOf;

const std::vector<std::string> kTopKeys = {"rules", "measured", "layout", "reduce_scatter",
                                           "all_gather"};
const std::vector<std::string> kBlockRuleKeys = {"min_bytes", "max_bytes", "form"};
const std::vector<std::string> kRuleKeys = {"min_bytes", "max_bytes", "plan", "stages"};
const std::vector<std::string> kMeasuredKeys = {"bandwidth_GBps", "latency_us"};

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
  rule.plan.name = "file";
  STRATA_ASSIGN_OR_RETURN(rule.rawStages, detail::parseStages(*stages, what, errors));
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
