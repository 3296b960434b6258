// What the TCP control plane's unit tests share: a unique id whose root listens on loopback, and
// ranks as threads of this process, each under a deadline.
#pragma once

#include <catch2/catch.hpp>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/sockets.h"
#include "bootstrap/tcp_root.h"
#include "bootstrap/unique_id.h"
#include "common/deadline.h"
#include "common/status.h"

namespace strata::boot::testing {

// A fresh id with its root on loopback (what strataGetUniqueId does, on the loopback interface
// so the test needs no network).
inline UniqueId loopbackId(const char* where = "127.0.0.1:1") {
  UniqueId id;
  StatusOr<net::SockAddr> a = net::parseHostPort(where);
  REQUIRE(a.isOk());
  id.root = a.value();
  id.root.setPort(0);
  REQUIRE(randomBytes(id.secret.data(), id.secret.size()).isOk());
  REQUIRE(startRoot(&id.root, id.secret).isOk());
  return id;
}

// Runs body(rank) for each of `ranks` on a thread of its own, each under a deadline of
// `seconds`; returns each one's failure message ("" when it passed), indexed by rank (n of
// them).
inline std::vector<std::string> onRanks(const std::vector<int>& ranks, int n, double seconds,
                                        const std::function<Status(int)>& body) {
  std::vector<std::string> errors(static_cast<size_t>(n));
  std::vector<std::thread> threads;
  for (int r : ranks) {
    threads.emplace_back([&, r] {
      deadline::Scope scope(seconds);
      const Status st = body(r);
      if (!st.isOk()) errors[r] = st.message().empty() ? "failed" : st.message();
    });
  }
  for (std::thread& t : threads) t.join();
  return errors;
}

// Ranks 0 .. n-1.
inline std::vector<std::string> onRanks(int n, double seconds,
                                        const std::function<Status(int)>& body) {
  std::vector<int> all(static_cast<size_t>(n));
  for (int r = 0; r < n; ++r) all[r] = r;
  return onRanks(all, n, seconds, body);
}

#define CHECK_OK(expr)                       \
  do {                                       \
    const Status check_st_ = (expr);         \
    if (!check_st_.isOk()) return check_st_; \
  } while (0)

inline Status expect(bool cond, const std::string& what) {
  return cond ? Status::ok() : internalError("check failed: " + what);
}

}  // namespace strata::boot::testing
