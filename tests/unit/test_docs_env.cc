// docs/env.md lists every environment variable of the registry in its table, and no stale one
// (the table is what `strata-info --env --markdown` prints).
#include <catch2/catch.hpp>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "common/env.h"

namespace {
// A file of the source tree, whole; empty when it cannot be read (the test then fails on it).
std::string readSourceFile(const std::string& relative) {
  std::ifstream in(std::string(STRATA_SOURCE_DIR) + "/" + relative);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// A row of the table: | `STRATA_NAME` | ...
const std::regex kRow(R"(\| `(STRATA_[A-Z_]+)` \|)");
}  // namespace

TEST_CASE("docs/env.md documents every STRATA_* variable", "[docs]") {
  const std::string page = readSourceFile("docs/env.md");
  REQUIRE(!page.empty());
  std::set<std::string> registered;
  for (const auto& p : strata::env::registry()) {
    registered.insert(p.name);
    INFO(p.name);
    CHECK(page.find("| `" + std::string(p.name) + "` |") != std::string::npos);
  }
  // Every table row names a registered variable.
  for (auto it = std::sregex_iterator(page.begin(), page.end(), kRow);
       it != std::sregex_iterator(); ++it) {
    INFO((*it)[1].str());
    CHECK(registered.count((*it)[1].str()) == 1);
  }
}

// The table lives in docs/env.md only: a row left in the README (where the table used to be)
// would drift from the registry unchecked.
TEST_CASE("the README holds no environment-variable table", "[docs]") {
  const std::string readme = readSourceFile("README.md");
  REQUIRE(!readme.empty());
  std::smatch m;
  const bool found = std::regex_search(readme, m, kRow);
  INFO("README.md has a row for " << (found ? m[1].str() : "") << ": move it to docs/env.md");
  CHECK_FALSE(found);
}
