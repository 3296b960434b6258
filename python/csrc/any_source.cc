// A receive from any source (dist.recv without src=, recvAnysource), built on strataIprobe as
// strata.h describes: probe until a message waits, then strataRecv from the rank it names.
//
// A message to this rank travels on one of two lanes (backend.h): from a lower rank on up_,
// from a higher one on down_. Each communicator is driven by its own lane's thread only, so
// the receive is a job on each lane a sender can use, each probing its own communicator.
// Invariants:
//   - exactly one job takes a message: the first to find one claims the receive (an atomic
//     flag) and receives it; the other stops probing at its next poll and takes nothing;
//   - the work completes once every job returned, so every send and receive issued after it
//     on either lane runs after it: messages between two ranks keep their order, whether
//     received by source or from any;
//   - the search is bounded by the group's timeout, and fails with a message that starts
//     "Timed out", as every strata operation's does.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <string>
#include <thread>
#include <vector>

#include "args.h"
#include "backend.h"

namespace strata::torch_backend {
namespace {

using Clock = std::chrono::steady_clock;

// What the two lane jobs share.
struct Search {
  std::atomic<bool> claimed{false};
  std::atomic<int> jobsLeft{0};
  int source = -1;           // set by the claimer
  std::exception_ptr error;  // set by the claimer
};

}  // namespace

c10::intrusive_ptr<c10d::Work> ProcessGroupStrata::recvAnysource(std::vector<at::Tensor>& tensors,
                                                                 int) {
  const at::Tensor& t = single(tensors, "recv");
  checkCpu(t, "recv", "its point-to-point lanes run strata's blocking host calls");
  const strataDataType_t type = dataType(t, "recv");
  TORCH_CHECK(size_ > 1,
              "strata: recv from any source in a group of one rank: no other rank "
              "can send to it");
  TORCH_CHECK(up_.comm != nullptr, "strata: recv on a process group that was shut down");
  at::Tensor buf = contiguousBuffer(t);
  auto work = c10::make_intrusive<StrataWork>(rank_, c10d::OpType::RECVANYSOURCE, "recv", tensors,
                                              std::vector<at::Tensor>{buf});
  ++seq_;
  // Only the lanes some rank can send on: none sends up to rank 0 or down to the last rank.
  std::vector<Lane*> lanes;
  if (rank_ > 0) lanes.push_back(&up_);
  if (rank_ < size_ - 1) lanes.push_back(&down_);
  auto search = std::make_shared<Search>();
  search->jobsLeft = static_cast<int>(lanes.size());
  const Clock::time_point deadline = Clock::now() + timeout_;
  const auto timeoutMs = timeout_.count();
  std::function<void()> after = copyBack(t, buf);
  for (Lane* lane : lanes) {
    strataComm_t comm = lane->comm;
    // Explicit captures: `[=]` capturing `this` (for callbacks_) is deprecated in C++20, the
    // standard PyTorch 2.14's headers require, and `[=, this]` is C++20 only.
    lane->worker.post([this, search, comm, deadline, timeoutMs, buf, type, work, after] {
      // Between polls: 2 us at first, doubling up to 1 ms, so a message that arrives soon is
      // taken soon and a long wait costs little CPU.
      std::chrono::microseconds pause(2);
      while (!search->claimed.load()) {
        int flag = 0, source = -1;
        size_t bytes = 0;
        const strataResult_t r = strataIprobe(STRATA_ANY_SOURCE, comm, &flag, &source, &bytes);
        const bool late = Clock::now() > deadline;
        if (r != strataSuccess || flag == 1 || late) {
          if (search->claimed.exchange(true)) break;  // the other lane took it
          if (r != strataSuccess) {
            search->error = std::make_exception_ptr(std::runtime_error(
                "strata: recv from any source failed: " + strataMessage(comm, r)));
          } else if (flag == 1) {
            search->source = source;
            const strataResult_t got = strataRecv(buf.data_ptr(), static_cast<size_t>(buf.numel()),
                                                  type, source, comm, nullptr);
            if (got != strataSuccess) {
              search->error = std::make_exception_ptr(std::runtime_error(
                  "strata: recv from any source (rank " + std::to_string(source) +
                  " sent) failed: " + strataMessage(comm, got)));
            }
          } else {
            search->error = std::make_exception_ptr(std::runtime_error(
                "Timed out (the group's timeout passed): strata: recv from any source: no rank "
                "sent a message within " +
                std::to_string(timeoutMs) + " ms"));
          }
          break;
        }
        std::this_thread::sleep_for(pause);
        pause = std::min(pause * 2, std::chrono::microseconds(1000));
      }
      if (--search->jobsLeft > 0) return;
      // The last job out completes the work, its future on the callback pool (as onLane does).
      if (!search->error) work->setSourceRank(search->source);
      work->settle(search->error, after);
      resolveOnPool(work, 1);
    });
  }
  return work;
}

}  // namespace strata::torch_backend
