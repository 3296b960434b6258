// Strict YAML helpers shared by the configuration-file loaders.
#include "common/yaml_util.h"

#include <yaml-cpp/eventhandler.h>

#include <cerrno>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <sstream>
#include <utility>

#include "common/text_file.h"

namespace strata::yaml {
namespace {

// Records where each document starts and nothing else: enough to count documents without
// building nodes.
class DocumentMarks : public YAML::EventHandler {
 public:
  void OnDocumentStart(const YAML::Mark& mark) override { starts.push_back(mark); }
  void OnDocumentEnd() override {}
  void OnNull(const YAML::Mark&, YAML::anchor_t) override {}
  void OnAlias(const YAML::Mark&, YAML::anchor_t) override {}
  void OnScalar(const YAML::Mark&, const std::string&, YAML::anchor_t,
                const std::string&) override {}
  void OnSequenceStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                       YAML::EmitterStyle::value) override {}
  void OnSequenceEnd() override {}
  void OnMapStart(const YAML::Mark&, const std::string&, YAML::anchor_t,
                  YAML::EmitterStyle::value) override {}
  void OnMapEnd() override {}

  std::vector<YAML::Mark> starts;
};

bool sameMark(const YAML::Mark& a, const YAML::Mark& b) {
  return a.pos == b.pos && a.line == b.line && a.column == b.column;
}

// 0 or 1: how many documents `text` holds; more is an error. Never more than two calls to
// HandleNextDocument, because yaml-cpp 0.7's parser does not always move on: a token that cannot
// start or continue a document (a ',' at the start of a line, outside [] or {}) is never consumed,
// so each call returns another empty document at the same place, for ever (YAML::LoadAll loops
// there, storing a node per turn). A second document that starts where the first did is that
// case, and a syntax error.
StatusOr<int> countDocuments(const std::string& text, const Errors& errors) {
  std::istringstream in(text);
  DocumentMarks marks;
  try {
    YAML::Parser parser(in);
    if (!parser.HandleNextDocument(marks)) return 0;
    if (!parser.HandleNextDocument(marks)) return 1;
  } catch (const YAML::ParserException& e) {
    return errors.at(e.mark, "yaml syntax error: " + e.msg);
  } catch (const YAML::Exception& e) {
    return errors.at(e.mark, "yaml error: " + e.msg);
  }
  const YAML::Mark& second = marks.starts.size() > 1 ? marks.starts[1] : YAML::Mark::null_mark();
  const bool stuck = marks.starts.size() > 1 && sameMark(marks.starts[0], second);
  const size_t pos = second.pos >= 0 ? static_cast<size_t>(second.pos) : text.size();
  if (stuck || (pos < text.size() && text[pos] == ',')) {
    const std::string found = pos < text.size() ? std::string(1, text[pos]) : "end of file";
    return errors.at(second, "yaml syntax error: unexpected '" + found +
                                 "' outside [...] or {...} (a wrapped comment line needs its own "
                                 "'#'; text that starts with it needs quotes)");
  }
  return errors.at(second,
                   "holds more than one yaml document ('---' starts another); expected one");
}

}  // namespace

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

std::string numberText(double value) {
  char buffer[32];
  // From 6 digits: %g drops trailing zeros anyway, and fewer would write 100 as 1e+02.
  for (int precision = 6; precision <= 17; ++precision) {
    std::snprintf(buffer, sizeof(buffer), "%.*g", precision, value);
    if (std::strtod(buffer, nullptr) == value) break;
  }
  return buffer;
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

// yaml-cpp tags a plain scalar "?" (resolve it yourself), a quoted one "!" and one written with a
// tag (!!str 2, !!int 2) by that tag. Only "?" is a number as written; a node built in memory
// rather than parsed has no tag.
bool isPlainScalar(const YAML::Node& node) {
  return node.IsScalar() && (node.Tag() == "?" || node.Tag().empty());
}

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
  STRATA_ASSIGN_OR_RETURN(int documents, countDocuments(text, errors));
  if (documents == 0) return errors.whole("file is empty; expected " + expected);
  try {
    // Exactly one document, as countDocuments found: Load builds that one.
    return YAML::Load(text);
  } catch (const YAML::ParserException& e) {
    return errors.at(e.mark, "yaml syntax error: " + e.msg);
  } catch (const YAML::Exception& e) {
    return errors.at(e.mark, "yaml error: " + e.msg);
  }
}

StatusOr<std::string> readTextFile(const std::string& path, size_t maxBytes, const Errors& errors) {
  StatusOr<std::string> text = readTextFileBounded(path, maxBytes);
  if (!text.isOk()) {
    // Keeps the reader's code: a file that is not there is a system error, not bad content.
    return Status(text.status().code(), errors.whole(text.status().message()).message());
  }
  return text;
}

}  // namespace strata::yaml
