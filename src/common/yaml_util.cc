// Strict YAML helpers shared by the configuration-file loaders.
#include "common/yaml_util.h"

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

namespace strata::yaml {

std::string kindOf(const YAML::Node& node) {
  switch (node.Type()) {
    case YAML::NodeType::Scalar:
      return "a scalar";
    case YAML::NodeType::Sequence:
      return "a sequence";
    case YAML::NodeType::Map:
      return "a map";
    default:
      return "nothing";
  }
}

std::string joined(const std::vector<std::string>& items) {
  std::string out;
  for (const std::string& item : items) out += (out.empty() ? "" : ", ") + item;
  return out.empty() ? "(none)" : out;
}

Status Errors::at(const YAML::Mark& mark, const std::string& problem) const {
  return atLine(mark.line >= 0 ? mark.line + 1 : 0, problem);
}

Status Errors::atLine(int line, const std::string& problem) const {
  std::string where = line > 0 ? ":" + std::to_string(line) : "";
  return invalidArgument(kind_ + " " + source_ + where + ": " + problem);
}

Status Errors::atNode(const YAML::Node& node, const std::string& problem) const {
  return atLine(lineOf(node), problem);
}

int lineOf(const YAML::Node& node) {
  if (!node.IsDefined() || node.IsNull()) return 0;
  int line = node.Mark().line;
  return line >= 0 ? line + 1 : 0;
}

StatusOr<std::vector<Entry>> entriesOf(const YAML::Node& map,
                                       const std::vector<std::string>& allowed,
                                       const std::string& what, const Errors& errors) {
  std::vector<Entry> entries;
  for (auto it = map.begin(); it != map.end(); ++it) {
    if (!it->first.IsScalar()) {
      return errors.atNode(
          it->first, what + " has a key that is " + kindOf(it->first) + "; keys must be names");
    }
    const std::string key = it->first.Scalar();
    if (find(entries, key) != nullptr) {
      return errors.at(it->first.Mark(), what + " has key '" + key + "' twice");
    }
    bool known = false;
    for (const std::string& name : allowed) known = known || name == key;
    if (!known) {
      return errors.at(it->first.Mark(),
                       what + " has unknown key '" + key + "'; known keys: " + joined(allowed));
    }
    entries.push_back({key, it->first, it->second});
  }
  return entries;
}

const Entry* find(const std::vector<Entry>& entries, const std::string& key) {
  for (const Entry& entry : entries) {
    if (entry.key == key) return &entry;
  }
  return nullptr;
}

bool isPlainScalar(const YAML::Node& node) { return node.IsScalar() && node.Tag() != "!"; }

bool parseInteger(const std::string& text, int64_t* out) {
  size_t i = (!text.empty() && (text[0] == '-' || text[0] == '+')) ? 1 : 0;
  if (i == text.size()) return false;
  int64_t value = 0;
  for (; i < text.size(); ++i) {
    if (text[i] < '0' || text[i] > '9') return false;
    value = value > INT64_MAX / 10 - 9 ? INT64_MAX : value * 10 + (text[i] - '0');
  }
  *out = text[0] == '-' ? -value : value;
  return true;
}

bool parsePositiveNumber(const YAML::Node& node, double max, double* out) {
  if (!isPlainScalar(node) || node.Scalar().empty()) return false;
  const std::string& text = node.Scalar();
  char* end = nullptr;
  double value = std::strtod(text.c_str(), &end);
  if (*end != '\0' || !std::isfinite(value) || value <= 0 || value > max) return false;
  *out = value;
  return true;
}

StatusOr<YAML::Node> loadDocument(const std::string& text, const std::string& expected,
                                  const Errors& errors) {
  std::vector<YAML::Node> documents;
  try {
    documents = YAML::LoadAll(text);
  } catch (const YAML::ParserException& e) {
    return errors.at(e.mark, "yaml syntax error: " + e.msg);
  } catch (const YAML::Exception& e) {
    return errors.at(e.mark, "yaml error: " + e.msg);
  }
  if (documents.empty()) return errors.whole("file is empty; expected " + expected);
  if (documents.size() > 1) {
    return errors.atNode(documents[1], "holds " + std::to_string(documents.size()) +
                                           " yaml documents; expected one");
  }
  return documents[0];
}

StatusOr<std::string> readTextFile(const std::string& path, size_t maxBytes, const Errors& errors) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (f == nullptr) return errors.whole(std::string("cannot open: ") + std::strerror(errno));
  std::string text;
  char buffer[4096];
  size_t n = 0;
  while (text.size() <= maxBytes && (n = std::fread(buffer, 1, sizeof(buffer), f)) > 0) {
    text.append(buffer, n);
  }
  // A directory opens fine on Linux and fails here, with EISDIR.
  int readErrno = std::ferror(f) ? errno : 0;
  std::fclose(f);
  if (readErrno != 0) return errors.whole(std::string("cannot read: ") + std::strerror(readErrno));
  if (text.size() > maxBytes) {
    return errors.whole("file is larger than " + std::to_string(maxBytes) + " bytes");
  }
  return text;
}

}  // namespace strata::yaml
