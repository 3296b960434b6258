// The environment registry: defaults, parsing, caching and the user-settings log.
#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <set>
#include <string>

#include "common/env.h"
#include "common/log.h"
#include "common/test_env_util.h"

namespace strata::env {
namespace {

using strata::test::CapturedLog;
using strata::test::countOf;
using strata::test::ScopedEnv;

int64_t parsed(const std::string& text, Type type) {
  int64_t value = -12345;
  REQUIRE(detail::parseInteger(text, type, &value));
  return value;
}

bool parses(const std::string& text, Type type) {
  int64_t value = 0;
  return detail::parseInteger(text, type, &value);
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

TEST_CASE("env: sizes take binary K, M and G suffixes", "[env]") {
  CHECK(parsed("0", Type::kSize) == 0);
  CHECK(parsed("4096", Type::kSize) == 4096);
  CHECK(parsed("4K", Type::kSize) == 4096);
  CHECK(parsed("4k", Type::kSize) == 4096);
  CHECK(parsed("64M", Type::kSize) == int64_t{64} << 20);
  CHECK(parsed("1G", Type::kSize) == int64_t{1} << 30);
  CHECK(parsed("3g", Type::kSize) == int64_t{3} << 30);
  CHECK(parsed("9223372036854775807", Type::kSize) == INT64_MAX);

  ScopedEnv chunk("STRATA_CHUNK_BYTES", "64M");
  CHECK(getInt("STRATA_CHUNK_BYTES") == int64_t{64} << 20);
  CHECK(getString("STRATA_CHUNK_BYTES") == "64M");
}

TEST_CASE("env: integers are plain decimals", "[env]") {
  CHECK(parsed("42", Type::kInt) == 42);
  CHECK(parsed("-7", Type::kInt) == -7);
  CHECK(parsed("-9223372036854775808", Type::kInt) == INT64_MIN);
  CHECK_FALSE(parses("4K", Type::kInt));   // suffixes are for sizes only
  CHECK_FALSE(parses("-1", Type::kSize));  // a size is never negative
}

TEST_CASE("env: malformed numbers are rejected", "[env]") {
  for (const char* bad : {"", "-", "K", "abc", "12x", "64MB", "1.5G", " 64", "64 ", "+5", "0x10",
                          "9223372036854775808", "8589934592G", "99999999999999999999"}) {
    CAPTURE(bad);
    CHECK_FALSE(parses(bad, Type::kSize));
    CHECK_FALSE(parses(bad, Type::kInt));
  }
  int64_t untouched = 5;
  CHECK_FALSE(detail::parseInteger("junk", Type::kInt, &untouched));
  CHECK(untouched == 5);
}

TEST_CASE("env: a malformed value warns once and yields the default", "[env]") {
  ScopedEnv debug("STRATA_DEBUG", nullptr);
  ScopedEnv chunk("STRATA_CHUNK_BYTES", "64MB");
  CapturedLog log;
  CHECK(getInt("STRATA_CHUNK_BYTES") == 268435456);
  CHECK(getInt("STRATA_CHUNK_BYTES") == 268435456);
  const std::string text = log.text();
  CHECK(countOf(text, " STRATA WARN ") == 1);
  CHECK(countOf(text, "STRATA_CHUNK_BYTES=64MB") == 1);
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
    if (p.type != Type::kString) CHECK(parses(p.defaultValue, p.type));
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
