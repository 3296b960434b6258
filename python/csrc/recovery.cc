// Recovery from a lost rank (docs/recovery.md): the ranks strata reports lost, and PyTorch 2's
// shrink_group served by strataCommRevoke and strataCommShrink.
//
// A group is several strata communicators (backend.h: base_, and comm_, the lanes and the
// wire communicators split from it); each learns of a lost member by itself and fails its
// calls with strataRemoteError. The shrink revokes every one of them, so that no thread of the
// group (completer, lanes) stays inside a call, shrinks base_, and builds a new group on the
// result exactly as a group is built on a new communicator (splitForUse).
#include <algorithm>
#include <future>
#include <set>
#include <string>

#include "backend.h"
#include "gil.h"

namespace strata::torch_backend {
namespace {

// Runs every job posted to `threads` before this call, then returns.
void drain(JobThreads& threads) {
  std::promise<void> done;
  std::future<void> passed = done.get_future();
  threads.post([&done] { done.set_value(); });
  passed.wait();
}

}  // namespace

std::vector<strataComm_t> ProcessGroupStrata::comms() const {
  std::vector<strataComm_t> all = {comm_, up_.comm, down_.comm, a2a_.comm};
  for (const auto& [wire, c] : wireComms_) all.push_back(c);
  all.push_back(base_);
  all.erase(std::remove(all.begin(), all.end(), nullptr), all.end());
  return all;
}

std::vector<int64_t> ProcessGroupStrata::lostRanks() {
  std::lock_guard<std::mutex> lock(issue_);
  std::set<int64_t> lost(agreedLost_.begin(), agreedLost_.end());
  // base_ numbers its ranks as the group does; every communicator split from it hears of the
  // same losses.
  if (base_ != nullptr) {
    int count = 0;
    if (strataCommGetLostRanks(base_, nullptr, 0, &count) == strataSuccess && count > 0) {
      std::vector<int> ranks(static_cast<size_t>(count));
      if (strataCommGetLostRanks(base_, ranks.data(), count, &count) == strataSuccess) {
        for (int i = 0; i < count && i < static_cast<int>(ranks.size()); ++i) {
          lost.insert(ranks[i]);
        }
      }
    }
  }
  return {lost.begin(), lost.end()};
}

#ifdef STRATA_TORCH_BACKEND_SHRINK
c10::intrusive_ptr<c10d::Backend> ProcessGroupStrata::shrink(
    const std::vector<int64_t>& ranksToExclude, int shrinkFlags,
    const c10::intrusive_ptr<Options>& optsOverride) {
  TORCH_CHECK(shrinkFlags == STRATA_SHRINK_DEFAULT || shrinkFlags == STRATA_SHRINK_ABORT,
              "strata: shrink: shrink_flags ", shrinkFlags,
              " must be SHRINK_DEFAULT (0) or SHRINK_ABORT (1)");
  std::vector<int> exclude;
  for (int64_t r : ranksToExclude) {
    TORCH_CHECK(r >= 0 && r < size_, "strata: shrink: rank ", r, " is outside the group of ",
                size_);
    exclude.push_back(static_cast<int>(r));
  }
  GilRelease unlocked;  // the group's threads may need the GIL to finish what they hold
  TORCH_CHECK(comm_ != nullptr, "strata: shrink of a process group that was shut down");
  if (shrinkFlags == STRATA_SHRINK_ABORT) {
    // Every call in flight on the group's communicators ends at its next wait (the completer's
    // and the lanes' too), queued ones fail; their Works complete with that error.
    for (strataComm_t c : comms()) {
      if (c != base_) strataCommRevoke(c, STRATA_REVOKE_DEFAULT);
    }
  }
  // SHRINK_DEFAULT: the operations issued before finish first (strata's calls by the completer,
  // sends and receives on the lanes); with SHRINK_ABORT they finish at once.
  drain(completer_);
  drain(up_.worker);
  drain(down_.worker);
  drain(a2a_.worker);
  const std::chrono::milliseconds timeout = optsOverride ? optsOverride->timeout : timeout_;
  strataConfig_t config = groupConfig();
  config.timeoutMs = static_cast<int>(std::min<int64_t>(timeout.count(), INT32_MAX));
  strataComm_t made = nullptr;
  {
    std::lock_guard<std::mutex> lock(issue_);
    const strataResult_t r = strataCommShrink(
        base_, exclude.data(), static_cast<int>(exclude.size()), &made, &config, shrinkFlags);
    TORCH_CHECK(r == strataSuccess, "strata: shrink failed: ", strataMessage(base_, r));
  }
  int rank = -1, size = -1;
  strataCommUserRank(made, &rank);
  strataCommCount(made, &size);
  if (size != size_ - static_cast<int>(exclude.size())) {
    // The survivors agreed on more ranks than these (another was lost, or another survivor
    // listed more). torch maps the ranks it was given, so the list must be exact: name the
    // agreed set (every new member's old rank, gathered) and leave this group as it is.
    std::vector<int> old(static_cast<size_t>(size), -1);
    const int mine = rank_;
    const strataResult_t g = strataAllGather(&mine, old.data(), 1, strataInt32, made, nullptr);
    strataCommAbort(made);
    std::string agreed;
    {
      std::lock_guard<std::mutex> lock(issue_);
      agreedLost_.clear();
      for (int r = 0; g == strataSuccess && r < size_; ++r) {
        if (std::find(old.begin(), old.end(), r) == old.end()) {
          agreedLost_.push_back(r);
          agreed += (agreed.empty() ? "" : ", ") + std::to_string(r);
        }
      }
    }
    TORCH_CHECK(false, "strata: shrink: the remaining ranks agreed to exclude ",
                g == strataSuccess ? "ranks [" + agreed + "]" : std::string("more ranks"),
                ", not only the ", exclude.size(), " given; shrink_group again with ",
                "ranks_to_exclude=strata_torch.lost_ranks(group)");
  }
  retired_ = true;
  return c10::make_intrusive<ProcessGroupStrata>(made, rank, size, timeout);
}
#endif

}  // namespace strata::torch_backend
