// The node descriptions ranks exchange at init: what the reader refuses.
#include <catch2/catch.hpp>

#include "topology/topo_json.h"

namespace strata::topo {

TEST_CASE("node topology json: integers that do not fit are refused, not converted", "[topo]") {
  // Found by the topo_json fuzzer: json::value() converted 3.3e22 to int (undefined behaviour).
  const auto huge = nodeTopologyFromJson(R"({"cores": 12, "numa_nodes": 33333333333333333333333})");
  REQUIRE_FALSE(huge.isOk());
  CHECK_THAT(huge.status().message(), Catch::Contains("numa_nodes"));
  const auto fraction = nodeTopologyFromJson(R"({"cores": 1.5})");
  REQUIRE_FALSE(fraction.isOk());
  CHECK_THAT(fraction.status().message(), Catch::Contains("'cores' must be an integer"));
  const auto big = nodeTopologyFromJson(R"({"cores": 4294967296})");
  REQUIRE_FALSE(big.isOk());
  CHECK_THAT(big.status().message(), Catch::Contains("out of range"));
}

TEST_CASE("node topology json: a description reads back as written", "[topo]") {
  const auto t = nodeTopologyFromJson(R"({"host": "a", "cores": 12, "packages": 2})");
  REQUIRE(t.isOk());
  CHECK(t.value().cores == 12);
  CHECK(t.value().packages == 2);
  const auto again = nodeTopologyFromJson(toJson(t.value()).dump());
  REQUIRE(again.isOk());
  CHECK(again.value().host == "a");
  CHECK(again.value().cores == 12);
}

}  // namespace strata::topo
