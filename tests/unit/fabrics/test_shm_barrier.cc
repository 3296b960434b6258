// The shm fabric's barrier (fabrics/shm/shm_barrier.h) between threads of one process: it
// synchronises, it names exactly the members that did not arrive when the deadline passes, and
// after a barrier every member sees a member whose call differs. The shared lines are really
// 64-byte aligned (UBSan flagged the old layout inside MPI windows).
#include <catch2/catch.hpp>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "fabrics/shm/shm_barrier.h"

namespace {

using strata::fabric::ShmCall;
using strata::fabric::ShmMemberLine;

// Lines for n members, zeroed and 64-aligned as in the mapped segment.
std::unique_ptr<ShmMemberLine[]> makeLines(int n) {
  std::unique_ptr<ShmMemberLine[]> lines(new ShmMemberLine[n]);
  return lines;
}

}  // namespace

TEST_CASE("shm barrier lines are cache-line aligned and never shared", "[shm]") {
  auto lines = makeLines(3);
  for (int j = 0; j < 3; ++j) {
    CHECK(reinterpret_cast<uintptr_t>(&lines[j]) % 64 == 0);
    CHECK(reinterpret_cast<uintptr_t>(&lines[j].call[0]) % 64 == 0);
  }
}

TEST_CASE("shm barrier: four threads pass 200 barriers together", "[shm]") {
  constexpr int kMembers = 4, kRounds = 200;
  auto lines = makeLines(kMembers);
  std::vector<int> seen(kMembers * kRounds, 0);
  std::vector<std::atomic<int>> counter(kRounds);
  std::vector<std::thread> threads;
  std::atomic<int> failures{0};
  for (int m = 0; m < kMembers; ++m) {
    threads.emplace_back([&, m] {
      strata::deadline::Scope scope(20);
      ShmCall call{1, 2, 0, -1, 100, 0};
      for (int r = 0; r < kRounds; ++r) {
        counter[r].fetch_add(1);
        if (!strata::fabric::shmBarrier(lines.get(), kMembers, m, r + 1, call).isOk()) ++failures;
        // Everyone arrived at barrier r before anyone left it.
        seen[m * kRounds + r] = counter[r].load();
        if (strata::fabric::shmFirstDiffering(lines.get(), kMembers, r + 1, call) >= 0) ++failures;
      }
    });
  }
  for (auto& t : threads) t.join();
  CHECK(failures == 0);
  for (int v : seen) CHECK(v == kMembers);
}

TEST_CASE("shm barrier: a timeout names exactly the members that did not arrive", "[shm]") {
  constexpr int kMembers = 4;
  auto lines = makeLines(kMembers);
  ShmCall call{1, 2, 0, -1, 100, 0};
  // Members 0 and 2 arrive; 1 and 3 never do.
  strata::Code otherCode = strata::Code::kOk;  // Catch2's checks stay on the main thread
  std::thread other([&] {
    strata::deadline::Scope scope(0.2);
    otherCode = strata::fabric::shmBarrier(lines.get(), kMembers, 2, 1, call).code();
  });
  strata::deadline::Scope scope(0.2);
  const auto t0 = std::chrono::steady_clock::now();
  const strata::Status st = strata::fabric::shmBarrier(lines.get(), kMembers, 0, 1, call);
  const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  other.join();
  CHECK(otherCode == strata::Code::kRemoteError);
  CHECK(st.code() == strata::Code::kRemoteError);
  CHECK(t >= 0.19);
  CHECK(t < 2.0);
  INFO(st.message());
  CHECK(st.message().find("members 1, 3 have not arrived") != std::string::npos);
  CHECK(st.message().find("timed out after 0.2 s") != std::string::npos);
}

TEST_CASE("shm barrier: every member sees a member whose call differs", "[shm]") {
  constexpr int kMembers = 3;
  auto lines = makeLines(kMembers);
  std::vector<int> differing(kMembers, -2);
  std::vector<std::thread> threads;
  for (int m = 0; m < kMembers; ++m) {
    threads.emplace_back([&, m] {
      strata::deadline::Scope scope(20);
      // Member 1 runs 50 elements where the others run 100.
      ShmCall call{1, 2, 0, -1, m == 1 ? 50u : 100u, 0};
      if (!strata::fabric::shmBarrier(lines.get(), kMembers, m, 1, call).isOk()) return;
      differing[m] = strata::fabric::shmFirstDiffering(lines.get(), kMembers, 1, call);
    });
  }
  for (auto& t : threads) t.join();
  CHECK(differing[0] == 1);
  CHECK(differing[1] == 0);
  CHECK(differing[2] == 1);
}
