// The flight recorder (core/flight_recorder.h): a bounded ring of the last calls, their states
// and steps, and the summary a dump logs without a file.
#include <catch2/catch.hpp>
#include <vector>

#include "core/flight_dump.h"
#include "core/flight_recorder.h"

namespace strata::core {
namespace {

Call allreduce(uint64_t seq, size_t count) {
  Call c;
  c.coll = Collective::kAllReduce;
  c.seq = seq;
  c.count = count;
  return c;
}

TEST_CASE("flight recorder: states, steps and times of the calls it holds", "[core]") {
  FlightRecorder fr(4);
  const uint64_t a = fr.issued(allreduce(1, 10)), b = fr.issued(allreduce(2, 20));
  CHECK(a == 1);
  CHECK(b == 2);
  fr.started(a);
  fr.step(1, 3, Collective::kReduceScatter, 0);
  fr.finished(a, Status::ok());
  fr.started(b);
  fr.step(2, 3, Collective::kAllReduce, 1);
  fr.finished(b, Status(Code::kRemoteError, "timed out"));
  const std::vector<FlightRecord> got = fr.snapshot();
  REQUIRE(got.size() == 2);
  CHECK(got[0].state == FlightRecord::State::kDone);
  CHECK(got[0].step == 1);
  CHECK(got[1].state == FlightRecord::State::kFailed);
  CHECK(got[1].error == "timed out");
  CHECK(got[1].step == 2);
  CHECK(got[1].steps == 3);
  CHECK(got[1].stepKind == Collective::kAllReduce);
  CHECK(got[1].stepLevel == 1);
  CHECK(got[1].issuedUs > 0);
  CHECK(got[1].startedUs >= got[1].issuedUs);
  CHECK(got[1].endedUs >= got[1].startedUs);
  const std::string text = flightSummary(got, 8);
  CHECK_THAT(text, Catch::Matchers::Contains("allreduce #1 (10 float32): done"));
  CHECK_THAT(text, Catch::Matchers::Contains(
                       "allreduce #2 (20 float32): failed at step 2 of 3 (allreduce at level 1)"));
}

TEST_CASE("flight recorder: keeps the newest calls; steps go to the running one", "[core]") {
  FlightRecorder fr(3);
  std::vector<uint64_t> ids;
  for (uint64_t s = 1; s <= 5; ++s) ids.push_back(fr.issued(allreduce(s, s)));
  // The first two were overwritten: updating them changes nothing.
  fr.started(ids[0]);
  fr.finished(ids[0], Status::ok());
  fr.started(ids[3]);
  fr.step(1, 2, Collective::kAllGather, -1);
  const std::vector<FlightRecord> got = fr.snapshot();
  REQUIRE(got.size() == 3);
  CHECK(got[0].seq == 3);
  CHECK(got[1].seq == 4);
  CHECK(got[2].seq == 5);
  CHECK(got[0].state == FlightRecord::State::kIssued);
  CHECK(got[1].state == FlightRecord::State::kRunning);
  CHECK(got[1].steps == 2);
  CHECK(got[2].steps == 0);
  CHECK_THAT(flightSummary(got, 1), Catch::Matchers::Equals("allreduce #5 (5 float32): issued"));
  CHECK_THAT(flightSummary(got, 8),
             Catch::Matchers::Contains("running at step 1 of 2 (allgather at the flat group)"));
}

TEST_CASE("flight recorder: size 0 records nothing", "[core]") {
  FlightRecorder fr(0);
  CHECK_FALSE(fr.on());
  CHECK(fr.issued(allreduce(1, 1)) == 0);
  fr.started(0);
  fr.step(1, 1, Collective::kAllReduce, 0);
  fr.finished(0, Status::ok());
  CHECK(fr.snapshot().empty());
  CHECK(flightSummary(fr.snapshot(), 8) == "no calls recorded");
}

}  // namespace
}  // namespace strata::core
