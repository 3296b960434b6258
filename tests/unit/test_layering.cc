// The layering of src/ (docs/architecture.md), held by reading every source file's includes:
// a layer may include only itself and the layers its rule lists. The rules that matter most
// are the ones the architecture step set up: src/gpu is the device runtime and includes only
// src/common; src/fabrics never reaches up into src/core or across into src/gpu; the planner
// (src/decompose) knows no fabric, bootstrap or core. tools/ may use every layer, but reaches
// the communicator only through core/tools_view.h.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <string>
#include <vector>

namespace {

namespace fs = std::filesystem;

// What each layer of src/ may include besides itself (and the public include/strata).
const std::map<std::string, std::set<std::string>>& allowed() {
  static const std::map<std::string, std::set<std::string>> rules = {
      {"common", {}},
      {"gpu", {"common"}},
      {"bootstrap", {"common"}},
      {"topology", {"common"}},
      {"decompose", {"common", "topology"}},
      {"fabrics", {"common", "bootstrap"}},
      {"core", {"common", "gpu", "bootstrap", "topology", "decompose", "fabrics"}},
      {"api", {"common", "bootstrap", "core"}},
  };
  return rules;
}

struct Violation {
  std::string file;
  std::string include;
};

// Every "layer/..." include of every file under src/ that its layer's rule does not allow.
std::vector<Violation> violations(const fs::path& src) {
  std::vector<Violation> out;
  const std::regex include(R"(^\s*#\s*include\s+"([a-z_]+)/)");
  for (const auto& entry : fs::recursive_directory_iterator(src)) {
    if (!entry.is_regular_file()) continue;
    const std::string rel = fs::relative(entry.path(), src).string();
    const std::string layer = rel.substr(0, rel.find('/'));
    auto rule = allowed().find(layer);
    if (rule == allowed().end()) {
      out.push_back({rel, "(a layer with no rule: add it to docs/architecture.md and here)"});
      continue;
    }
    std::ifstream in(entry.path());
    std::string line;
    while (std::getline(in, line)) {
      std::smatch m;
      if (!std::regex_search(line, m, include)) continue;
      const std::string to = m[1].str();
      if (to == layer || to == "strata" || rule->second.count(to)) continue;
      out.push_back({rel, line});
    }
  }
  return out;
}

}  // namespace

TEST_CASE("every file of src/ includes only the layers its layer may use", "[layering]") {
  const std::vector<Violation> found = violations(fs::path(STRATA_SOURCE_DIR) / "src");
  for (const Violation& v : found) {
    INFO(v.file << ": " << v.include);
    CHECK(false);
  }
  CHECK(found.empty());
}

namespace {

// The core and api headers a tool may include: the tools-facing view of a communicator, the
// function that hands it out, and the plan-file reader (I/O kept out of decompose). Anything else
// there is the communicator's insides.
const std::set<std::string>& toolsMayIncludeFromCoreAndApi() {
  static const std::set<std::string> headers = {"core/tools_view.h", "api/tools_view.h",
                                                "core/plan_load.h"};
  return headers;
}

}  // namespace

TEST_CASE("tools/ reach the communicator only through its tools-facing view", "[layering]") {
  const std::regex include(R"re(^\s*#\s*include\s+"((core|api)/[^"]+)")re");
  const fs::path tools = fs::path(STRATA_SOURCE_DIR) / "tools";
  std::vector<Violation> found;
  for (const auto& entry : fs::recursive_directory_iterator(tools)) {
    const std::string ext = entry.path().extension().string();
    if (!entry.is_regular_file() || (ext != ".h" && ext != ".cc")) continue;
    std::ifstream in(entry.path());
    std::string line;
    while (std::getline(in, line)) {
      std::smatch m;
      if (!std::regex_search(line, m, include)) continue;
      if (toolsMayIncludeFromCoreAndApi().count(m[1].str())) continue;
      found.push_back({fs::relative(entry.path(), tools).string(), line});
    }
  }
  for (const Violation& v : found) {
    INFO("tools/" << v.file << ": " << v.include);
    CHECK(false);
  }
  CHECK(found.empty());
}

// What the planner's layer may not do although its includes allow the header: read files or the
// environment, or log. Parsing and checking stay pure functions of their text; reading and
// logging happen at the edge (core/plan_load.h), as docs/architecture.md says.
TEST_CASE("src/decompose does no I/O and no logging", "[layering]") {
  const std::vector<std::string> forbidden = {"common/log.h", "common/text_file.h", "common/env.h",
                                              "<fstream>",    "<iostream>",         "<cstdio>",
                                              "<filesystem>", "readTextFile",       "STRATA_WARN",
                                              "STRATA_INFO",  "STRATA_TRACE",       "getenv",
                                              "fopen"};
  int files = 0;
  for (const auto& entry :
       fs::recursive_directory_iterator(fs::path(STRATA_SOURCE_DIR) / "src" / "decompose")) {
    if (!entry.is_regular_file()) continue;
    ++files;
    std::ifstream in(entry.path());
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      if (line.find("//") != std::string::npos) line = line.substr(0, line.find("//"));
      for (const std::string& word : forbidden) {
        INFO(entry.path().filename().string() << ":" << n << ": " << line);
        CHECK(line.find(word) == std::string::npos);
      }
    }
  }
  CHECK(files > 0);
}

TEST_CASE("the layering rules themselves keep gpu and fabrics apart from core", "[layering]") {
  // The rules the architecture step exists for; a later edit of the table must not lose them.
  CHECK(allowed().at("gpu") == std::set<std::string>{"common"});
  CHECK(allowed().at("fabrics").count("gpu") == 0);
  CHECK(allowed().at("fabrics").count("core") == 0);
  CHECK(allowed().at("decompose").count("fabrics") == 0);
}
