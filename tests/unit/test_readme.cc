// The README lists every environment variable of the registry (and no stale one).
#include <catch2/catch.hpp>
#include <fstream>
#include <regex>
#include <set>
#include <sstream>
#include <string>

#include "common/env.h"

TEST_CASE("the README documents every STRATA_* variable", "[docs]") {
  std::ifstream in(STRATA_SOURCE_DIR "/README.md");
  REQUIRE(in.good());
  std::stringstream text;
  text << in.rdbuf();
  const std::string readme = text.str();
  std::set<std::string> registered;
  for (const auto& p : strata::env::registry()) {
    registered.insert(p.name);
    INFO(p.name);
    CHECK(readme.find("| `" + std::string(p.name) + "` |") != std::string::npos);
  }
  // Every table row names a registered variable.
  const std::regex row(R"(\| `(STRATA_[A-Z_]+)` \|)");
  for (auto it = std::sregex_iterator(readme.begin(), readme.end(), row);
       it != std::sregex_iterator(); ++it) {
    INFO((*it)[1].str());
    CHECK(registered.count((*it)[1].str()) == 1);
  }
}
