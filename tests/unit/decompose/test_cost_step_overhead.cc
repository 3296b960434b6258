// The cost model's step overhead (CostParams::stepOverheadUs): a fixed cost per communication
// step, counted once per alpha of every formula, and nothing when it is 0.
#include <catch2/catch.hpp>
#include <string>
#include <utility>
#include <vector>

#include "cost_fixtures.h"
#include "decompose/cost_model.h"
#include "decompose/plan.h"
#include "decompose/planner.h"
#include "topology/hierarchy.h"

namespace strata::plan {
namespace {

using topo::Hierarchy;
using topo::Level;
using topo::LinkKind;
using topo::LinkModel;

// node: 10 GB/s and 2 us; network: 1 GB/s and 20 us.
Hierarchy twoByTwo() { return test::twoByTwo(1, 10, 2.0, 1, 20.0); }

Plan staged(std::vector<std::vector<int>> levels, Algorithm top = Algorithm::kRing) {
  Plan p;
  p.name = "staged";
  for (auto& l : levels) {
    Stage s;
    s.levels = std::move(l);
    p.stages.push_back(s);
  }
  p.stages.back().algorithm = top;
  return p;
}

CostParams withOverhead(double o) {
  CostParams p;
  p.reduceGBps = 0;
  p.stepOverheadUs = o;
  return p;
}

TEST_CASE("step overhead: counted once per step of each stage", "[cost_model]") {
  const Hierarchy h = twoByTwo();
  const double bytes = 1 << 20;
  // reduce_scatter@node (1 step), allreduce@network as a ring (2 steps), all_gather@node (1).
  const Plan twoLevel = staged({{0}, {1}});
  const double base = predict(h, twoLevel, bytes, withOverhead(0)).totalUs;
  CHECK(predict(h, twoLevel, bytes, withOverhead(5)).totalUs == Approx(base + 4 * 5));
  // One ring over all four ranks: 3 steps each way.
  const Plan flat = staged({{0, 1}});
  const double flatBase = predict(h, flat, bytes, withOverhead(0)).totalUs;
  CHECK(predict(h, flat, bytes, withOverhead(7)).totalUs == Approx(flatBase + 6 * 7));
}

TEST_CASE("step overhead: the shm barrier counts two steps", "[cost_model]") {
  auto hs = Hierarchy::regular(
      {Level("node", "x", LinkModel{LinkKind::kSharedMemory, 10, 0.3, "test"})}, {4});
  REQUIRE(hs.isOk());
  FabricTraits slots;  // costed by the shm fabric's shared-slot formulas
  slots.name = "x";
  slots.cost = CostStyle::kSharedSlots;
  CostParams p0 = withOverhead(0), p1 = withOverhead(3);
  p0.fabrics = p1.fabrics = {slots};
  const Plan one = staged({{0}}, Algorithm::kAuto);
  // Up to 16 KiB: one barrier; above: two.
  CHECK(predict(hs.value(), one, 4096, p1).totalUs ==
        Approx(predict(hs.value(), one, 4096, p0).totalUs + 2 * 3));
  CHECK(predict(hs.value(), one, 1 << 20, p1).totalUs ==
        Approx(predict(hs.value(), one, 1 << 20, p0).totalUs + 4 * 3));
}

TEST_CASE("step overhead: 0 changes nothing and more steps pay more", "[cost_model]") {
  const Hierarchy h = twoByTwo();
  CostParams p;  // the default: no step overhead
  CHECK(p.stepOverheadUs == 0);
  for (const Plan& plan : candidatePlans(h, p)) {
    for (double bytes : {8.0, 65536.0, 16e6}) {
      const double base = predict(h, plan, bytes, p).totalUs;
      CostParams q = p;
      q.stepOverheadUs = 10;
      CHECK(predict(h, plan, bytes, q).totalUs > base);
    }
  }
}

}  // namespace
}  // namespace strata::plan
