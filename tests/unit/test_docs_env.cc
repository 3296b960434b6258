// docs/env.md lists every environment variable of the registry in its table, and no stale one
// (the table is what `strata-info --env --markdown` prints).
#include <catch2/catch.hpp>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "common/env.h"

TEST_CASE("docs/env.md documents every STRATA_* variable", "[docs]") {
  std::ifstream in(STRATA_SOURCE_DIR "/docs/env.md");
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  const std::string page = text.str();
  std::set<std::string> registered;
  for (const auto& p : strata::env::registry()) {
    registered.insert(p.name);
    INFO(p.name);
    CHECK(page.find("| `" + std::string(p.name) + "` |") != std::string::npos);
  }
  // Every table row names a registered variable.
  const std::regex row(R"(\| `(STRATA_[A-Z_]+)` \|)");
  for (auto it = std::sregex_iterator(page.begin(), page.end(), row);
       it != std::sregex_iterator(); ++it) {
    INFO((*it)[1].str());
    CHECK(registered.count((*it)[1].str()) == 1);
  }
}

// The table lives in docs/env.md only: a row left in the README (where the table used to be)
// would drift from the registry unchecked.
TEST_CASE("the README holds no environment-variable table", "[docs]") {
  std::ifstream in(STRATA_SOURCE_DIR "/README.md");
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  const std::string readme = text.str();
  const std::regex row(R"(\| `(STRATA_[A-Z_]+)` \|)");
  std::smatch m;
  const bool found = std::regex_search(readme, m, row);
  INFO("README.md has a row for " << (found ? m[1].str() : "") << ": move it to docs/env.md");
  CHECK_FALSE(found);
}
