// Logging's destination and prefix: STRATA_DEBUG_FILE's pattern (%h, %p), the file it opens
// (or the warning when it cannot), and the host the prefix names (STRATA_HOSTNAME when set).
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <fstream>
#include <sstream>
#include <string>

#include "common/log.h"
#include "common/test_env_util.h"

namespace strata {
namespace {

using strata::test::CapturedLog;
using strata::test::countOf;
using strata::test::ScopedEnv;

std::string readAll(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

// Runs `body` with descriptor 2 sent to a temporary file; returns what reached it.
template <typename Body>
std::string stderrOf(Body body) {
  std::fflush(stderr);
  const int saved = dup(2);
  FILE* tmp = std::tmpfile();
  dup2(fileno(tmp), 2);
  body();
  std::fflush(stderr);
  dup2(saved, 2);
  close(saved);
  std::rewind(tmp);
  std::string out;
  char buf[4096];
  for (size_t n; (n = std::fread(buf, 1, sizeof(buf), tmp)) > 0;) out.append(buf, n);
  std::fclose(tmp);
  return out;
}

TEST_CASE("log file pattern: %h and %p expand, %% is a percent, others stay", "[log]") {
  using detail::expandLogFilePattern;
  CHECK(expandLogFilePattern("/tmp/strata.%h.%p.log", "node7", 1234) ==
        "/tmp/strata.node7.1234.log");
  CHECK(expandLogFilePattern("plain", "h", 1) == "plain");
  CHECK(expandLogFilePattern("%h%h-%p%p", "a", 9) == "aa-99");
  CHECK(expandLogFilePattern("100%%_%x_%", "a", 9) == "100%_%x_%");
  CHECK(expandLogFilePattern("", "a", 9).empty());
}

TEST_CASE("log: the prefix names the emulated host when STRATA_HOSTNAME is set", "[log]") {
  ScopedEnv debug("STRATA_DEBUG", "WARN");
  ScopedEnv host("STRATA_HOSTNAME", "emulated-h3");
  CapturedLog log;
  STRATA_WARN(kSubsysInit, "hello");
  CHECK(log.text().rfind("emulated-h3:" + std::to_string(getpid()) + ":", 0) == 0);
}

TEST_CASE("log: STRATA_DEBUG_FILE receives the lines, stderr none", "[log]") {
  char dir[] = "/tmp/strata_log_test_XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  const std::string pattern = std::string(dir) + "/log.%h.%p";
  const std::string path = std::string(dir) + "/log.hx." + std::to_string(getpid());
  const std::string err = stderrOf([&] {
    ScopedEnv debug("STRATA_DEBUG", "INFO");
    ScopedEnv subsys("STRATA_DEBUG_SUBSYS", "PLAN");
    ScopedEnv host("STRATA_HOSTNAME", "hx");
    ScopedEnv file("STRATA_DEBUG_FILE", pattern.c_str());
    STRATA_INFO(kSubsysPlan, "first %d", 1);
    STRATA_WARN(kSubsysPlan, "second");
    STRATA_INFO(kSubsysInit | kSubsysPlan, "third, two subsystems");
  });  // the ScopedEnvs' reset closes the file
  CHECK(err.empty());
  const std::string text = readAll(path);
  INFO(text);
  CHECK(countOf(text, "hx:" + std::to_string(getpid()) + ":") == 3);
  CHECK(countOf(text, " STRATA INFO first 1\n") == 1);
  CHECK(countOf(text, " STRATA WARN second\n") == 1);
  CHECK(countOf(text, " STRATA INFO third, two subsystems\n") == 1);
  std::remove(path.c_str());
  rmdir(dir);
}

TEST_CASE("log: no file is made when nothing is logged", "[log]") {
  char dir[] = "/tmp/strata_log_test_XXXXXX";
  REQUIRE(mkdtemp(dir) != nullptr);
  const std::string path = std::string(dir) + "/never";
  {
    ScopedEnv debug("STRATA_DEBUG", "WARN");
    ScopedEnv file("STRATA_DEBUG_FILE", path.c_str());
    STRATA_INFO(kSubsysInit, "below the level");
  }
  CHECK(access(path.c_str(), F_OK) != 0);
  rmdir(dir);
}

TEST_CASE("log: an unopenable STRATA_DEBUG_FILE warns once on stderr and logs there", "[log]") {
  const std::string err = stderrOf([&] {
    ScopedEnv debug("STRATA_DEBUG", "INFO");
    ScopedEnv subsys("STRATA_DEBUG_SUBSYS", "INIT");
    ScopedEnv file("STRATA_DEBUG_FILE", "/nonexistent-strata-dir/log.%p");
    STRATA_INFO(kSubsysInit, "one");
    STRATA_INFO(kSubsysInit, "two");
  });
  INFO(err);
  CHECK(countOf(err,
                " STRATA WARN STRATA_DEBUG_FILE /nonexistent-strata-dir/log.%p: cannot open "
                "/nonexistent-strata-dir/log." +
                    std::to_string(getpid()) + ": ") == 1);
  CHECK(countOf(err, ": no such file or directory; logging to stderr\n") == 1);
  CHECK(countOf(err, " STRATA INFO one\n") == 1);
  CHECK(countOf(err, " STRATA INFO two\n") == 1);
}

}  // namespace
}  // namespace strata
