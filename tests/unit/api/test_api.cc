// strataGetErrorString's hints are true at every log level: the details are always in
// strataGetLastError, and STRATA_DEBUG=WARN is suggested only when the level hides warnings.
// strataCommAbort dumps the flight recorder only when it cuts a call short.
#include <catch2/catch.hpp>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "common/test_env_util.h"
#include "strata/strata.h"

namespace {

using strata::test::ScopedEnv;

TEST_CASE("error strings: STRATA_DEBUG=WARN is suggested only below WARN", "[api]") {
  const strataResult_t codes[] = {strataUnhandledCudaError, strataSystemError,
                                  strataInvalidArgument, strataInvalidUsage};
  for (const char* level : {static_cast<const char*>(nullptr), "WARN", "INFO", "TRACE"}) {
    ScopedEnv debug("STRATA_DEBUG", level);
    for (strataResult_t code : codes) {
      const std::string s = strataGetErrorString(code);
      INFO((level ? level : "(unset)") << ": " << s);
      CHECK(s.find("strataGetLastError") != std::string::npos);
      CHECK(s.find("STRATA_DEBUG") == std::string::npos);
    }
  }
  for (const char* level : {"NONE", "VERSION"}) {
    ScopedEnv debug("STRATA_DEBUG", level);
    for (strataResult_t code : codes) {
      const std::string s = strataGetErrorString(code);
      INFO(level << ": " << s);
      CHECK(s.find("strataGetLastError") != std::string::npos);
      CHECK(s.find("STRATA_DEBUG=WARN logs it") != std::string::npos);
    }
  }
}

// The lines the flight recorder wrote for rank r (STRATA_FLIGHT_RECORDER_FILE with %r).
std::vector<std::string> dumpsOf(const std::string& pattern, int r) {
  std::string path = pattern;
  path.replace(path.find("%r"), 2, std::to_string(r));
  std::vector<std::string> lines;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) lines.push_back(line);
  return lines;
}

TEST_CASE("strataCommAbort dumps the flight recorder only when it cuts a call short", "[api]") {
  namespace fs = std::filesystem;
  const fs::path dir = fs::temp_directory_path() / ("strata-abort-dump-" + std::to_string(getpid()));
  fs::remove_all(dir);
  fs::create_directories(dir);
  const std::string pattern = (dir / "flight.%r.jsonl").string();
  ScopedEnv file("STRATA_FLIGHT_RECORDER_FILE", pattern.c_str());
  strataComm_t comms[2] = {};
  REQUIRE(strataCommInitAll(comms, 2, nullptr) == strataSuccess);
  // Both ranks finish an allreduce: a healthy, idle communicator.
  std::vector<std::thread> threads;
  std::vector<int> ok(2, 0);
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      std::vector<float> v(64, 1.0f);
      ok[r] = strataAllReduce(v.data(), v.data(), v.size(), strataFloat32, strataSum, comms[r],
                              nullptr) == strataSuccess && v[0] == 2.0f;
    });
  }
  for (std::thread& t : threads) t.join();
  REQUIRE(ok == std::vector<int>{1, 1});
  // Rank 0 issues an allreduce rank 1 never joins: still queued when aborted.
  std::vector<float> v(64, 1.0f);
  strataRequest_t req = nullptr;
  REQUIRE(strataIAllReduce(v.data(), v.data(), v.size(), strataFloat32, strataSum, comms[0],
                           &req) == strataSuccess);
  CHECK(strataCommAbort(comms[1]) == strataSuccess);
  CHECK(strataCommAbort(comms[0]) == strataSuccess);
  CHECK(strataWait(&req) != strataSuccess);
  CHECK(dumpsOf(pattern, 1).empty());  // idle and healthy: a normal teardown, nothing dumped
  const std::vector<std::string> dumped = dumpsOf(pattern, 0);
  REQUIRE(dumped.size() == 1);
  CHECK(dumped[0].find("\"reason\":\"strataCommAbort\"") != std::string::npos);
  CHECK(dumped[0].find("\"state\":\"issued\"") != std::string::npos);
  fs::remove_all(dir);
}

TEST_CASE("strataCommNoteNextCall: one call carries a library's note in its dump", "[api]") {
  namespace fs = std::filesystem;
  const fs::path path = fs::temp_directory_path() / ("strata-note-" + std::to_string(getpid()));
  fs::remove(path);
  ScopedEnv file("STRATA_FLIGHT_RECORDER_FILE", path.c_str());
  strataComm_t comm = nullptr;
  REQUIRE(strataCommInitAll(&comm, 1, nullptr) == strataSuccess);
  float x = 1.0f;
  auto allreduce = [&] {
    return strataAllReduce(&x, &x, 1, strataFloat32, strataSum, comm, nullptr) == strataSuccess;
  };
  CHECK(strataCommNoteNextCall(comm, "a library's own exchange") == strataSuccess);
  CHECK(allreduce());  // #1 takes the note
  CHECK(allreduce());  // #2 is the program's
  CHECK(strataCommNoteNextCall(comm, "cleared before use") == strataSuccess);
  CHECK(strataCommNoteNextCall(comm, nullptr) == strataSuccess);
  CHECK(allreduce());  // #3 is the program's
  CHECK(strataCommNoteNextCall(comm, std::string(201, 'x').c_str()) == strataInvalidArgument);
  CHECK(std::string(strataGetLastError(comm)).find("at most 200") != std::string::npos);
  CHECK(strataCommNoteNextCall(nullptr, "x") == strataInvalidArgument);
  REQUIRE(strataCommDump(comm) == strataSuccess);
  CHECK(strataCommDestroy(comm) == strataSuccess);
  std::ifstream in(path);
  std::string line;
  REQUIRE(std::getline(in, line));
  INFO(line);
  // The note is on the first call's record only.
  const nlohmann::json dump = nlohmann::json::parse(line);
  REQUIRE(dump["calls"].size() == 3);
  CHECK(dump["calls"][0].value("note", "") == "a library's own exchange");
  CHECK(!dump["calls"][1].contains("note"));
  CHECK(!dump["calls"][2].contains("note"));
  fs::remove(path);
}

}  // namespace
