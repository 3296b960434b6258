// The environment registry: defaults, parsing, caching and the user-settings log.
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>
#include <type_traits>
#include <utility>
#include <vector>

#include "common/env.h"
#include "common/log.h"
#include "common/test_env_util.h"

namespace strata::env {
namespace {

using strata::test::CapturedLog;
using strata::test::countOf;
using strata::test::ScopedEnv;

int64_t parsed(const std::string& text) {
  int64_t value = -12345;
  REQUIRE(detail::parseInteger(text, &value));
  return value;
}

bool parses(const std::string& text) {
  int64_t value = 0;
  return detail::parseInteger(text, &value);
}

// Whether a registry default reads with its type's grammar.
bool defaultParses(const Param& p) {
  ScopedEnv unset(p.name, nullptr);
  const auto index = static_cast<detail::Index>(&p - registry().data());
  switch (p.type) {
    case Type::kString:
      return true;
    case Type::kInt:
      return detail::intAt(index).isOk();
    case Type::kSize:
      return detail::sizeAt(index).isOk();
    case Type::kDuration:
      return detail::secondsAt(index).isOk();
  }
  return false;
}

TEST_CASE("env: unset variables take their defaults", "[env]") {
  ScopedEnv debug("STRATA_DEBUG", nullptr);
  ScopedEnv chunk("STRATA_CHUNK_BYTES", nullptr);
  ScopedEnv host("STRATA_HOSTNAME", nullptr);
  CHECK(getString("STRATA_DEBUG") == "WARN");
  CHECK_FALSE(isSet("STRATA_DEBUG"));
  CHECK(getInt("STRATA_CHUNK_BYTES") == 268435456);
  CHECK(getString("STRATA_HOSTNAME").empty());
  CHECK_FALSE(isSet("STRATA_HOSTNAME"));
}

TEST_CASE("env: an empty value counts as unset", "[env]") {
  ScopedEnv chunk("STRATA_CHUNK_BYTES", "");
  CHECK_FALSE(isSet("STRATA_CHUNK_BYTES"));
  CHECK(getString("STRATA_CHUNK_BYTES") == "268435456");
  CHECK(getInt("STRATA_CHUNK_BYTES") == 268435456);
}

TEST_CASE("env: set values replace the defaults", "[env]") {
  ScopedEnv host("STRATA_HOSTNAME", "node-a");
  ScopedEnv chunk("STRATA_CHUNK_BYTES", "65536");
  CHECK(isSet("STRATA_HOSTNAME"));
  CHECK(getString("STRATA_HOSTNAME") == "node-a");
  CHECK(isSet("STRATA_CHUNK_BYTES"));
  CHECK(getInt("STRATA_CHUNK_BYTES") == 65536);
  CHECK(getString("STRATA_CHUNK_BYTES") == "65536");
}

TEST_CASE("env: values are read once and cached until reset", "[env]") {
  ScopedEnv host("STRATA_HOSTNAME", "first");
  ScopedEnv chunk("STRATA_CHUNK_BYTES", "8192");
  CHECK(getString("STRATA_HOSTNAME") == "first");
  CHECK(getInt("STRATA_CHUNK_BYTES") == 8192);
  setenv("STRATA_HOSTNAME", "second", 1);
  setenv("STRATA_CHUNK_BYTES", "16384", 1);
  CHECK(getString("STRATA_HOSTNAME") == "first");
  CHECK(getInt("STRATA_CHUNK_BYTES") == 8192);
  detail::resetForTesting();
  CHECK(getString("STRATA_HOSTNAME") == "second");
  CHECK(getInt("STRATA_CHUNK_BYTES") == 16384);
}

TEST_CASE("env: sizes read with the one size grammar", "[env]") {
  // The forms the environment took before (K, M, G in any case) and those plan files and tool
  // flags took (KiB, KB): common/units.h, tested in full in test_units.cc.
  for (const auto& [written, value] :
       std::vector<std::pair<const char*, uint64_t>>{{"0", 0},
                                                     {"4096", 4096},
                                                     {"4k", 4096},
                                                     {"64M", uint64_t{64} << 20},
                                                     {"4MiB", uint64_t{4} << 20},
                                                     {"4 MiB", uint64_t{4} << 20},
                                                     {"2GB", uint64_t{2} << 30}}) {
    ScopedEnv chunk("STRATA_CHUNK_BYTES", written);
    INFO(written);
    StatusOr<uint64_t> v = get(var::STRATA_CHUNK_BYTES);
    REQUIRE(v.isOk());
    CHECK(v.value() == value);
    CHECK(text(var::STRATA_CHUNK_BYTES) == written);
  }
}

TEST_CASE("env: integers are plain decimals", "[env]") {
  CHECK(parsed("42") == 42);
  CHECK(parsed("-7") == -7);
  CHECK(parsed("-9223372036854775808") == INT64_MIN);
  CHECK_FALSE(parses("4K"));  // suffixes are for sizes only
  for (const char* bad : {"", "-", "abc", "12x", " 64", "+5", "0x10", "9223372036854775808"}) {
    CAPTURE(bad);
    CHECK_FALSE(parses(bad));
  }
  int64_t untouched = 5;
  CHECK_FALSE(detail::parseInteger("junk", &untouched));
  CHECK(untouched == 5);
}

TEST_CASE("env: typed accessors return each variable in its registry type", "[env]") {
  ScopedEnv host("STRATA_HOSTNAME", "node-a");
  ScopedEnv check("STRATA_CHECK", "1");
  ScopedEnv timeout("STRATA_TIMEOUT", "1.5");
  // The return types are the registry's: a string, then StatusOr of int64, uint64 and double.
  static_assert(std::is_same_v<decltype(get(var::STRATA_HOSTNAME)), std::string>);
  static_assert(std::is_same_v<decltype(get(var::STRATA_CHECK)), StatusOr<int64_t>>);
  static_assert(std::is_same_v<decltype(get(var::STRATA_CHUNK_BYTES)), StatusOr<uint64_t>>);
  static_assert(std::is_same_v<decltype(get(var::STRATA_TIMEOUT)), StatusOr<double>>);
  CHECK(get(var::STRATA_HOSTNAME) == "node-a");
  CHECK(isSet(var::STRATA_HOSTNAME));
  CHECK(get(var::STRATA_CHECK).value() == 1);
  CHECK(get(var::STRATA_TIMEOUT).value() == 1.5);
  CHECK_FALSE(isSet(var::STRATA_CHUNK_BYTES));
  CHECK(get(var::STRATA_CHUNK_BYTES).value() == 268435456);
  // Each constant is its registry entry.
  CHECK(std::string(registry()[static_cast<int>(var::STRATA_TIMEOUT.index)].name) ==
        "STRATA_TIMEOUT");
  CHECK(registry()[static_cast<int>(var::STRATA_TIMEOUT.index)].type == Type::kDuration);
}

TEST_CASE("env: STRATA_TIMEOUT takes durations, plain seconds as before", "[env]") {
  for (const auto& [written, value] : std::vector<std::pair<const char*, double>>{
           {"600", 600}, {"0.25", 0.25}, {"0", 0}, {"500ms", 0.5}, {"2min", 120}}) {
    ScopedEnv timeout("STRATA_TIMEOUT", written);
    INFO(written);
    StatusOr<double> v = get(var::STRATA_TIMEOUT);
    REQUIRE(v.isOk());
    CHECK(v.value() == Approx(value));
  }
}

TEST_CASE("env: a malformed value is refused with a message naming the variable", "[env]") {
  {
    ScopedEnv chunk("STRATA_CHUNK_BYTES", "64XB");
    StatusOr<uint64_t> v = get(var::STRATA_CHUNK_BYTES);
    REQUIRE_FALSE(v.isOk());
    CHECK(v.status().code() == Code::kInvalidArgument);
    CHECK(v.status().message().rfind("STRATA_CHUNK_BYTES=64XB: not a size; expected", 0) == 0);
  }
  {
    ScopedEnv chunk("STRATA_CHUNK_BYTES", "8589934592G");
    CHECK_THAT(get(var::STRATA_CHUNK_BYTES).status().message(),
               Catch::Matchers::Contains("STRATA_CHUNK_BYTES=8589934592G: too large"));
  }
  {
    ScopedEnv check("STRATA_CHECK", "yes");
    CHECK(get(var::STRATA_CHECK).status().message() == "STRATA_CHECK=yes: not an integer");
  }
  {
    ScopedEnv timeout("STRATA_TIMEOUT", "-1");
    StatusOr<double> v = get(var::STRATA_TIMEOUT);
    REQUIRE_FALSE(v.isOk());
    CHECK(v.status().message().rfind("STRATA_TIMEOUT=-1: not a duration; expected", 0) == 0);
    CHECK_THAT(v.status().message(), Catch::Matchers::Contains("a number alone is seconds"));
  }
}

TEST_CASE("env: by name, a malformed value warns once and yields the default", "[env]") {
  // The by-name read is for listing tools, which must go on; library code uses get().
  ScopedEnv debug("STRATA_DEBUG", nullptr);
  ScopedEnv chunk("STRATA_CHUNK_BYTES", "64XB");
  CapturedLog log;
  CHECK(getInt("STRATA_CHUNK_BYTES") == 268435456);
  CHECK(getInt("STRATA_CHUNK_BYTES") == 268435456);
  const std::string text = log.text();
  CHECK(countOf(text, " STRATA WARN ") == 1);
  CHECK(countOf(text, "STRATA_CHUNK_BYTES=64XB: not a size") == 1);
  CHECK(countOf(text, "268435456") == 1);
}

TEST_CASE("env: unregistered names read as empty", "[env]") {
  ScopedEnv debug("STRATA_DEBUG", nullptr);
  CapturedLog log;
  CHECK(getString("STRATA_NOT_A_PARAMETER").empty());
  CHECK(getInt("STRATA_NOT_A_PARAMETER") == 0);
  CHECK_FALSE(isSet("STRATA_NOT_A_PARAMETER"));
  CHECK(countOf(log.text(), "STRATA_NOT_A_PARAMETER is not in env_vars.def") == 3);
}

TEST_CASE("env: the registry is well formed", "[env]") {
  std::set<std::string> names;
  REQUIRE_FALSE(registry().empty());
  for (const Param& p : registry()) {
    CAPTURE(p.name);
    CHECK(names.insert(p.name).second);  // no duplicates
    CHECK(std::string(p.name).rfind("STRATA_", 0) == 0);
    CHECK(p.doc[0] != '\0');
    CHECK(std::string(p.doc).find('\n') == std::string::npos);
    CHECK(defaultParses(p));
  }
}

TEST_CASE("env: the Markdown table has one row per variable", "[env]") {
  const std::string table = markdownTable();
  CHECK(table.rfind("| Variable | Default | Meaning |\n|---|---|---|\n", 0) == 0);
  CHECK(countOf(table, "\n") == static_cast<int>(registry().size()) + 2);
  for (const Param& p : registry()) {
    CAPTURE(p.name);
    CHECK(countOf(table, "| `" + std::string(p.name) + "` | ") == 1);
  }
  CHECK(countOf(table, "| `STRATA_DEBUG` | `WARN` | log level") == 1);
}

TEST_CASE("env: user settings and unknown variables are logged once", "[env]") {
  ScopedEnv debug("STRATA_DEBUG", "INFO");
  ScopedEnv subsys("STRATA_DEBUG_SUBSYS", "ENV");
  ScopedEnv chunk("STRATA_CHUNK_BYTES", "64M");
  ScopedEnv typo("STRATA_CHUNK_BYTE", "1M");
  CapturedLog log;
  logUserSettings();
  logUserSettings();
  const std::string text = log.text();
  CHECK(countOf(text, " STRATA INFO STRATA_CHUNK_BYTES set by environment to 64M\n") == 1);
  CHECK(countOf(text, " STRATA INFO STRATA_DEBUG set by environment to INFO\n") == 1);
  CHECK(countOf(text,
                " STRATA WARN unknown variable STRATA_CHUNK_BYTE ignored; strata-info "
                "--env lists the known ones\n") == 1);
  CHECK(countOf(text, "STRATA_HOSTNAME") == 0);
}

TEST_CASE("env: user settings are quiet below INFO, unknown variables are not", "[env]") {
  ScopedEnv debug("STRATA_DEBUG", nullptr);
  ScopedEnv chunk("STRATA_CHUNK_BYTES", "64M");
  ScopedEnv typo("STRATA_DEBUGG", "INFO");
  CapturedLog log;
  logUserSettings();
  const std::string text = log.text();
  CHECK(countOf(text, "set by environment") == 0);
  CHECK(countOf(text, "unknown variable STRATA_DEBUGG ignored") == 1);
}

}  // namespace
}  // namespace strata::env
