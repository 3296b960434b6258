#include <catch2/catch.hpp>
#include <string>
#include <thread>

#include "core/caller_check.h"

namespace strata::core {
namespace {

TEST_CASE("caller check: a second thread is refused while the first is inside", "[core]") {
  CallerCheck check;
  bool owner = false;
  REQUIRE(check.enter("allreduce", &owner).isOk());
  CHECK(owner);
  // The same thread again (a compound call's parts): allowed, and it does not own the entry.
  bool nested = true;
  CHECK(check.enter("broadcast", &nested).isOk());
  CHECK_FALSE(nested);

  Status other = Status::ok();
  bool otherOwner = true;
  std::thread([&] { other = check.enter("broadcast", &otherOwner); }).join();
  CHECK(other.code() == Code::kInvalidUsage);
  CHECK_FALSE(otherOwner);
  CHECK_THAT(other.message(), Catch::Matchers::Contains("broadcast issued from thread") &&
                                  Catch::Matchers::Contains("inside allreduce") &&
                                  Catch::Matchers::Contains("one thread at a time"));

  check.leave();
  std::thread([&] {
    other = check.enter("broadcast", &otherOwner);
    if (otherOwner) check.leave();
  }).join();
  CHECK(other.isOk());
  CHECK(otherOwner);
}

TEST_CASE("caller check: the scope leaves only what it entered", "[core]") {
  CallerCheck check;
  {
    CallerScope outer(check, "group of calls");
    REQUIRE(outer.status().isOk());
    {
      CallerScope inner(check, "allreduce");
      CHECK(inner.status().isOk());
    }
    // The inner scope did not leave: another thread is still refused.
    Status other = Status::ok();
    std::thread([&] {
      CallerScope s(check, "split");
      other = s.status();
    }).join();
    CHECK(other.code() == Code::kInvalidUsage);
  }
  Status after = Status::ok();
  std::thread([&] {
    CallerScope s(check, "split");
    after = s.status();
  }).join();
  CHECK(after.isOk());
}

}  // namespace
}  // namespace strata::core
