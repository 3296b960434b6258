// The engine (core/engine.h): calls run one at a time in submission order, with or without a
// progress thread; a failed call fails every later one and is reported; test() and wait()
// report a ticket's status; without a thread, test() and wait() run the queued calls.
#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <thread>
#include <vector>

#include "core/engine.h"

namespace strata::core {
namespace {

using namespace std::chrono_literals;

// Waits (up to a generous bound) until `done` holds; false if it never did.
template <typename Pred>
bool eventually(Pred done) {
  for (int i = 0; i < 2000 && !done(); ++i) std::this_thread::sleep_for(1ms);
  return done();
}

}  // namespace

TEST_CASE("engine: queued calls run in submission order, threaded or inline", "[engine]") {
  for (bool threaded : {false, true}) {
    CAPTURE(threaded);
    Engine e(threaded);
    std::vector<int> order;
    std::vector<uint64_t> tickets;
    for (int i = 0; i < 50; ++i) {
      tickets.push_back(e.submit([&order, i](const Status&) {
        order.push_back(i);
        return Status::ok();
      }));
    }
    CHECK(tickets.front() == 1);
    CHECK(tickets.back() == 50);
    CHECK(e.wait(tickets[20]).isOk());
    // (Not order.size() here: the progress thread may be appending to it.)
    CHECK(e.drain().isOk());
    REQUIRE(order.size() == 50);
    for (int i = 0; i < 50; ++i) CHECK(order[i] == i);
  }
}

TEST_CASE("engine: without a thread nothing runs until test, wait or drain", "[engine]") {
  Engine e(false);
  std::atomic<int> ran{0};
  const uint64_t a = e.submit([&](const Status&) {
    ++ran;
    return Status::ok();
  });
  const uint64_t b = e.submit([&](const Status&) {
    ++ran;
    return Status::ok();
  });
  CHECK(ran == 0);
  Status st = internalError("unset");
  CHECK(e.test(a, &st));  // runs the calls up to a, not b
  CHECK(st.isOk());
  CHECK(ran == 1);
  CHECK(e.wait(b).isOk());
  CHECK(ran == 2);
}

TEST_CASE("engine: with a thread a call runs while the caller does something else", "[engine]") {
  Engine e(true);
  std::atomic<bool> ran{false};
  const uint64_t t = e.submit([&](const Status&) {
    ran = true;
    return Status::ok();
  });
  // The caller never calls into the engine until the call has run by itself.
  CHECK(eventually([&] { return ran.load(); }));
  Status st = internalError("unset");
  CHECK(e.test(t, &st));
  CHECK(st.isOk());
}

TEST_CASE("engine: test reports not done while the call runs", "[engine]") {
  Engine e(true);
  std::atomic<bool> release{false}, started{false};
  const uint64_t t = e.submit([&](const Status&) {
    started = true;
    while (!release) std::this_thread::sleep_for(1ms);
    return Status::ok();
  });
  REQUIRE(eventually([&] { return started.load(); }));
  Status st = Status::ok();
  CHECK_FALSE(e.test(t, &st));
  release = true;
  CHECK(e.wait(t).isOk());
}

TEST_CASE("engine: a failed call fails every later one, which still runs to release", "[engine]") {
  for (bool threaded : {false, true}) {
    CAPTURE(threaded);
    Engine e(threaded);
    const uint64_t ok = e.submit([](const Status&) { return Status::ok(); });
    const uint64_t bad = e.submit([](const Status&) { return systemError("injected"); });
    Status seen = Status::ok();
    bool later = false;
    const uint64_t after = e.submit([&](const Status& earlier) {
      later = true;  // called, so that it can release what waits on it...
      seen = earlier;
      return earlier;  // ...but it does no work
    });
    CHECK(e.wait(ok).isOk());
    const Status failed = e.wait(bad);
    CHECK(failed.code() == Code::kSystemError);
    CHECK(failed.message().find("injected") != std::string::npos);
    CHECK(e.wait(after).code() == Code::kSystemError);
    CHECK(later);
    CHECK(seen.code() == Code::kSystemError);
    CHECK(e.error().code() == Code::kSystemError);
    CHECK(e.drain().code() == Code::kSystemError);
    // Calls submitted after the failure get it too.
    const uint64_t next = e.submit([](const Status& earlier) { return earlier; });
    CHECK(e.wait(next).code() == Code::kSystemError);
  }
}

TEST_CASE("engine: stop runs what is queued; the engine still answers afterwards", "[engine]") {
  for (bool threaded : {false, true}) {
    CAPTURE(threaded);
    Engine e(threaded);
    int ran = 0;
    uint64_t last = 0;
    for (int i = 0; i < 5; ++i) {
      last = e.submit([&](const Status&) {
        ++ran;
        return Status::ok();
      });
    }
    e.stop();
    CHECK(ran == 5);
    Status st = internalError("unset");
    CHECK(e.test(last, &st));
    CHECK(st.isOk());
    CHECK(e.wait(last).isOk());
  }
}

}  // namespace strata::core

namespace strata::core {

TEST_CASE("engine: abort fails the calls not yet run; they release and do no work", "[engine]") {
  for (bool threaded : {false, true}) {
    CAPTURE(threaded);
    Engine e(threaded);
    std::atomic<bool> release{false}, started{false};
    std::atomic<int> worked{0}, released{0};
    // The first call holds the runner role until released (with a thread it is running when
    // abort comes; without one nothing has run yet).
    const uint64_t first = e.submit([&](const Status& earlier) {
      if (!earlier.isOk()) return earlier;
      started = true;
      while (!release) std::this_thread::sleep_for(1ms);
      ++worked;
      return Status::ok();
    });
    std::vector<uint64_t> later;
    for (int i = 0; i < 3; ++i) {
      later.push_back(e.submit([&](const Status& earlier) {
        ++released;
        if (!earlier.isOk()) return earlier;
        ++worked;
        return Status::ok();
      }));
    }
    if (threaded) REQUIRE(eventually([&] { return started.load(); }));
    e.abort(Status(Code::kRemoteError, "aborted"));
    release = true;
    for (uint64_t t : later) CHECK(e.wait(t).code() == Code::kRemoteError);
    CHECK(released == 3);  // each was handed the error
    // With a thread the running call finished its work and keeps its own result.
    CHECK(worked == (threaded ? 1 : 0));
    CHECK(e.wait(first).isOk() == threaded);
  }
}

}  // namespace strata::core
