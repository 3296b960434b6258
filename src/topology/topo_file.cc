// The topology-file loader: YAML text -> TopoFile -> Hierarchy, and back to text.
//
// yaml-cpp only checks syntax; everything about meaning is checked here, strictly, because a
// topology file silently read wrong gives a communicator that runs and computes the wrong
// groups. Hence: duplicate keys (which yaml-cpp keeps without a word) and unknown keys (typos)
// are refused, and numbers must be written as numbers.
#include "topology/topo_file.h"

#include <yaml-cpp/yaml.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <cstdint>
#include <utility>

#include "common/log.h"
#include "common/yaml_util.h"

namespace strata::topo {
namespace {

constexpr int kMaxLevelSize = 1 << 20;
// Far above any real description; it keeps a wrong path (/dev/zero) from being read forever.
constexpr size_t kMaxFileBytes = 1 << 20;
constexpr const char* kDefaultFabric = "mpi";

// Keys a level may carry. link, bandwidth_GBps, latency_us and link_sharing describe the link the
// level's groups talk over, for the cost model; they are optional.
const std::vector<std::string> kLevelKeys = {"name",           "size",       "fabric",      "link",
                                             "bandwidth_GBps", "latency_us", "link_sharing"};

using yaml::entriesOf;
using yaml::Entry;
using yaml::Errors;
using yaml::find;
using yaml::isPlainScalar;
using yaml::joined;
using yaml::kindOf;
using yaml::parseInteger;

// Errors read "topology file <source>:<line>: <problem>".
Errors topoErrors(const std::string& source) { return Errors("topology file", source); }

// Names show up in describe() ("socket(2) x node(2)") and in plan files; a small alphabet keeps
// those unambiguous to read back.
bool isValidName(const std::string& name) {
  for (char c : name) {
    bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '_' || c == '-' || c == '.';
    if (!ok) return false;
  }
  return true;
}

// `level` is the level's own node: a missing key is reported at its line.
Status checkName(const Entry* entry, const YAML::Node& level, const std::string& what,
                 const Errors& errors) {
  if (entry == nullptr) return errors.atNode(level, what + " has no name");
  if (entry->value.IsNull() || (entry->value.IsScalar() && entry->value.Scalar().empty())) {
    return errors.at(entry->keyNode.Mark(), what + " has an empty name");
  }
  if (!entry->value.IsScalar()) {
    return errors.at(entry->keyNode.Mark(),
                     what + " name must be a string, found " + kindOf(entry->value));
  }
  if (!isValidName(entry->value.Scalar())) {
    return errors.at(entry->keyNode.Mark(),
                     what + " name '" + entry->value.Scalar() +
                         "' may hold only letters, digits, '_', '-' and '.'");
  }
  return Status::ok();
}

StatusOr<int> sizeOf(const Entry* entry, const YAML::Node& level, const std::string& what,
                     const Errors& errors) {
  if (entry == nullptr) return errors.atNode(level, what + " has no size");
  const YAML::Mark mark = entry->keyNode.Mark();
  int64_t size = 0;
  if (!isPlainScalar(entry->value) || !parseInteger(entry->value.Scalar(), &size)) {
    std::string found =
        entry->value.IsScalar() ? "'" + entry->value.Scalar() + "'" : kindOf(entry->value);
    return errors.at(mark, what + " size must be an integer, found " + found);
  }
  if (size <= 0) {
    return errors.at(mark,
                     what + " has size " + entry->value.Scalar() + "; sizes must be positive");
  }
  if (size > kMaxLevelSize) {
    return errors.at(mark, what + " has size " + entry->value.Scalar() + "; sizes above " +
                               std::to_string(kMaxLevelSize) + " are refused");
  }
  return static_cast<int>(size);
}

StatusOr<std::string> fabricOf(const Entry* entry, const YAML::Node& level,
                               const std::vector<std::string>& knownFabrics,
                               const std::string& what, const Errors& errors) {
  std::string fabric = kDefaultFabric;
  YAML::Mark mark = level.Mark();
  if (entry != nullptr) {
    mark = entry->keyNode.Mark();
    if (!entry->value.IsScalar() || entry->value.Scalar().empty()) {
      std::string found = entry->value.IsScalar() ? "an empty string" : kindOf(entry->value);
      return errors.at(mark, what + " fabric must be a fabric name, found " + found);
    }
    fabric = entry->value.Scalar();
  }
  for (const std::string& known : knownFabrics) {
    if (known == fabric) return fabric;
  }
  // The default is checked too: a build without MPI must not get it behind the user's back.
  return errors.at(mark, what + " has unknown fabric '" + fabric + "'" +
                             (entry == nullptr ? " (the default)" : "") +
                             "; known fabrics: " + joined(knownFabrics));
}

// The link keys of a level (see kLevelKeys), checked and stored in `level`. A level with any of
// them has source "file".
Status parseLink(const std::vector<Entry>& entries, const std::string& what, const Errors& errors,
                 Level* level) {
  for (const Entry& entry : entries) {
    if (entry.key == "link") {
      if (!entry.value.IsScalar() || !parseLinkKind(entry.value.Scalar(), &level->link.kind)) {
        const std::string found =
            entry.value.IsScalar() ? "'" + entry.value.Scalar() + "'" : kindOf(entry.value);
        return errors.at(entry.keyNode.Mark(),
                         what +
                             " link must be a link kind (nvlink, nvswitch, pcie, smp, "
                             "shm, infiniband, roce, ethernet, efa), found " +
                             found);
      }
      level->link.source = "file";
    } else if (entry.key == "bandwidth_GBps" || entry.key == "latency_us" ||
               entry.key == "link_sharing") {
      double value = 0;
      const bool positive = yaml::parsePositiveNumber(entry.value, 1e9, &value);
      if (!positive || (entry.key == "link_sharing" && value != std::floor(value))) {
        std::string found =
            entry.value.IsScalar() ? "'" + entry.value.Scalar() + "'" : kindOf(entry.value);
        return errors.at(entry.keyNode.Mark(),
                         what + " " + entry.key + " must be a positive " +
                             (entry.key == "link_sharing" ? "integer" : "number") + ", found " +
                             found);
      }
      if (entry.key == "bandwidth_GBps") level->link.bandwidthGBps = value;
      if (entry.key == "latency_us") level->link.latencyUs = value;
      if (entry.key == "link_sharing") level->linkSharing = static_cast<int>(value);
      level->link.source = "file";
    }
  }
  return Status::ok();
}

// Parses levels[index] and appends it to `file`, which holds the levels before it.
Status parseLevel(const YAML::Node& node, int index, const std::vector<std::string>& knownFabrics,
                  const Errors& errors, TopoFile* file) {
  // Numbered from 0, innermost first, as strataCommDescribe and the tools number levels.
  std::string what = "level " + std::to_string(index);
  if (!node.IsMap()) {
    return errors.atNode(
        node, what + " must be a map such as {name: node, size: 2}, found " + kindOf(node));
  }
  STRATA_ASSIGN_OR_RETURN(std::vector<Entry> entries, entriesOf(node, kLevelKeys, what, errors));
  const Entry* name = find(entries, "name");
  STRATA_RETURN_IF_ERROR(checkName(name, node, what, errors));
  for (const Level& earlier : file->levels) {
    if (earlier.name == name->value.Scalar()) {
      return errors.at(name->keyNode.Mark(), what + " is named '" + earlier.name +
                                                 "' like an earlier level; names must be unique");
    }
  }
  what = "level '" + name->value.Scalar() + "'";
  STRATA_ASSIGN_OR_RETURN(int size, sizeOf(find(entries, "size"), node, what, errors));
  STRATA_ASSIGN_OR_RETURN(std::string fabric,
                          fabricOf(find(entries, "fabric"), node, knownFabrics, what, errors));
  Level level{name->value.Scalar(), std::move(fabric), {}, 1};
  STRATA_RETURN_IF_ERROR(parseLink(entries, what, errors, &level));
  file->levels.push_back(std::move(level));
  file->sizes.push_back(size);
  return Status::ok();
}

// The optional top-level `gpu` and `cpu` keys: one word of `choices`, kept as written.
const std::vector<std::string> kGpuGenerations = {"volta", "ampere", "hopper", "blackwell"};
const std::vector<std::string> kCpuVendors = {"intel", "amd"};

Status parseChoice(const Entry* entry, const std::vector<std::string>& choices,
                   const Errors& errors, std::string* out) {
  if (entry == nullptr) return Status::ok();
  const std::string key = entry->keyNode.Scalar();
  if (!isPlainScalar(entry->value) ||
      std::find(choices.begin(), choices.end(), entry->value.Scalar()) == choices.end()) {
    return errors.at(
        entry->keyNode.Mark(),
        "'" + key + "' must be one of " + joined(choices) + ", found " +
            (entry->value.IsScalar() ? "'" + entry->value.Scalar() + "'" : kindOf(entry->value)));
  }
  *out = entry->value.Scalar();
  return Status::ok();
}

StatusOr<TopoFile> parseDocument(const YAML::Node& root,
                                 const std::vector<std::string>& knownFabrics,
                                 const Errors& errors) {
  if (!root.IsMap()) {
    return errors.atNode(root,
                         "expected a map with a 'levels' list at the top, found " + kindOf(root));
  }
  STRATA_ASSIGN_OR_RETURN(std::vector<Entry> entries,
                          entriesOf(root, {"levels", "gpu", "cpu"}, "the top level", errors));
  const Entry* levels = find(entries, "levels");
  if (levels == nullptr) return errors.whole("missing 'levels'");
  if (!levels->value.IsSequence()) {
    return errors.at(levels->keyNode.Mark(),
                     "'levels' must be a list of levels, found " + kindOf(levels->value));
  }
  if (levels->value.size() == 0) {
    return errors.at(levels->keyNode.Mark(), "'levels' is empty; give at least one level");
  }
  TopoFile file;
  STRATA_RETURN_IF_ERROR(parseChoice(find(entries, "gpu"), kGpuGenerations, errors, &file.gpu));
  STRATA_RETURN_IF_ERROR(parseChoice(find(entries, "cpu"), kCpuVendors, errors, &file.cpu));
  for (size_t l = 0; l < levels->value.size(); ++l) {
    STRATA_RETURN_IF_ERROR(
        parseLevel(levels->value[l], static_cast<int>(l), knownFabrics, errors, &file));
  }
  return file;
}

}  // namespace

StatusOr<TopoFile> parseTopoFile(const std::string& text, const std::string& source,
                                 const std::vector<std::string>& knownFabrics) {
  const Errors errors = topoErrors(source);
  STRATA_ASSIGN_OR_RETURN(YAML::Node root,
                          yaml::loadDocument(text, "a map with a 'levels' list", errors));
  // Node accessors throw on misuse; nothing below should misuse them, but nothing may escape.
  try {
    return parseDocument(root, knownFabrics, errors);
  } catch (const YAML::Exception& e) {
    return internalError("topology file " + source + ": unexpected yaml error: " + e.msg);
  }
}

StatusOr<TopoFile> loadTopoFile(const std::string& path,
                                const std::vector<std::string>& knownFabrics) {
  StatusOr<std::string> text = yaml::readTextFile(path, kMaxFileBytes, topoErrors(path));
  Status status = text.status();
  if (text.isOk()) {
    StatusOr<TopoFile> file = parseTopoFile(text.value(), path, knownFabrics);
    if (file.isOk()) return file;
    status = file.status();
  }
  STRATA_WARN(kSubsysTopo, "%s", status.message().c_str());
  return status.markLogged();
}

StatusOr<Hierarchy> hierarchyFromTopoFile(const TopoFile& file, const std::string& source,
                                          int nranks) {
  const Errors errors = topoErrors(source);
  Status status;
  // A TopoFile may be built by hand, so its shape is not taken on trust.
  if (file.levels.empty() || file.levels.size() != file.sizes.size()) {
    status =
        errors.whole("has " + std::to_string(file.levels.size()) + " levels and " +
                     std::to_string(file.sizes.size()) + " sizes; expected as many, at least one");
  } else {
    // Sizes are at most 2^20 and the product stops growing past INT_MAX, so int64 cannot
    // overflow.
    int64_t product = 1;
    for (size_t l = 0; l < file.sizes.size() && status.isOk(); ++l) {
      if (file.sizes[l] <= 0 || file.sizes[l] > kMaxLevelSize) {
        status = errors.whole("level '" + file.levels[l].name + "' has size " +
                              std::to_string(file.sizes[l]) + "; sizes must be in 1.." +
                              std::to_string(kMaxLevelSize));
      }
      product = std::min<int64_t>(product * file.sizes[l], int64_t{INT_MAX} + 1);
    }
    if (status.isOk() && product != nranks) {
      std::string multiply =
          product > INT_MAX ? "more than " + std::to_string(INT_MAX) : std::to_string(product);
      status = errors.whole("level sizes multiply to " + multiply + ", communicator has " +
                            std::to_string(nranks) + " ranks");
    }
  }
  if (status.isOk()) {
    StatusOr<Hierarchy> hierarchy = Hierarchy::regular(file.levels, file.sizes);
    if (hierarchy.isOk()) return hierarchy;
    status = hierarchy.status().withContext("topology file " + source);
  }
  STRATA_WARN(kSubsysTopo, "%s", status.message().c_str());
  return status.markLogged();
}

std::string formatTopoFile(const TopoFile& file) {
  int64_t ranks = 1;
  for (int size : file.sizes) ranks = std::min<int64_t>(ranks * std::max(size, 0), INT_MAX);
  YAML::Emitter out;
  out << YAML::Comment("strata topology file (STRATA_TOPO_FILE): levels innermost first; " +
                       std::to_string(ranks) + " ranks");
  out << YAML::BeginMap;
  if (!file.gpu.empty()) out << YAML::Key << "gpu" << YAML::Value << file.gpu;
  if (!file.cpu.empty()) out << YAML::Key << "cpu" << YAML::Value << file.cpu;
  out << YAML::Key << "levels" << YAML::Value << YAML::BeginSeq;
  for (size_t l = 0; l < file.levels.size(); ++l) {
    out << YAML::Flow << YAML::BeginMap;
    out << YAML::Key << "name" << YAML::Value << file.levels[l].name;
    if (l < file.sizes.size()) out << YAML::Key << "size" << YAML::Value << file.sizes[l];
    out << YAML::Key << "fabric" << YAML::Value << file.levels[l].fabric;
    const Level& lv = file.levels[l];
    if (lv.link.kind != LinkKind::kUnknown) {
      out << YAML::Key << "link" << YAML::Value << linkKindName(lv.link.kind);
    }
    if (lv.link.bandwidthGBps > 0) {
      out << YAML::Key << "bandwidth_GBps" << YAML::Value
          << yaml::numberText(lv.link.bandwidthGBps);
    }
    if (lv.link.latencyUs > 0) {
      out << YAML::Key << "latency_us" << YAML::Value << yaml::numberText(lv.link.latencyUs);
    }
    if (lv.linkSharing > 1) out << YAML::Key << "link_sharing" << YAML::Value << lv.linkSharing;
    out << YAML::EndMap;
  }
  out << YAML::EndSeq << YAML::EndMap << YAML::Newline;
  return out.c_str();
}

}  // namespace strata::topo
