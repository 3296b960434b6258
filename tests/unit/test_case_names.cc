// Catch2 test case names must not hold '[' or ']': catch_discover_tests hands each name back to
// Catch as a test spec, where brackets name tags, and one such name once folded every later
// test case into a single ctest entry (the suite shrank from 500-odd entries to 356, silently). Read from the
// sources, so a bad name fails here instead of silently shrinking the suite.
#include <catch2/catch.hpp>
#include <filesystem>
#include <fstream>
#include <regex>
#include <string>

namespace {

namespace fs = std::filesystem;

TEST_CASE("unit test case names hold no characters that break test discovery", "[meta]") {
  const fs::path root = fs::path(STRATA_SOURCE_DIR) / "tests";
  const std::regex testCase(R"re(TEST_CASE\(\s*"((?:[^"\\]|\\.)*)")re");
  int names = 0;
  for (const auto& entry : fs::recursive_directory_iterator(root)) {
    if (!entry.is_regular_file() || entry.path().extension() != ".cc") continue;
    std::ifstream in(entry.path());
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    for (std::sregex_iterator it(text.begin(), text.end(), testCase), end; it != end; ++it) {
      const std::string name = (*it)[1];
      ++names;
      INFO(entry.path().string() << ": \"" << name << "\"");
      CHECK(name.find_first_of("[]") == std::string::npos);
    }
  }
  CHECK(names > 100);  // the scan found the suite
}

}  // namespace
