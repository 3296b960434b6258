// The unique-id entry points through the C API, in one process: argument errors, STRATA_COMM_ID
// and STRATA_SOCKET_IFNAME values refused with a message, strataCommInitAll's communicators
// reducing together, a nonblocking init polled to completion, and an abort that ends a
// nonblocking init that can never complete. Ranks are threads; the fabrics are real (shm, ucx).
#include <algorithm>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "common/test_env_util.h"
#include "strata/strata.h"

namespace {

using strata::test::ScopedEnv;

std::string lastError() { return strataGetLastError(nullptr); }

// Rank r of n: an allreduce of r + 1 over 1000 floats, true when every element is the sum.
bool sumIsRight(strataComm_t comm, int r, int n) {
  std::vector<float> v(1000, static_cast<float>(r + 1));
  if (strataAllReduce(v.data(), v.data(), v.size(), strataFloat32, strataSum, comm, nullptr) !=
      strataSuccess) {
    return false;
  }
  for (float x : v) {
    if (x != static_cast<float>(n * (n + 1) / 2)) return false;
  }
  return true;
}

}  // namespace

TEST_CASE("unique-id calls refuse bad arguments with a message", "[api][uid]") {
  CHECK(strataGetUniqueId(nullptr) == strataInvalidArgument);
  strataUniqueId id;
  std::memset(&id, 0, sizeof id);
  strataComm_t comm = nullptr;
  CHECK(strataCommInitRank(&comm, 2, id, 0) == strataInvalidArgument);
  CHECK(lastError().find("not one strataGetUniqueId") != std::string::npos);
  CHECK(strataCommInitRank(&comm, 0, id, 0) == strataInvalidArgument);
  CHECK(lastError().find("nranks 0") != std::string::npos);
  CHECK(strataCommInitRank(&comm, 2, id, 2) == strataInvalidArgument);
  CHECK(lastError().find("rank 2 is outside [0, 2)") != std::string::npos);
  CHECK(strataCommInitRank(nullptr, 2, id, 0) == strataInvalidArgument);
  strataConfig_t config;
  std::memset(&config, 0, sizeof config);
  REQUIRE(strataGetUniqueId(&id) == strataSuccess);
  CHECK(strataCommInitRankConfig(&comm, 1, id, 0, &config) == strataInvalidArgument);
  CHECK(lastError().find("STRATA_CONFIG_INITIALIZER") != std::string::npos);
  CHECK(comm == nullptr);
  CHECK(strataCommInitAll(nullptr, 2, nullptr) == strataInvalidArgument);
}

TEST_CASE("malformed STRATA_COMM_ID and STRATA_SOCKET_IFNAME are refused", "[api][uid]") {
  strataUniqueId id;
  {
    ScopedEnv commId("STRATA_COMM_ID", "no-port-here");
    CHECK(strataGetUniqueId(&id) == strataInvalidArgument);
    CHECK(lastError().find("STRATA_COMM_ID=") != std::string::npos);
  }
  {
    ScopedEnv ifname("STRATA_SOCKET_IFNAME", "=no_such_if0");
    CHECK(strataGetUniqueId(&id) == strataInvalidArgument);
    CHECK(lastError().find("matches no interface") != std::string::npos);
    // The interfaces it lists, each once (getifaddrs lists one per address).
    const std::string err = lastError();
    const size_t at = err.find("this host has: ");
    REQUIRE(at != std::string::npos);
    std::vector<std::string> names;
    std::string rest = err.substr(at + 15);
    for (size_t comma; (comma = rest.find(", ")) != std::string::npos; rest = rest.substr(comma + 2)) {
      names.push_back(rest.substr(0, comma));
    }
    names.push_back(rest);
    INFO(err);
    CHECK(std::find(names.begin(), names.end(), "lo") != names.end());
    std::sort(names.begin(), names.end());
    CHECK(std::adjacent_find(names.begin(), names.end()) == names.end());
  }
  {
    ScopedEnv ifname("STRATA_SOCKET_IFNAME", "eth 0");
    CHECK(strataGetUniqueId(&id) == strataInvalidArgument);
  }
  {
    // A valid one: every rank forms the same id, without a root until rank 0 joins.
    ScopedEnv commId("STRATA_COMM_ID", "127.0.0.1:29999");
    strataUniqueId a, b;
    REQUIRE(strataGetUniqueId(&a) == strataSuccess);
    REQUIRE(strataGetUniqueId(&b) == strataSuccess);
    CHECK(std::memcmp(&a, &b, sizeof a) == 0);
  }
}

TEST_CASE("strataCommInitAll: one process, three ranks that reduce together", "[api][uid]") {
  strataComm_t comms[3] = {};
  REQUIRE(strataCommInitAll(comms, 3, nullptr) == strataSuccess);
  std::vector<int> ok(3, 0), ranks(3, -1);
  std::vector<std::thread> threads;
  for (int i = 0; i < 3; ++i) {
    threads.emplace_back([&, i] {
      strataCommUserRank(comms[i], &ranks[i]);
      ok[i] = sumIsRight(comms[i], i, 3) ? 1 : 0;
    });
  }
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < 3; ++i) {
    CHECK(ranks[i] == i);
    CHECK(ok[i] == 1);
  }
  threads.clear();
  for (int i = 0; i < 3; ++i) {
    threads.emplace_back([&, i] { ok[i] = strataCommDestroy(comms[i]) == strataSuccess; });
  }
  for (std::thread& t : threads) t.join();
  for (int i = 0; i < 3; ++i) CHECK(ok[i] == 1);
}

TEST_CASE("a nonblocking init completes in the background", "[api][uid]") {
  strataUniqueId id;
  REQUIRE(strataGetUniqueId(&id) == strataSuccess);
  std::vector<int> started(2, -1), state(2, -1), summed(2, 0);
  std::vector<std::thread> threads;
  for (int r = 0; r < 2; ++r) {
    threads.emplace_back([&, r] {
      strataConfig_t config = STRATA_CONFIG_INITIALIZER;
      config.blocking = 0;
      config.timeoutMs = 30000;
      strataComm_t comm = nullptr;
      started[r] = strataCommInitRankConfig(&comm, 2, id, r, &config);
      if (comm == nullptr) return;
      // Other calls say "in progress" until it is done (or ready at once, when it already is).
      int count = 0;
      const strataResult_t early = strataCommCount(comm, &count);
      if (early != strataSuccess && early != strataInProgress) return;
      strataResult_t s = strataInProgress;
      const auto until = std::chrono::steady_clock::now() + std::chrono::seconds(30);
      while (s == strataInProgress && std::chrono::steady_clock::now() < until) {
        if (strataCommGetAsyncError(comm, &s) != strataSuccess) break;
        std::this_thread::sleep_for(std::chrono::milliseconds(5));
      }
      state[r] = s;
      if (s == strataSuccess) summed[r] = sumIsRight(comm, r, 2) ? 1 : 0;
      strataCommDestroy(comm);
    });
  }
  for (std::thread& t : threads) t.join();
  for (int r = 0; r < 2; ++r) {
    CHECK(started[r] == strataInProgress);
    CHECK(state[r] == strataSuccess);
    CHECK(summed[r] == 1);
  }
}

TEST_CASE("strataCommAbort ends a nonblocking init that cannot complete", "[api][uid]") {
  strataUniqueId id;
  REQUIRE(strataGetUniqueId(&id) == strataSuccess);
  strataConfig_t config = STRATA_CONFIG_INITIALIZER;
  config.blocking = 0;
  config.timeoutMs = 600000;  // the abort, not the deadline, must end it
  strataComm_t comm = nullptr;
  REQUIRE(strataCommInitRankConfig(&comm, 2, id, 0, &config) == strataInProgress);
  std::this_thread::sleep_for(std::chrono::milliseconds(100));
  strataResult_t s = strataSuccess;
  REQUIRE(strataCommGetAsyncError(comm, &s) == strataSuccess);
  CHECK(s == strataInProgress);  // rank 1 never comes
  const auto start = std::chrono::steady_clock::now();
  CHECK(strataCommAbort(comm) == strataSuccess);
  CHECK(std::chrono::steady_clock::now() - start < std::chrono::seconds(5));
  CHECK(strataCommGetAsyncError(comm, &s) == strataInvalidArgument);  // the handle is gone
}
