// The TCP control plane's side of recovery, in one process (each rank a thread) plus, for a
// rank that must die without a goodbye, a forked child: the watcher finds a lost rank and
// every member hears of it within a second; a rank that leaves is not reported lost; the
// shrink agreement gives every survivor the same set, whatever each one listed or saw, and
// refuses a rank it excludes.
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <catch2/catch.hpp>
#include <chrono>
#include <cstring>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "bootstrap/tcp_bootstrap.h"
#include "bootstrap/tcp_root.h"
#include "bootstrap/unique_id.h"
#include "common/deadline.h"
#include "tcp_ranks.h"

using namespace strata;
using namespace strata::boot;
using namespace strata::boot::testing;

namespace {

using Clock = std::chrono::steady_clock;

// The members of a shrunk bootstrap agree on something: an allGather of their old ranks.
Status checkShrunk(Bootstrap::Shrunk& s, int oldRank, const std::vector<int>& survivors) {
  CHECK_OK(expect(s.boot != nullptr, "a bootstrap"));
  CHECK_OK(expect(s.boot->size() == static_cast<int>(survivors.size()), "the survivors' size"));
  std::vector<int> all(survivors.size());
  CHECK_OK(s.boot->allGather(&oldRank, all.data(), sizeof(int)));
  return expect(all == survivors, "the survivors, in order");
}

// A rank in a child process that joins as `rank` of `n`, takes part in one barrier, and on the
// parent's word dies without a goodbye (_exit: no destructor runs, the kernel closes its
// sockets). The id reaches it through a pipe, so it forks before the test starts threads.
class DoomedRank {
 public:
  DoomedRank(int rank, int n) {
    REQUIRE(pipe(idPipe_) == 0);
    REQUIRE(pipe(diePipe_) == 0);
    pid_ = fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) child(rank, n);
    close(idPipe_[0]);
    close(diePipe_[0]);
  }
  void start(const UniqueId& id) {
    char bytes[kUniqueIdBytes];
    encodeId(id, bytes);
    REQUIRE(write(idPipe_[1], bytes, sizeof bytes) == static_cast<ssize_t>(sizeof bytes));
  }
  // Tells it to die; returns when it is gone.
  void kill() {
    const char c = 'x';
    REQUIRE(write(diePipe_[1], &c, 1) == 1);
    int status = 0;
    REQUIRE(waitpid(pid_, &status, 0) == pid_);
    pid_ = -1;
  }
  ~DoomedRank() {
    close(idPipe_[1]);
    close(diePipe_[1]);
    if (pid_ > 0) waitpid(pid_, nullptr, 0);  // the closed pipe ends it
  }

 private:
  [[noreturn]] void child(int rank, int n) {
    close(idPipe_[1]);
    close(diePipe_[1]);
    char bytes[kUniqueIdBytes];
    if (read(idPipe_[0], bytes, sizeof bytes) != static_cast<ssize_t>(sizeof bytes)) _exit(2);
    StatusOr<UniqueId> id = decodeId(bytes);
    if (!id.isOk()) _exit(3);
    deadline::Scope scope(20);
    StatusOr<std::unique_ptr<TcpBootstrap>> b = TcpBootstrap::create(id.value(), rank, n);
    if (!b.isOk() || !b.value()->barrier().isOk()) _exit(4);
    char c;
    (void)read(diePipe_[0], &c, 1);
    _exit(0);
  }

  int idPipe_[2] = {-1, -1}, diePipe_[2] = {-1, -1};
  pid_t pid_ = -1;
};

}  // namespace

TEST_CASE("survivors that list different ranks agree on their union", "[bootstrap][recovery]") {
  const int n = 5;
  const UniqueId id = loopbackId();
  std::atomic<int> done{0};
  // Ranks 3 and 4 are alive and never call shrink: rank 0 lists 4, rank 1 lists 3, rank 2
  // lists nobody (it learns both from the others).
  const std::vector<std::string> errors = onRanks({0, 1, 2, 3, 4}, n, 20, [&](int r) -> Status {
    StatusOr<std::unique_ptr<TcpBootstrap>> b = TcpBootstrap::create(id, r, n);
    CHECK_OK(b.status());
    CHECK_OK(b.value()->barrier());
    if (r >= 3) {
      while (done.load() < 3) std::this_thread::sleep_for(std::chrono::milliseconds(5));
      return Status::ok();
    }
    std::vector<bool> exclude(n, false);
    if (r == 0) exclude[4] = true;
    if (r == 1) exclude[3] = true;
    StatusOr<Bootstrap::Shrunk> s = b.value()->shrink(exclude);
    CHECK_OK(s.status());
    CHECK_OK(expect(s.value().excluded == std::vector<bool>{false, false, false, true, true},
                    "the agreed set is {3, 4}"));
    const Status checked = checkShrunk(s.value(), r, {0, 1, 2});
    done.fetch_add(1);
    return checked;
  });
  for (int r = 0; r < n; ++r) {
    INFO("rank " << r);
    CHECK(errors[r] == "");
  }
}

TEST_CASE("a rank the agreement excludes gets an error naming who excludes it",
          "[bootstrap][recovery]") {
  const int n = 3;
  const UniqueId id = loopbackId();
  const std::vector<std::string> errors = onRanks({0, 1, 2}, n, 20, [&](int r) -> Status {
    StatusOr<std::unique_ptr<TcpBootstrap>> b = TcpBootstrap::create(id, r, n);
    CHECK_OK(b.status());
    CHECK_OK(b.value()->barrier());
    std::vector<bool> exclude(n, false);
    if (r != 2) exclude[2] = true;
    StatusOr<Bootstrap::Shrunk> s = b.value()->shrink(exclude);
    if (r == 2) {
      CHECK_OK(expect(s.status().code() == Code::kInvalidUsage, "rank 2 refused"));
      return expect(s.status().message().find("excludes this rank (2)") != std::string::npos,
                    s.status().message());
    }
    CHECK_OK(s.status());
    return checkShrunk(s.value(), r, {0, 1});
  });
  for (int r = 0; r < n; ++r) {
    INFO("rank " << r << ": " << errors[r]);
    CHECK(errors[r] == "");
  }
}

TEST_CASE("a lost rank is known to every member within a second; one that leaves is not lost",
          "[bootstrap][recovery]") {
  const int n = 4;
  DoomedRank doomed(3, n);  // before any thread of this test
  const UniqueId id = loopbackId();
  doomed.start(id);
  std::mutex mu;
  std::vector<std::vector<std::string>> heard(n);  // [rank]: "member: why"
  std::atomic<int> ready{0};
  std::atomic<Clock::rep> killedAt{0};  // read by the watchers' threads
  std::vector<double> after(n, -1);
  const std::vector<std::string> errors = onRanks({0, 1, 2}, n, 20, [&](int r) -> Status {
    StatusOr<std::unique_ptr<TcpBootstrap>> b = TcpBootstrap::create(id, r, n);
    CHECK_OK(b.status());
    CHECK_OK(b.value()->barrier());
    auto watch = b.value()->watchMembers([&, r](int member, const std::string& why) {
      std::lock_guard<std::mutex> lock(mu);
      heard[r].push_back(std::to_string(member) + ": " + why);
      if (after[r] < 0) {
        const Clock::time_point at{Clock::duration(killedAt.load())};
        after[r] = std::chrono::duration<double>(Clock::now() - at).count();
      }
    });
    if (ready.fetch_add(1) == 2) {
      killedAt = Clock::now().time_since_epoch().count();
      doomed.kill();
    }
    // Nobody calls into the control plane meanwhile: the watcher alone finds it.
    const auto until = Clock::now() + std::chrono::seconds(5);
    while (Clock::now() < until) {
      {
        std::lock_guard<std::mutex> lock(mu);
        if (!heard[r].empty()) break;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
    {
      std::lock_guard<std::mutex> lock(mu);
      CHECK_OK(expect(heard[r].size() == 1 && heard[r][0].rfind("3: ", 0) == 0,
                      "rank 3 heard lost, once"));
    }
    // The survivors shrink without naming it.
    StatusOr<Bootstrap::Shrunk> s = b.value()->shrink(std::vector<bool>(n, false));
    CHECK_OK(s.status());
    CHECK_OK(expect(s.value().excluded == std::vector<bool>{false, false, false, true},
                    "the agreed set is {3}"));
    CHECK_OK(checkShrunk(s.value(), r, {0, 1, 2}));
    // Rank 2 leaves (destroys its control plane, with a goodbye): not lost.
    const Status st = s.value().boot->barrier();
    if (r == 2) return st;
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    std::lock_guard<std::mutex> lock(mu);
    return expect(heard[r].size() == 1, "only rank 3 was reported lost");
  });
  for (int r = 0; r < 3; ++r) {
    INFO("rank " << r << ": " << errors[r]);
    CHECK(errors[r] == "");
    CHECK(after[r] >= 0);
    CHECK(after[r] < 1.0);
    if (!heard[r].empty()) CHECK(heard[r][0].find("without a goodbye") != std::string::npos);
  }
}

TEST_CASE("a rank lost during the agreement is excluded, and the others go on",
          "[bootstrap][recovery]") {
  const int n = 4;
  DoomedRank doomed(3, n);
  const UniqueId id = loopbackId();
  doomed.start(id);
  std::atomic<int> inShrink{0};
  const std::vector<std::string> errors = onRanks({0, 1, 2}, n, 20, [&](int r) -> Status {
    StatusOr<std::unique_ptr<TcpBootstrap>> b = TcpBootstrap::create(id, r, n);
    CHECK_OK(b.status());
    CHECK_OK(b.value()->barrier());
    std::thread killer;
    if (inShrink.fetch_add(1) == 2) {
      // Rank 3 never calls shrink; it dies while the others wait for its set.
      killer = std::thread([&] {
        std::this_thread::sleep_for(std::chrono::milliseconds(300));
        doomed.kill();
      });
    }
    const auto start = Clock::now();
    StatusOr<Bootstrap::Shrunk> s = b.value()->shrink(std::vector<bool>(n, false));
    const double took = std::chrono::duration<double>(Clock::now() - start).count();
    if (killer.joinable()) killer.join();
    CHECK_OK(s.status());
    CHECK_OK(expect(took < 3, "the agreement ended soon after the loss"));
    CHECK_OK(expect(s.value().excluded == std::vector<bool>{false, false, false, true},
                    "the agreed set is {3}"));
    return checkShrunk(s.value(), r, {0, 1, 2});
  });
  for (int r = 0; r < 3; ++r) {
    INFO("rank " << r << ": " << errors[r]);
    CHECK(errors[r] == "");
  }
}
