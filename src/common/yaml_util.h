// Strict reading of small YAML configuration files (topology files, plan files) with yaml-cpp.
//
// yaml-cpp only checks syntax and keeps a duplicated key without a word; a configuration file
// read wrong gives a run that works and does the wrong thing. These helpers refuse what yaml-cpp
// lets through (duplicate keys, unknown keys, several documents) and build messages of the form
//   "<kind> <source>:<line>: <problem>", e.g. "plan file configs/x.yaml:7: unknown key 'stage'".
#pragma once

#include <yaml-cpp/yaml.h>

#include <cstddef>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "common/status.h"

namespace strata::yaml {

// "a scalar", "a sequence", "a map" or "nothing": what a node is, for messages.
std::string kindOf(const YAML::Node& node);

// "a, b, c", or "(none)" for an empty list.
std::string joined(const std::vector<std::string>& items);

// The shortest text that reads back as the same double ("0.3", not yaml-cpp's
// "0.29999999999999999"): what the files and outputs strata writes hold.
std::string numberText(double value);

// Builds the kInvalidArgument errors of one file.
class Errors {
 public:
  // `kind` names the sort of file ("plan file"), `source` the file (a path or "<string>").
  Errors(std::string kind, std::string source)
      : kind_(std::move(kind)), source_(std::move(source)) {}

  // At a yaml-cpp mark (0-based); a mark of -1 (a node that is not in the text) has no line.
  Status at(const YAML::Mark& mark, const std::string& problem) const;
  // At a 1-based line; 0 or less gives no line (for checks that run after parsing).
  Status atLine(int line, const std::string& problem) const;
  // A node's own line, except for nulls: yaml-cpp marks an empty value at the next token, which
  // may be lines further down, so a wrong line is worse than none.
  Status atNode(const YAML::Node& node, const std::string& problem) const;
  Status whole(const std::string& problem) const { return atLine(0, problem); }

 private:
  std::string kind_, source_;
};

// The 1-based line of a node or key, 0 when it has none (see Errors::atNode).
int lineOf(const YAML::Node& node);

struct Entry {
  std::string key;
  YAML::Node keyNode, value;
};

// The entries of a map in file order. Keys must be scalars, appear once and be in `allowed`.
// `what` names the map in messages ("rule 2", "the top level").
StatusOr<std::vector<Entry>> entriesOf(const YAML::Node& map,
                                       const std::vector<std::string>& allowed,
                                       const std::string& what, const Errors& errors);

// The entry with `key`, or nullptr.
const Entry* find(const std::vector<Entry>& entries, const std::string& key);

// A quoted scalar ("2") or a tagged one (!!str 2) is a string to YAML; numbers must be written
// plain.
bool isPlainScalar(const YAML::Node& node);

// A decimal integer with an optional sign. Decimal only: 0x10 or 1e3 in a configuration file is
// more likely a mistake than an intent. Returns false if the text is not an integer; magnitudes
// beyond int64 saturate.
bool parseInteger(const std::string& text, int64_t* out);

// A positive finite number written plain, at most `max`. Returns false otherwise.
bool parsePositiveNumber(const YAML::Node& node, double max, double* out);

// Parses text that must hold exactly one YAML document. `expected` says what the document should
// be, for the message about an empty file ("a map with a 'rules' list"). Never throws, and never
// calls YAML::LoadAll (yaml-cpp 0.7's loops for ever on a line that starts with ',').
StatusOr<YAML::Node> loadDocument(const std::string& text, const std::string& expected,
                                  const Errors& errors);

// Reads the file at `path` with readTextFileBounded (common/text_file.h): a FIFO, a device such
// as /dev/zero, a file larger than `maxBytes` or one with a NUL byte is refused, never waited on.
// Does not log.
StatusOr<std::string> readTextFile(const std::string& path, size_t maxBytes, const Errors& errors);

}  // namespace strata::yaml
