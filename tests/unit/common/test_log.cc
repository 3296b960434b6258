// Logging: STRATA_DEBUG and STRATA_DEBUG_SUBSYS parsing, the line format and the version line.
#include <unistd.h>

#include <catch2/catch.hpp>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <regex>
#include <string>
#include <thread>
#include <vector>

#include "common/env.h"
#include "common/log.h"
#include "common/test_env_util.h"

namespace strata {
namespace {

using strata::test::CapturedLog;
using strata::test::countOf;
using strata::test::ScopedEnv;

constexpr uint32_t kEverySubsys[] = {kSubsysInit,   kSubsysTopo, kSubsysPlan,
                                     kSubsysFabric, kSubsysColl, kSubsysEnv};

// The subsystems logEnabled lets through at INFO, as a mask of the six named ones.
uint32_t infoMask() {
  uint32_t mask = 0;
  for (uint32_t bit : kEverySubsys) {
    if (logEnabled(LogLevel::kInfo, bit)) mask |= bit;
  }
  return mask;
}

// The highest level logEnabled lets through, for a subsystem that is always on.
int enabledLevel() {
  int level = 0;
  for (LogLevel l : {LogLevel::kVersion, LogLevel::kWarn, LogLevel::kInfo, LogLevel::kTrace}) {
    if (logEnabled(l, kSubsysAll)) level = static_cast<int>(l);
  }
  return level;
}

std::string shortHostName() {
  char buf[256] = {};
  gethostname(buf, sizeof(buf) - 1);
  return std::string(buf, std::strcspn(buf, "."));
}

TEST_CASE("log: STRATA_DEBUG picks the level, case-insensitively", "[log]") {
  ScopedEnv subsys("STRATA_DEBUG_SUBSYS", "ALL");
  const struct {
    const char* value;
    LogLevel level;
  } cases[] = {{nullptr, LogLevel::kWarn},  {"", LogLevel::kWarn},
               {"NONE", LogLevel::kNone},   {"version", LogLevel::kVersion},
               {"Warn", LogLevel::kWarn},   {"info", LogLevel::kInfo},
               {"TRACE", LogLevel::kTrace}, {" INFO ", LogLevel::kInfo}};
  for (const auto& c : cases) {
    CAPTURE(c.value != nullptr ? c.value : "(unset)");
    ScopedEnv debug("STRATA_DEBUG", c.value);
    CHECK(enabledLevel() == static_cast<int>(c.level));
  }
}

TEST_CASE("log: an unknown level warns once and means WARN", "[log]") {
  ScopedEnv debug("STRATA_DEBUG", "VERBOSE");
  CapturedLog log;
  CHECK(enabledLevel() == static_cast<int>(LogLevel::kWarn));
  CHECK(logEnabled(LogLevel::kWarn, kSubsysInit));
  CHECK_FALSE(logEnabled(LogLevel::kInfo, kSubsysInit));
  const std::string text = log.text();
  CHECK(countOf(text, " STRATA WARN unknown STRATA_DEBUG value VERBOSE; using WARN") == 1);
  CHECK(countOf(text, "\n") == 1);
}

TEST_CASE("log: STRATA_DEBUG_SUBSYS picks the subsystems, NCCL style", "[log]") {
  ScopedEnv debug("STRATA_DEBUG", "TRACE");
  const uint32_t kNamed =
      kSubsysInit | kSubsysTopo | kSubsysPlan | kSubsysFabric | kSubsysColl | kSubsysEnv;
  const struct {
    const char* value;
    uint32_t mask;
  } cases[] = {
      {nullptr, kSubsysInit | kSubsysEnv},
      {"", kSubsysInit | kSubsysEnv},
      {"ALL", kNamed},
      {"all", kNamed},
      {"TOPO", kSubsysTopo},
      {"TOPO,plan", kSubsysTopo | kSubsysPlan},
      {" INIT , Coll ,", kSubsysInit | kSubsysColl},
      {"FABRIC,ALL", kNamed},
      {"^INIT", kNamed & ~kSubsysInit},
      {"^INIT,ENV", kNamed & ~(kSubsysInit | kSubsysEnv)},
      {"^ALL", 0},
      {"^", kNamed},
      {"INIT,^TOPO", kSubsysInit},  // ^ only counts in front; "^TOPO" is an unknown name
  };
  for (const auto& c : cases) {
    CAPTURE(c.value != nullptr ? c.value : "(unset)");
    ScopedEnv subsys("STRATA_DEBUG_SUBSYS", c.value);
    CapturedLog log;
    CHECK(infoMask() == c.mask);
    CHECK(logEnabled(LogLevel::kTrace, kSubsysAll) == (c.mask != 0));
  }
}

TEST_CASE("log: unknown subsystem names warn and are skipped", "[log]") {
  ScopedEnv debug("STRATA_DEBUG", "INFO");
  ScopedEnv subsys("STRATA_DEBUG_SUBSYS", "TOPO,BOGUS,plan,NOPE");
  CapturedLog log;
  CHECK(infoMask() == (kSubsysTopo | kSubsysPlan));
  const std::string text = log.text();
  CHECK(countOf(text, " STRATA WARN unknown STRATA_DEBUG_SUBSYS name(s) BOGUS,NOPE ignored") == 1);
}

TEST_CASE("log: warnings go out whatever the subsystems", "[log]") {
  ScopedEnv debug("STRATA_DEBUG", "WARN");
  ScopedEnv subsys("STRATA_DEBUG_SUBSYS", "TOPO");
  CHECK(logEnabled(LogLevel::kWarn, kSubsysColl));
  CHECK(logEnabled(LogLevel::kWarn, kSubsysTopo));
  CHECK_FALSE(logEnabled(LogLevel::kInfo, kSubsysTopo));  // below the level
  ScopedEnv info("STRATA_DEBUG", "INFO");
  CHECK(logEnabled(LogLevel::kInfo, kSubsysTopo));
  CHECK_FALSE(logEnabled(LogLevel::kInfo, kSubsysColl));
  CHECK(logEnabled(LogLevel::kWarn, kSubsysColl));
}

TEST_CASE("log: lines carry host, pid, tid and rank", "[log]") {
  ScopedEnv debug("STRATA_DEBUG", "WARN");
  CapturedLog log;
  logSetRank(-1);
  STRATA_WARN(kSubsysColl, "hello %d", 42);
  logSetRank(3);
  STRATA_WARN(kSubsysColl, "ends with a newline\n");
  logSetRank(-1);
  const std::vector<std::string> lines = log.lines();
  REQUIRE(lines.size() == 2);
  const std::string prefix = shortHostName() + ":" + std::to_string(getpid()) + ":";
  CHECK(lines[0].rfind(prefix, 0) == 0);
  CHECK(std::regex_match(lines[0], std::regex(R"([^:\s]+:\d+:\d+ \[-\] STRATA WARN hello 42)")));
  CHECK(std::regex_match(lines[1],
                         std::regex(R"([^:\s]+:\d+:\d+ \[3\] STRATA WARN ends with a newline)")));
}

TEST_CASE("log: TRACE lines name the source file and line", "[log]") {
  ScopedEnv debug("STRATA_DEBUG", "TRACE");
  ScopedEnv subsys("STRATA_DEBUG_SUBSYS", "PLAN");
  CapturedLog log;
  const int line = __LINE__ + 1;
  STRATA_TRACE(kSubsysPlan, "step %s", "one");
  STRATA_INFO(kSubsysPlan, "no location");
  const std::vector<std::string> lines = log.lines();
  REQUIRE(lines.size() == 2);
  CHECK(lines[0].find(" STRATA TRACE step one (test_log.cc:" + std::to_string(line) + ")") !=
        std::string::npos);
  CHECK(lines[1].find(" STRATA INFO no location") != std::string::npos);
  CHECK(lines[1].find("test_log.cc") == std::string::npos);
}

TEST_CASE("log: long messages are not cut", "[log]") {
  ScopedEnv debug("STRATA_DEBUG", "WARN");
  CapturedLog log;
  const std::string big(5000, 'x');
  STRATA_WARN(kSubsysInit, "%s|end", big.c_str());
  const std::vector<std::string> lines = log.lines();
  REQUIRE(lines.size() == 1);
  CHECK(lines[0].find(big + "|end") != std::string::npos);
}

TEST_CASE("log: disabled lines cost no argument evaluation", "[log]") {
  ScopedEnv debug("STRATA_DEBUG", "WARN");
  CapturedLog log;
  int evaluated = 0;
  STRATA_INFO(kSubsysInit, "%d", ++evaluated);
  STRATA_TRACE(kSubsysInit, "%d", ++evaluated);
  CHECK(evaluated == 0);
  CHECK(log.text().empty());
}

TEST_CASE("log: the version line appears once, from VERSION up", "[log]") {
  const std::string kVersionLine = " STRATA version 0.1.0\n";
  SECTION("VERSION prints it on init and nothing else") {
    ScopedEnv debug("STRATA_DEBUG", "VERSION");
    CapturedLog log;
    logVersionOnce();
    logVersionOnce();
    STRATA_WARN(kSubsysInit, "not shown");
    CHECK(countOf(log.text(), kVersionLine) == 1);
    CHECK(countOf(log.text(), "\n") == 1);
  }
  SECTION("NONE prints nothing") {
    ScopedEnv debug("STRATA_DEBUG", "NONE");
    CapturedLog log;
    logVersionOnce();
    STRATA_WARN(kSubsysInit, "not shown");
    CHECK(log.text().empty());
  }
  SECTION("INFO lines do not bring it: only init's explicit call does (from rank 0)") {
    ScopedEnv debug("STRATA_DEBUG", "INFO");
    ScopedEnv subsys("STRATA_DEBUG_SUBSYS", "INIT");
    CapturedLog log;
    STRATA_WARN(kSubsysInit, "a warning");
    STRATA_INFO(kSubsysInit, "first");
    logVersionOnce();
    const std::vector<std::string> lines = log.lines();
    REQUIRE(lines.size() == 3);
    CHECK(lines[0].find("STRATA WARN a warning") != std::string::npos);
    CHECK(lines[1].find("STRATA INFO first") != std::string::npos);
    CHECK(lines[2].find("STRATA version 0.1.0") != std::string::npos);
  }
  SECTION("the default level (STRATA_DEBUG unset) never prints it") {
    ScopedEnv debug("STRATA_DEBUG", nullptr);
    CapturedLog log;
    logVersionOnce();
    CHECK(log.text().empty());
  }
}

TEST_CASE("log: concurrent first use and logging keep lines whole", "[log]") {
  ScopedEnv debug("STRATA_DEBUG", "INFO");
  ScopedEnv subsys("STRATA_DEBUG_SUBSYS", "COLL");
  CapturedLog log;
  constexpr int kThreads = 8;
  constexpr int kLines = 200;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t] {
      for (int i = 0; i < kLines; ++i) {
        STRATA_INFO(kSubsysColl, "thread %d line %d %s", t, i, "payload-payload-payload");
      }
    });
  }
  for (std::thread& th : threads) th.join();
  const std::vector<std::string> lines = log.lines();
  REQUIRE(lines.size() == kThreads * kLines);
  const std::regex whole(R"([^:\s]+:\d+:\d+ \[-\] STRATA )"
                         R"((version 0\.1\.0|INFO thread \d line \d+ payload-payload-payload))");
  int malformed = 0;
  for (const std::string& l : lines) malformed += std::regex_match(l, whole) ? 0 : 1;
  CHECK(malformed == 0);
  CHECK(countOf(log.text(), "STRATA version") == 0);
}

}  // namespace
}  // namespace strata
