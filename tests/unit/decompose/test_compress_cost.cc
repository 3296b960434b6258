// The cost model knows compression (cost_model.h): a stage whose groups span hosts under
// STRATA_COMPRESS, or with its own `wire`, is costed on half the bytes plus its conversions
// and, for fp16, the scale's 4-byte allreduce. Hand-worked on a 2 x 2 hierarchy.
#include <catch2/catch.hpp>
#include <string>
#include <vector>

#include "cost_fixtures.h"
#include "decompose/cost_model.h"
#include "decompose/plan.h"
#include "topology/hierarchy.h"

namespace strata::plan {
namespace {

// node: PCIe 10 GB/s, 1 us (beta 1e-4 us/B); network: Ethernet 1 GB/s, 10 us (beta 1e-3).
using test::twoByTwo;

Plan twoLevel() {
  Plan p;
  p.name = "two-level";
  Stage node, net;
  node.levels = {0};
  net.levels = {1};
  p.stages = {node, net};
  return p;
}

CostParams params(WireType compress) {
  CostParams c;
  c.reduceGBps = 10;  // gamma: 1e-4 us per byte combined
  c.compress = compress;
  c.pipelineBytes = 0;
  return c;
}

const StageCost& stage(const Prediction& p, const std::string& label) {
  for (const StageCost& s : p.stages) {
    if (s.label == label) return s;
  }
  FAIL("no stage " << label);
  return p.stages.front();
}

}  // namespace

TEST_CASE("cost model: compression halves the bytes of the stages that span hosts",
          "[cost_model][compress]") {
  const topo::Hierarchy h = twoByTwo();
  const double n = 1e6;  // the network stage gets each rank's half: 5e5 bytes
  const Prediction plain = predict(h, twoLevel(), n, params(WireType::kNone));
  const Prediction fp16 = predict(h, twoLevel(), n, params(WireType::kFp16));
  const Prediction bf16 = predict(h, twoLevel(), n, params(WireType::kBf16));

  // Uncompressed: a ring over 2 on 5e5 bytes: 2 x 10 + 2 x 0.5 x 5e5 x 1e-3 + 0.5 x 5e5 x 1e-4
  // = 545 us (halving-doubling ties it; the ring is kept).
  CHECK(stage(plain, "allreduce@network").us == Approx(545));
  CHECK(stage(plain, "allreduce@network").wire.empty());
  // bf16: the same ring on 2.5e5 bytes, 20 + 250 + 12.5 = 282.5, plus the conversions of the
  // 5e5 float32 bytes, 1.5 x 5e5 x 1e-4 = 75: 357.5 us.
  CHECK(stage(bf16, "allreduce@network").us == Approx(357.5));
  CHECK(stage(bf16, "allreduce@network").wire == "bf16");
  CHECK(stage(bf16, "allreduce@network").bytesMoved == Approx(2.5e5));
  // fp16 also agrees on a scale: a 4-byte allreduce over 2, recursive doubling's one round
  // 10 + 4e-3 + 4 x 1e-4 = 10.0044 us.
  CHECK(stage(fp16, "allreduce@network").us == Approx(357.5 + 10.0044));
  // The stages inside a node stay float32.
  for (const char* label : {"reduce_scatter@node", "all_gather@node"}) {
    CHECK(stage(fp16, label).us == Approx(stage(plain, label).us));
    CHECK(stage(fp16, label).wire.empty());
  }
  CHECK(fp16.totalUs < plain.totalUs);
}

TEST_CASE("cost model: a stage's own wire wins over STRATA_COMPRESS", "[cost_model][compress]") {
  const topo::Hierarchy h = twoByTwo();
  Plan p = twoLevel();
  p.stages[1].wire = WireType::kNone;  // wire: none on the network stage
  p.stages[0].wire = WireType::kBf16;  // and bf16 inside the node
  const Prediction pred = predict(h, p, 1e6, params(WireType::kFp16));
  CHECK(stage(pred, "allreduce@network").us == Approx(545));
  // The node's reduce-scatter on 1e6 bytes as bf16: (2-1) x 1 + 0.5 x 5e5 x 1e-4 + 0.5 x 5e5 x
  // 1e-4 = 1 + 25 + 25 = 51, plus conversions 1.5 x 1e6 x 1e-4 = 150: 201 us.
  CHECK(stage(pred, "reduce_scatter@node").us == Approx(201));
  CHECK(stage(pred, "reduce_scatter@node").wire == "bf16");
}

TEST_CASE("cost model: without link kinds the top level is the one between hosts",
          "[cost_model][compress]") {
  auto h = topo::Hierarchy::regular(
      {topo::Level("node", "mpi", topo::LinkModel{topo::LinkKind::kUnknown, 10, 1, "test"}),
       topo::Level("network", "mpi", topo::LinkModel{topo::LinkKind::kUnknown, 1, 10, "test"})},
      {2, 2});
  REQUIRE(h.isOk());
  const Prediction pred = predict(h.value(), twoLevel(), 1e6, params(WireType::kBf16));
  CHECK(stage(pred, "allreduce@network").wire == "bf16");
  CHECK(stage(pred, "reduce_scatter@node").wire.empty());
}

}  // namespace strata::plan
