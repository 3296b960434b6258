// core/fusion.h: how a group's calls are cut into packs. The cut must depend on the call
// sequence only, so these tests state it exactly.
#include <catch2/catch.hpp>

#include "core/fusion.h"

namespace strata::core {
namespace {

Call allreduce(size_t count, strataDataType_t type = strataFloat32, strataRedOp_t op = strataSum) {
  Call k;
  k.coll = Collective::kAllReduce;
  k.count = count;
  k.type = type;
  k.op = op;
  return k;
}

Call other(Collective coll, size_t count = 10) {
  Call k = allreduce(count);
  k.coll = coll;
  return k;
}

std::vector<std::vector<size_t>> membersOf(const std::vector<FusionUnit>& units) {
  std::vector<std::vector<size_t>> out;
  for (const FusionUnit& u : units) out.push_back(u.members);
  return out;
}

using Members = std::vector<std::vector<size_t>>;

TEST_CASE("fusion packs a group's small allreduces up to the limit", "[fusion]") {
  // 100 floats = 400 bytes each; a 1000-byte limit holds two of them.
  const std::vector<Call> calls(5, allreduce(100));
  const std::vector<FusionUnit> units = fusePlan(calls, 1000);
  CHECK(membersOf(units) == Members{{0, 1}, {2, 3}, {4}});
  CHECK(units[0].bytes == 800);
  CHECK(units[0].pack());
  CHECK_FALSE(units[2].pack());
  // Exactly the limit still fits.
  CHECK(membersOf(fusePlan(calls, 800)) == Members{{0, 1}, {2, 3}, {4}});
  CHECK(membersOf(fusePlan(calls, 799)) == Members{{0}, {1}, {2}, {3}, {4}});
}

TEST_CASE("fusion never mixes types or ops, and keeps one open pack per pair", "[fusion]") {
  const std::vector<Call> calls = {
      allreduce(10), allreduce(10, strataFloat16), allreduce(10, strataFloat32, strataMax),
      allreduce(10), allreduce(10, strataFloat16), allreduce(10, strataFloat32, strataMax),
  };
  CHECK(membersOf(fusePlan(calls, 1 << 20)) == Members{{0, 3}, {1, 4}, {2, 5}});
}

TEST_CASE("a tensor of the limit or more runs alone, and leaves the open pack open", "[fusion]") {
  const std::vector<Call> calls = {allreduce(10), allreduce(1000), allreduce(10)};
  // 1000 floats = 4000 bytes: at the limit, so alone.
  CHECK(membersOf(fusePlan(calls, 4000)) == Members{{0, 2}, {1}});
  // Just over it, the large one is packable but fills a pack of its own.
  CHECK(membersOf(fusePlan(calls, 4001)) == Members{{0}, {1}, {2}});
  CHECK(membersOf(fusePlan(calls, 5000)) == Members{{0, 1, 2}});
}

TEST_CASE("other collectives and empty allreduces close the packs before them", "[fusion]") {
  const std::vector<Call> calls = {
      allreduce(10),  allreduce(10),
      other(Collective::kBroadcast), allreduce(10),
      allreduce(0),   allreduce(10),
      other(Collective::kSend),      allreduce(10),
  };
  CHECK(membersOf(fusePlan(calls, 1 << 20)) == Members{{0, 1}, {2}, {3}, {4}, {5}, {6}, {7}});
}

TEST_CASE("fusion off, or a limit smaller than every tensor, keeps every call alone", "[fusion]") {
  const std::vector<Call> calls = {allreduce(1, strataUint8), allreduce(3), allreduce(7)};
  const Members alone{{0}, {1}, {2}};
  CHECK(membersOf(fusePlan(calls, 0)) == alone);
  CHECK(membersOf(fusePlan(calls, 1)) == alone);
  CHECK(fusePlan({}, 1 << 20).empty());
}

TEST_CASE("the cut is a function of the calls alone", "[fusion]") {
  // Buffers differ between ranks; the packs must not.
  std::vector<Call> a(7, allreduce(100)), b = a;
  static float x[1], y[1];
  for (Call& k : a) k.send = k.recv = x;
  for (Call& k : b) k.send = k.recv = y;
  CHECK(membersOf(fusePlan(a, 1200)) == membersOf(fusePlan(b, 1200)));
}

}  // namespace
}  // namespace strata::core
