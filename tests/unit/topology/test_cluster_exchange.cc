// The cluster exchange (topology/cluster_exchange.h) over an in-process stand-in for a control
// plane: each rank a thread, the two all-gathers a shared table behind a barrier.
#include <catch2/catch.hpp>
#include <condition_variable>
#include <cstring>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "topology/cluster_exchange.h"

using namespace strata;        // NOLINT: test file
using namespace strata::topo;  // NOLINT: test file

namespace {

// Every member's contribution, visible to all once each has given one.
class FakeWorld {
 public:
  explicit FakeWorld(int size) : slots_(size) {}

  std::vector<std::string> allGather(int rank, const std::string& mine) {
    std::unique_lock<std::mutex> lock(mu_);
    // Wait until the previous round has been read by everyone before overwriting its slots.
    cv_.wait(lock, [&] { return reading_ == 0; });
    slots_[rank] = mine;
    const long round = round_;
    if (++arrived_ == static_cast<int>(slots_.size())) {
      arrived_ = 0;
      reading_ = static_cast<int>(slots_.size());
      ++round_;
      cv_.notify_all();
    } else {
      cv_.wait(lock, [&] { return round_ != round; });
    }
    std::vector<std::string> all = slots_;
    if (--reading_ == 0) cv_.notify_all();
    return all;
  }

 private:
  std::mutex mu_;
  std::condition_variable cv_;
  std::vector<std::string> slots_;
  int arrived_ = 0;
  int reading_ = 0;
  long round_ = 0;
};

StatusOr<GatheredCluster> exchangeOn(FakeWorld& world, int rank, int size, const std::string& host,
                                     const LocalNode& node) {
  return exchangeCluster(
      rank, size, host, node,
      [&](const void* mine, void* all, size_t bytes) {
        const std::vector<std::string> got =
            world.allGather(rank, std::string(static_cast<const char*>(mine), bytes));
        for (size_t r = 0; r < got.size(); ++r) {
          std::memcpy(static_cast<char*>(all) + r * bytes, got[r].data(), bytes);
        }
        return Status::ok();
      },
      [&](const std::string& mine) -> StatusOr<std::vector<std::string>> {
        return world.allGather(rank, mine);
      });
}

LocalNode nodeOf(const std::string& host, int package, int packages) {
  LocalNode n;
  n.topo.host = host;
  n.topo.source = "test";
  n.topo.packages = packages;
  n.package = package;
  return n;
}

}  // namespace

TEST_CASE("cluster exchange: places by rank, each host described by its lowest rank",
          "[cluster_exchange]") {
  // Ranks 0 and 2 on host a, rank 1 on host b; each node says which rank described it.
  const std::vector<std::string> hosts = {"a", "b", "a"};
  std::vector<LocalNode> nodes;
  for (int r = 0; r < 3; ++r) nodes.push_back(nodeOf(hosts[r], r, 10 + r));
  nodes[1].problems.push_back({NodeProblem::Source::kCuda, "no driver"});
  nodes[2].problems.push_back({NodeProblem::Source::kHwloc, "not the describer"});

  FakeWorld world(3);
  std::vector<StatusOr<GatheredCluster>> out(3, StatusOr<GatheredCluster>(internalError("unset")));
  std::vector<std::thread> threads;
  for (int r = 0; r < 3; ++r) {
    threads.emplace_back([&, r] { out[r] = exchangeOn(world, r, 3, hosts[r], nodes[r]); });
  }
  for (std::thread& t : threads) t.join();

  for (int r = 0; r < 3; ++r) {
    INFO("rank " << r);
    REQUIRE(out[r].isOk());
    const GatheredCluster& g = out[r].value();
    CHECK(g.hosts == std::vector<std::string>{"a", "b"});
    REQUIRE(g.cluster.ranks.size() == 3);
    for (int p = 0; p < 3; ++p) {
      CHECK(g.cluster.ranks[p].host == hosts[p]);
      CHECK(g.cluster.ranks[p].package == p);
      CHECK(g.cluster.ranks[p].gpuBusid.empty());
    }
    REQUIRE(g.cluster.hosts.size() == 2);
    CHECK(g.cluster.hosts.at("a").packages == 10);  // rank 0's, not rank 2's
    CHECK(g.cluster.hosts.at("b").packages == 11);
    CHECK(g.cluster.hosts.at("b").source == "test");
    // Only a describing rank's problems travel: rank 2's stay with it.
    REQUIRE(g.problems.size() == 1);
    REQUIRE(g.problems.at("b").size() == 1);
    CHECK(g.problems.at("b")[0].source == NodeProblem::Source::kCuda);
    CHECK(g.problems.at("b")[0].message == "no driver");
  }
}

TEST_CASE("cluster exchange: one rank, and a failing collective", "[cluster_exchange]") {
  FakeWorld world(1);
  StatusOr<GatheredCluster> one = exchangeOn(world, 0, 1, "solo", nodeOf("solo", -1, 2));
  REQUIRE(one.isOk());
  CHECK(one.value().hosts == std::vector<std::string>{"solo"});
  CHECK(one.value().cluster.ranks[0].package == -1);
  CHECK(one.value().cluster.hosts.at("solo").packages == 2);
  CHECK(one.value().problems.empty());

  // A failure of the control plane comes back as it is.
  StatusOr<GatheredCluster> failed = exchangeCluster(
      0, 1, "solo", nodeOf("solo", -1, 2),
      [](const void*, void*, size_t) { return Status(Code::kRemoteError, "peer gone"); },
      [](const std::string&) -> StatusOr<std::vector<std::string>> {
        return std::vector<std::string>{};
      });
  REQUIRE_FALSE(failed.isOk());
  CHECK(failed.status().message() == "peer gone");

  // A description that does not parse names its host and rank.
  StatusOr<GatheredCluster> garbled = exchangeCluster(
      0, 1, "solo", nodeOf("solo", -1, 2),
      [](const void* mine, void* all, size_t bytes) {
        std::memcpy(all, mine, bytes);
        return Status::ok();
      },
      [](const std::string&) -> StatusOr<std::vector<std::string>> {
        return std::vector<std::string>{"{not json"};
      });
  REQUIRE_FALSE(garbled.isOk());
  CHECK_THAT(garbled.status().message(),
             Catch::Matchers::Contains("description of host solo (rank 0)"));
}
