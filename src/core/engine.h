// The engine of a communicator: its calls run one at a time, in the order they were issued, on
// every rank (collectives on one group must meet in the same order everywhere). Queued calls
// run on a progress thread of the communicator's own when it has one, else inside the calls
// that wait for them (wait(), drain()).
//
// A call that fails while queued makes the communicator unusable, as NCCL's asynchronous
// errors do: its peers may be at another point of the sequence. Every later queued call is
// handed the error instead of running (so it can still release whatever waits on it, such as a
// stream) and error() keeps returning it.
//
// Threads: one thread issues calls (submit, wait, drain) at a time; the progress thread only
// runs them. Setup that talks to other ranks (new groups, fabrics) happens on the issuing
// thread, over control planes the progress thread never uses (core/comm.h).
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <mutex>
#include <thread>

#include "common/status.h"

namespace strata::core {

class Engine {
 public:
  // Runs a queued call. `earlier` is ok, or the error of an earlier queued call: then the work
  // must not run, only release what waits on it, and return `earlier`.
  using Work = std::function<Status(const Status& earlier)>;

  // threaded: a progress thread (started on the first submit) runs queued calls.
  explicit Engine(bool threaded) : threaded_(threaded) {}
  ~Engine() { stop(); }
  // Runs what is still queued and stops the thread. The communicator calls it when it goes;
  // the engine itself may live on (requests hold it) to answer test() and wait().
  void stop();
  Engine(const Engine&) = delete;
  Engine& operator=(const Engine&) = delete;

  bool threaded() const { return threaded_; }

  // Queues `work`; returns its ticket (1, 2, ...). Returns at once.
  uint64_t submit(Work work);
  // Whether call `ticket` finished, and its status in *st. Without a progress thread this runs
  // the queued calls up to `ticket` first (so it returns true).
  bool test(uint64_t ticket, Status* st);
  // Waits until call `ticket` finished (running queued calls without a progress thread);
  // returns its status.
  Status wait(uint64_t ticket);
  // Waits until every queued call finished; returns the first error of a queued call.
  Status drain();
  // The first error of a queued call, without waiting.
  Status error() const;
  // Tickets handed out so far.
  uint64_t submitted() const;

 private:
  struct Item {
    uint64_t ticket;
    Work work;
  };

  void loop();
  // Runs queued calls on the calling thread until `ticket` finished.
  void runUntil(uint64_t ticket);
  // Runs one popped item and records its outcome.
  void runItem(Item& item);
  Status statusOf(uint64_t ticket) const;  // with mutex_ held

  const bool threaded_;
  // Without a progress thread: held while the calling thread runs queued calls, so that two
  // threads that wait at once (the one issuing calls, and one waiting on a request) still run
  // them one at a time and in order.
  std::mutex inlineMutex_;
  mutable std::mutex mutex_;
  std::condition_variable wake_, done_;
  std::deque<Item> items_;
  uint64_t submitted_ = 0, completed_ = 0;
  uint64_t failedAt_ = 0;  // ticket of the first failed call (0: none)
  Status error_ = Status::ok();
  bool stopping_ = false;
  std::thread thread_;
};

}  // namespace strata::core
