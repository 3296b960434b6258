// core/route.h: which part of a device program the caller's stream carries and which needs a
// host thread, decided from whether each group's device fabric is stream-ordered.
#include <catch2/catch.hpp>

#include <vector>

#include "core/route.h"

namespace {

using strata::core::Buf;
using strata::core::Instr;
using strata::core::LevelGroup;
using strata::core::Op;
using strata::core::Program;

struct Groups {
  LevelGroup nccl, staged;  // their device fabrics: stream-ordered, not
  Groups() {
    nccl.fabricName = "nccl";
    staged.fabricName = "staged";
  }
  bool streamOrdered(const LevelGroup& g) const { return &g == &nccl; }
};

Instr step(LevelGroup& g, const strata::plan::Step* s = nullptr, int index = 1, int total = 1) {
  Instr x;
  x.op = Op::kStep;
  x.group = &g;
  x.step = s;
  x.index = index;
  x.total = total;
  return x;
}

Instr plain(Op op) {
  Instr x;
  x.op = op;
  x.in = {Buf::kSend, 0};
  x.work = {Buf::kRecv, 0};
  return x;
}

Program routed(const Groups& g, std::vector<Instr> code) {
  Program p;
  p.code = std::move(code);
  strata::core::routeProgram(p, [&](const LevelGroup& x) { return g.streamOrdered(x); });
  return p;
}

// "S0-2 H2-3 S3-5": each segment's place and range.
std::string segments(const Program& p) {
  std::string s;
  for (const Program::Segment& seg : p.segments) {
    if (!s.empty()) s += ' ';
    s += (seg.host ? "H" : "S") + std::to_string(seg.begin) + "-" + std::to_string(seg.end);
  }
  return s;
}

}  // namespace

TEST_CASE("route: a program on stream-ordered fabrics and copies is carried by the stream") {
  Groups g;
  const Program p = routed(g, {plain(Op::kCopy), step(g.nccl), plain(Op::kDivide)});
  CHECK(p.route == Program::Route::kStream);
  CHECK(segments(p) == "S0-3");
  CHECK(strata::core::hasStreamSteps(p));
  CHECK(strata::core::firstHostStage(p).empty());
  // One rank: a copy only.
  const Program copy = routed(g, {plain(Op::kCopy)});
  CHECK(copy.route == Program::Route::kStream);
  CHECK(!strata::core::hasStreamSteps(copy));
}

TEST_CASE("route: a mixed plan's host stage is joined between its stream parts, and named") {
  Groups g;
  strata::plan::Step ar;
  ar.kind = strata::Collective::kAllReduce;
  ar.level = 1;
  // copy, reduce-scatter (nccl), allreduce (staged), divide, all-gather (nccl)
  const Program p = routed(g, {plain(Op::kCopy), step(g.nccl, nullptr, 1, 3),
                               step(g.staged, &ar, 2, 3), plain(Op::kDivide),
                               step(g.nccl, nullptr, 3, 3)});
  CHECK(p.route == Program::Route::kJoined);
  CHECK(segments(p) == "S0-2 H2-3 S3-5");  // the division goes with the stream after
  CHECK(strata::core::firstHostStage(p) == "step 2 of 3 (allreduce at level 1, fabric staged)");
}

TEST_CASE("route: copies between two host stages join them, not the stream") {
  Groups g;
  const Program p = routed(g, {plain(Op::kCopy), step(g.staged), plain(Op::kCopy),
                               plain(Op::kCopy), step(g.staged), plain(Op::kDivide)});
  CHECK(p.route == Program::Route::kJoined);
  CHECK(segments(p) == "S0-1 H1-5 S5-6");  // one gate for both host stages
  CHECK(!strata::core::hasStreamSteps(p));
}

TEST_CASE("route: a send on a host fabric is a host stage; on nccl the stream's") {
  Groups g;
  Instr peer = plain(Op::kPeer);
  peer.group = &g.staged;
  const Program host = routed(g, {peer});
  CHECK(host.route == Program::Route::kJoined);
  CHECK(strata::core::firstHostStage(host) == "its send or receive (fabric staged)");
  peer.group = &g.nccl;
  CHECK(routed(g, {peer}).route == Program::Route::kStream);
}

TEST_CASE("route: a wait runs where its allreduce was started") {
  Groups g;
  Instr start = step(g.staged);
  start.op = Op::kStart;
  const Program p = routed(g, {start, step(g.nccl), plain(Op::kWait)});
  CHECK(segments(p) == "H0-1 S1-2 H2-3");
  start.group = &g.nccl;
  CHECK(segments(routed(g, {start, step(g.staged), plain(Op::kWait)})) == "S0-1 H1-2 S2-3");
}

TEST_CASE("route: a program with no instruction has no segment") {
  Groups g;
  const Program p = routed(g, {});
  CHECK(p.route == Program::Route::kStream);
  CHECK(p.segments.empty());
}
