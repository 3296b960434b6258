// The deadline facility (common/deadline.h): reading STRATA_TIMEOUT, scopes that nest (the
// earlier deadline wins, and leaving a scope restores the outer one), the cancel flag, and the
// message of an expired wait.
#include <catch2/catch.hpp>
#include <chrono>
#include <string>
#include <thread>

#include "common/deadline.h"
#include "common/test_env_util.h"

namespace {

using strata::deadline::Poll;
using strata::deadline::Scope;

}  // namespace

TEST_CASE("STRATA_TIMEOUT is read as a duration, a malformed one gives the default here",
          "[deadline]") {
  // The grammar itself is tested in test_units.cc, the refusal at init in test_settings.cc.
  {
    strata::test::ScopedEnv timeout("STRATA_TIMEOUT", "0.25");
    CHECK(strata::deadline::configuredSeconds() == 0.25);
  }
  {
    strata::test::ScopedEnv timeout("STRATA_TIMEOUT", "2min");
    CHECK(strata::deadline::configuredSeconds() == 120);
  }
  {
    strata::test::ScopedEnv debug("STRATA_DEBUG", "NONE");
    strata::test::ScopedEnv timeout("STRATA_TIMEOUT", "soon");
    CHECK(strata::deadline::configuredSeconds() == 600);
  }
}

TEST_CASE("a deadline scope expires after its seconds, and only then", "[deadline]") {
  CHECK_FALSE(Scope::active());
  {
    Scope s(0.05);
    CHECK(Scope::active());
    CHECK_FALSE(Scope::expired());
    std::this_thread::sleep_for(std::chrono::milliseconds(80));
    CHECK(Scope::expired());
    const strata::Status st = strata::deadline::expiredError("waiting for x");
    CHECK(st.code() == strata::Code::kRemoteError);
    CHECK(st.message() == "timed out after 0.05 s (STRATA_TIMEOUT) waiting for x");
  }
  CHECK_FALSE(Scope::active());
  CHECK_FALSE(Scope::expired());
}

TEST_CASE("a deadline's message names where its budget was set", "[deadline]") {
  Scope outer(100, nullptr, "the outer source");
  {
    Scope config(0.01, nullptr, "the communicator's timeoutMs");
    std::this_thread::sleep_for(std::chrono::milliseconds(30));
    CHECK(strata::deadline::expiredError("waiting for y").message() ==
          "timed out after 0.01 s (the communicator's timeoutMs) waiting for y");
  }
  CHECK(std::string(Scope::source()) == "the outer source");
  {
    Scope later(1000, nullptr, "a later, longer one");  // does not replace the earlier deadline
    CHECK(std::string(Scope::source()) == "the outer source");
  }
}

TEST_CASE("nested scopes: the earlier deadline wins and the outer one comes back", "[deadline]") {
  Scope outer(0.05);
  {
    Scope inner(100);  // cannot extend the outer deadline
    std::this_thread::sleep_for(std::chrono::milliseconds(80));
    CHECK(Scope::expired());
  }
  CHECK(Scope::expired());
  Scope none(0);  // no deadline of its own: the outer one still applies
  CHECK(Scope::expired());
}

TEST_CASE("scopes are per thread; a zero timeout waits for ever", "[deadline]") {
  Scope s(0.01);
  CHECK_FALSE(Scope::expired());  // the first check starts the budget
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  CHECK(Scope::expired());
  bool otherActive = true;
  std::thread([&] { otherActive = Scope::active(); }).join();
  CHECK_FALSE(otherActive);
  std::thread([] {
    Scope forever(0);
    CHECK_FALSE(Scope::active());
    CHECK_FALSE(Scope::expired());
  }).join();
}

TEST_CASE("the cancel flag ends a wait at once and says why", "[deadline]") {
  strata::deadline::Cancel cancel;
  Scope s(100, &cancel);
  CHECK_FALSE(Scope::expired());
  CHECK(cancel.why().empty());
  CHECK(cancel.set("aborted (strataCommAbort)"));
  CHECK(Scope::expired());
  CHECK(strata::deadline::expiredError("x").message() == "aborted (strataCommAbort) while x");
  // The first reason stays.
  CHECK_FALSE(cancel.set("rank 3 was lost"));
  CHECK(strata::deadline::expiredError("x").message() == "aborted (strataCommAbort) while x");
}

TEST_CASE("Poll reads the clock only every kClockEvery calls", "[deadline]") {
  Scope s(0.001);
  Poll p;
  CHECK_FALSE(p.expiredNow());  // starts the budget
  std::this_thread::sleep_for(std::chrono::milliseconds(5));
  for (unsigned i = 1; i < Poll::kClockEvery; ++i) CHECK_FALSE(p.expired());
  CHECK(p.expired());
  CHECK(p.expiredNow());
}

TEST_CASE("a scope's budget counts from its first check, not from its opening", "[deadline]") {
  {
    Scope s(0.02);
    // Work before the first wait (a copy, a reduction) does not count.
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    CHECK_FALSE(Scope::expired());
    std::this_thread::sleep_for(std::chrono::milliseconds(40));
    CHECK(Scope::expired());
  }
  {
    // A scope opened inside starts the enclosing one's budget, and a later deadline inside
    // never extends it, nor does leaving the inner scope restart it.
    Scope outer(0.02);
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    {
      Scope inner(100);
      CHECK_FALSE(Scope::expired());
      std::this_thread::sleep_for(std::chrono::milliseconds(40));
      CHECK(Scope::expired());
    }
    CHECK(Scope::expired());
  }
}
