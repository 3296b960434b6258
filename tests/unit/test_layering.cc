// The layering of src/ (docs/architecture.md), held by reading every source file's includes:
// a layer may include only itself and the layers its rule lists. The rules that matter most
// are the ones the architecture step set up: src/gpu is the device runtime and includes only
// src/common; src/fabrics never reaches up into src/core or across into src/gpu; the planner
// (src/decompose) knows no fabric, bootstrap or core. tools/ never include a header of src/core
// or src/api: they use the public C API, the tools interface (src/tools_iface) and the pure
// layers, plus the few headers of the library's parts a tool measures (named below).
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
      // The tools' interface: a library apart from libstrata, over core and the C boundary's
      // handle table; nothing of src/ includes it (no rule above lists it).
      {"tools_iface",
       {"common", "gpu", "bootstrap", "topology", "decompose", "fabrics", "core", "api"}},
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

// What a file under tools/ may include of the library, by folder: the public C API, the tools
// interface and the pure layers (a tool prints hierarchies, plans and costs in their types).
// src/core and src/api are the communicator's insides and are never here.
const std::set<std::string>& toolsMayIncludeFolders() {
  static const std::set<std::string> folders = {"strata", "tools_iface", "common", "topology",
                                                "decompose"};
  return folders;
}

// The headers of other layers a tool may include: the parts of the library that a tool exists to
// measure on their own (strata-kernels times the device kernels; strata-perf runs MPI's
// collectives with the mpi fabric's type map for its --vs mpi column). Each is a leaf the
// library's other parts use the same way.
const std::set<std::string>& toolsMayIncludeHeaders() {
  static const std::set<std::string> headers = {"gpu/kernels.h", "fabrics/mpi/mpi_types.h"};
  return headers;
}

// Every include of a library header ("folder/...") under `tools` that the rules above do not
// allow. A tool's own headers ("tool_cli.h", "tune_sweep.h") have no folder and are not read.
std::vector<Violation> toolViolations(const fs::path& tools) {
  const std::regex include(R"re(^\s*#\s*include\s+"(([a-z_]+)/[^"]+)")re");
  std::vector<Violation> found;
  for (const auto& entry : fs::recursive_directory_iterator(tools)) {
    const std::string ext = entry.path().extension().string();
    if (!entry.is_regular_file() || (ext != ".h" && ext != ".cc" && ext != ".cu")) continue;
    std::ifstream in(entry.path());
    std::string line;
    while (std::getline(in, line)) {
      std::smatch m;
      if (!std::regex_search(line, m, include)) continue;
      if (toolsMayIncludeFolders().count(m[2].str())) continue;
      if (toolsMayIncludeHeaders().count(m[1].str())) continue;
      found.push_back({fs::relative(entry.path(), tools).string(), line});
    }
  }
  return found;
}

}  // namespace

TEST_CASE("tools/ use the C API, the tools interface and the pure layers, never core or api",
          "[layering]") {
  const std::vector<Violation> found = toolViolations(fs::path(STRATA_SOURCE_DIR) / "tools");
  for (const Violation& v : found) {
    INFO("tools/" << v.file << ": " << v.include);
    CHECK(false);
  }
  CHECK(found.empty());
}

TEST_CASE("the tools' rule itself keeps src/core and src/api out", "[layering]") {
  // A later edit of the lists must not let the communicator's insides back in.
  for (const char* inside : {"core", "api", "bootstrap", "fabrics", "gpu"}) {
    CHECK(toolsMayIncludeFolders().count(inside) == 0);
  }
  for (const std::string& header : toolsMayIncludeHeaders()) {
    INFO(header);
    CHECK(header.rfind("core/", 0) != 0);
    CHECK(header.rfind("api/", 0) != 0);
  }
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
  // The tools interface sits on top, for tools/ only: no layer of the library may use it.
  for (const auto& [layer, uses] : allowed()) {
    INFO(layer);
    CHECK(uses.count("tools_iface") == 0);
  }
}

namespace {

// The executor (docs/architecture.md, "The path of a call"): the instruction set, lowering, the
// executor loop and what it runs on. It takes a RunContext and a LowerContext, never the
// communicator, so that what a run may touch is what those name.
const std::vector<std::string>& executorFiles() {
  static const std::vector<std::string> files = {
      "core/instr.h",   "core/program.h",      "core/lower.h",    "core/lower.cc",
      "core/run.h",     "core/run.cc",         "core/run_group.cc", "core/executor.h",
      "core/wire_steps.h", "core/wire_steps.cc", "core/run_memory.h"};
  return files;
}

// The src/ headers `file` includes ("layer/..." only), directly.
std::vector<std::string> includesOf(const fs::path& src, const std::string& file) {
  const std::regex include(R"re(^\s*#\s*include\s+"([a-z_]+/[^"]+)")re");
  std::vector<std::string> out;
  std::ifstream in(src / file);
  std::string line;
  while (std::getline(in, line)) {
    std::smatch m;
    if (std::regex_search(line, m, include)) out.push_back(m[1].str());
  }
  return out;
}

// Every src/ header `file` reaches through its includes, itself excluded.
std::set<std::string> reachable(const fs::path& src, const std::string& file) {
  std::set<std::string> seen;
  std::vector<std::string> todo = includesOf(src, file);
  while (!todo.empty()) {
    const std::string next = todo.back();
    todo.pop_back();
    if (!seen.insert(next).second || !fs::exists(src / next)) continue;
    for (const std::string& i : includesOf(src, next)) todo.push_back(i);
  }
  return seen;
}

// Whether `line` (comments cut) names the communicator as a parameter or member.
bool takesComm(std::string line) {
  if (line.find("//") != std::string::npos) line = line.substr(0, line.find("//"));
  static const std::regex comm(R"(\bComm\s*[&*])");
  return std::regex_search(line, comm);
}

}  // namespace

TEST_CASE("the executor and the fabrics never take a Comm", "[layering]") {
  const fs::path src = fs::path(STRATA_SOURCE_DIR) / "src";
  for (const std::string& file : executorFiles()) {
    INFO(file);
    REQUIRE(fs::exists(src / file));
    const std::set<std::string> reached = reachable(src, file);
    for (const char* inside : {"core/comm.h", "core/calls.h", "core/bounded.h", "core/prepare.h",
                               "core/device_side.h", "core/engine.h"}) {
      INFO("reaches " << inside);
      CHECK(reached.count(inside) == 0);
    }
    std::ifstream in(src / file);
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      INFO(file << ":" << n << ": " << line);
      CHECK_FALSE(takesComm(line));
    }
  }
  int fabrics = 0;
  for (const auto& entry : fs::recursive_directory_iterator(src / "fabrics")) {
    if (!entry.is_regular_file()) continue;
    ++fabrics;
    std::ifstream in(entry.path());
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      INFO(entry.path().filename().string() << ":" << n << ": " << line);
      CHECK_FALSE(takesComm(line));
    }
  }
  CHECK(fabrics > 0);
}

TEST_CASE("the Comm check itself sees a Comm parameter and a comm.h reached", "[layering]") {
  CHECK(takesComm("Status run(Comm& c, Executor& x);"));
  CHECK(takesComm("  Comm *owner_;"));
  CHECK_FALSE(takesComm("Status run(RunContext& rc);  // never a Comm& here"));
  CHECK_FALSE(takesComm("CommId id;"));
  const std::set<std::string> fromCalls =
      reachable(fs::path(STRATA_SOURCE_DIR) / "src", "core/calls.cc");
  CHECK(fromCalls.count("core/comm.h") == 1);
}

TEST_CASE("one place drains the engine: Comm::quiesce", "[layering]") {
  // Every blocking host call and every collective setup runs the queued calls first; doing it
  // in one function (core/comm.h: quiesce, which takes an IssuingThread) keeps that rule in one
  // place. Any other `drain()` call outside the engine is a second place.
  const fs::path src = fs::path(STRATA_SOURCE_DIR) / "src";
  std::vector<std::string> callers;
  for (const auto& entry : fs::recursive_directory_iterator(src)) {
    if (!entry.is_regular_file()) continue;
    const std::string rel = fs::relative(entry.path(), src).string();
    if (rel == "core/engine.h" || rel == "core/engine.cc") continue;
    std::ifstream in(entry.path());
    std::string line;
    for (int n = 1; std::getline(in, line); ++n) {
      if (line.find("//") != std::string::npos) line = line.substr(0, line.find("//"));
      if (line.find(".drain()") != std::string::npos ||
          line.find("->drain()") != std::string::npos) {
        callers.push_back(rel + ":" + std::to_string(n));
      }
    }
  }
  std::string where;
  for (const std::string& c : callers) where += " " + c;
  INFO("drain() called at:" << where);
  REQUIRE(callers.size() == 1);
  CHECK(callers[0].rfind("core/init.cc:", 0) == 0);
}
