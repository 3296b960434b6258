// Pipelined allreduces in the cost model and the planner: the overlap formula by hand, the
// planner's choice of piece under STRATA_PIPELINE_BYTES=auto, and the settings that pin it.
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

// 2 hosts x 2 ranks: 10 GB/s and 1 us inside a host (1e4 bytes per us), 1 GB/s and 10 us
// between hosts; the local reduction is not costed, so the numbers below are bytes and alphas.
Hierarchy twoByTwo() { return test::twoByTwo(); }

CostParams noReduce() {
  CostParams p;
  p.reduceGBps = 0;
  return p;
}

Plan twoLevel(size_t piece = 0) {
  Plan p;
  p.name = "two-level";
  p.stages = {Stage{{0}, "", Algorithm::kAuto, 0, std::nullopt},
              Stage{{1}, "", Algorithm::kAuto, piece, std::nullopt}};
  return p;
}

TEST_CASE("pipeline cost: overlapped pieces by hand", "[cost_model][pipeline]") {
  const Hierarchy h = twoByTwo();
  // 8e6 bytes in one piece: reduce-scatter@node 1 + 0.5 * 8e6 / 1e4 = 401, allreduce@network
  // over 4e6 between 2 members, with no reduction to cost: one message each way (rd,
  // 10 + 4e6 / 1e3 = 4010; the ring's two halves cost an alpha more), all-gather@node 401.
  const Prediction whole = predict(h, twoLevel(), 8e6, noReduce());
  CHECK(whole.pieces == 1);
  CHECK(whole.totalUs == Approx(4812));
  CHECK(whole.serialUs == Approx(4812));

  // Pieces of 2e6 (4 of them): per piece 101 + 1010 + 101; the node stages (L = 202) run
  // while the network stage (T = 1010) of the next piece is in flight:
  // L + T + 3 * max(T, L) = 202 + 1010 + 3030 = 4242, against 4 * 1212 = 4848 in series.
  const Prediction piped = predict(h, twoLevel(2000000), 8e6, noReduce());
  CHECK(piped.pieces == 4);
  CHECK(piped.pieceBytes == Approx(2e6));
  CHECK(piped.totalUs == Approx(4242));
  CHECK(piped.serialUs == Approx(4848));
  REQUIRE(piped.stages.size() == 3);
  CHECK(piped.stages[1].us == Approx(4040));  // the network stage, over all pieces
  CHECK(piped.stages[0].bytes == Approx(8e6));

  // STRATA_PIPELINE_BYTES's size stands in for a plan without its own piece; the plan's wins.
  CostParams fixed = noReduce();
  fixed.pipelineBytes = 2000000;
  CHECK(predict(h, twoLevel(), 8e6, fixed).totalUs == Approx(4242));
  CHECK(predict(h, twoLevel(8000000), 8e6, fixed).totalUs == Approx(4812));
}

TEST_CASE("pipeline cost: pieces that cannot overlap run one after another",
          "[cost_model][pipeline]") {
  const Hierarchy h = twoByTwo();
  // A ring top: the network stage is the whole call's reduce-scatter and all-gather.
  Plan ring = twoLevel(2000000);
  ring.stages.back().algorithm = Algorithm::kRing;
  CHECK_FALSE(piecesOverlap(ring));
  const Prediction p = predict(h, ring, 8e6, noReduce());
  CHECK(p.pieces == 4);
  CHECK(p.totalUs == Approx(p.serialUs));
  Plan ringWhole = ring;
  ringWhole.stages.back().chunkBytes = 0;
  CHECK(p.totalUs == Approx(4 * predict(h, ringWhole, 2e6, noReduce()).totalUs));
  // One stage: nothing to overlap with.
  Plan flat;
  flat.name = "flat-ring";
  flat.stages = {Stage{{0, 1}, "", Algorithm::kRing, 2000000, std::nullopt}};
  CHECK_FALSE(piecesOverlap(flat));
  CHECK(piecesOverlap(twoLevel()));
}

TEST_CASE("planner: STRATA_PIPELINE_BYTES=auto picks the cheapest piece", "[planner][pipeline]") {
  const Hierarchy h = twoByTwo();
  const CostParams autoParams = noReduce();  // pipelineBytes unset: auto
  const double bytes = 64e6;
  const Choice c = choosePlan(h, bytes, autoParams);
  const size_t piece = planPieceBytes(c.plan);
  REQUIRE(piece >= kMinPipelineBytes);
  CHECK(c.prediction.pieces > 1);
  // It is the best of the pieces tried, and better than no pieces.
  Plan plain = c.plan;
  plain.stages.back().chunkBytes = 0;
  const double serial = predict(h, plain, bytes, autoParams).totalUs;
  CHECK(c.prediction.totalUs < serial);
  for (size_t p = kMinPipelineBytes; p < bytes; p *= 2) {
    Plan q = plain;
    q.stages.back().chunkBytes = p;
    INFO("piece " << p);
    CHECK(c.prediction.totalUs <= predict(h, q, bytes, autoParams).totalUs);
  }
  // The prediction is the plan's own: predict() reads the piece back from the plan.
  CHECK(predict(h, c.plan, bytes, autoParams).totalUs == Approx(c.prediction.totalUs));

  // Off (0) or a fixed size: the planner sets no piece of its own.
  CostParams off = noReduce();
  off.pipelineBytes = 0;
  const Choice none = choosePlan(h, bytes, off);
  CHECK(planPieceBytes(none.plan) == 0);
  CHECK(none.prediction.pieces == 1);
  CostParams fixed = noReduce();
  fixed.pipelineBytes = size_t{4} << 20;
  const Choice pinned = choosePlan(h, bytes, fixed);
  CHECK(planPieceBytes(pinned.plan) == 0);
  CHECK(pinned.prediction.pieceBytes <= double(size_t{4} << 20));

  // Below two minimum pieces there is nothing to cut.
  CHECK(planPieceBytes(choosePlan(h, double(kMinPipelineBytes), autoParams).plan) == 0);
  CHECK(planPieceBytes(choosePlan(h, 4096, autoParams).plan) == 0);
}

TEST_CASE("planner: a plan's own piece is kept, and latency-bound pieces are not chosen",
          "[planner][pipeline]") {
  const Hierarchy h = twoByTwo();
  const Choice kept = choosePieces(h, twoLevel(3 << 20), 64e6, noReduce());
  CHECK(planPieceBytes(kept.plan) == size_t{3} << 20);
  // A network whose latency dwarfs the bytes: one piece is cheapest.
  auto slow = Hierarchy::regular(
      {Level("node", "mpi", LinkModel{LinkKind::kPcie, 10, 1, "test"}),
       Level("network", "mpi", LinkModel{LinkKind::kEthernet, 100, 100000, "test"})},
      {2, 2});
  REQUIRE(slow.isOk());
  CHECK(planPieceBytes(choosePieces(slow.value(), twoLevel(), 8e6, noReduce()).plan) == 0);
}

}  // namespace
}  // namespace strata::plan
