// The engine of a communicator: its calls run one at a time, in the order they were issued, on
// every rank (collectives on one group must meet in the same order everywhere). Queued calls
// run on a progress thread of the communicator's own when it has one, else inside the calls
// that wait for them (wait(), drain(), and test() without a thread).
//
// One runner at a time: whichever thread takes the runner role pops the next call and runs
// it; the others wait. A thread that waits for a call that nobody is running yet runs it
// itself (and the calls before it) instead of waking the progress thread and sleeping: a call
// waited for at once then costs no thread hand-off, while a call left to run during the
// caller's computation is run by the progress thread.
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

#include <atomic>
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
  // Whether this thread is running one of this engine's queued calls now (core/threads.h:
  // no setup from there).
  bool insideCall() const;

  // Queues `work`; returns its ticket (1, 2, ...). Returns at once.
  uint64_t submit(Work work);
  // Whether call `ticket` finished, and its status in *st. Without a progress thread this runs
  // the queued calls up to `ticket` first (so it returns true); with one it never blocks.
  bool test(uint64_t ticket, Status* st);
  // Waits until call `ticket` finished (running queued calls without a progress thread);
  // returns its status.
  Status wait(uint64_t ticket);
  // wait() without hurrying: the call is not marked urgent and this thread never runs calls
  // (the progress thread does), so a pack waiting for company keeps waiting. Without a
  // progress thread it is wait().
  Status waitLazy(uint64_t ticket);
  // Waits until every queued call finished; returns the first error of a queued call.
  Status drain();
  // The first error of a queued call, without waiting.
  Status error() const;
  // strataCommAbort: every call not yet run fails with `why` instead of running (it is still
  // handed the error, to release what waits on it). A call running now finishes first.
  void abort(const Status& why);
  // A call that ran outside the queue (a blocking call, on the issuing thread) failed: the
  // communicator enters its error state as if a queued call had failed, so every later call
  // fails fast with `why` and error() reports it. The first error stays.
  void fail(const Status& why);
  // Whether no call is queued or running (strataCommGetAsyncError after strataCommRevoke).
  bool idle() const;
  // Tickets handed out so far.
  uint64_t submitted() const;
  // The highest ticket a thread waits for or tested (wait, test, drain): a queued call up to it
  // must not linger (a fusion pack waiting for company, core/fusion_queue.h, stops waiting).
  uint64_t urgentUpTo() const { return urgent_.load(std::memory_order_acquire); }

 private:
  struct Item {
    uint64_t ticket;
    Work work;
  };

  void loop();
  // With `lock` held: waits until call `ticket` finished, running queued calls itself whenever
  // nobody else is.
  void waitFor(std::unique_lock<std::mutex>& lock, uint64_t ticket);
  // With `lock` held and nobody running: takes the runner role, runs the next queued call
  // (unlocked), records its outcome and gives the role back.
  void runNext(std::unique_lock<std::mutex>& lock);
  Status statusOf(uint64_t ticket) const;  // with mutex_ held
  void markUrgent(uint64_t ticket);

  const bool threaded_;
  mutable std::mutex mutex_;
  std::condition_variable wake_;  // the progress thread: a call to run, or stop
  std::condition_variable done_;  // waiters: a call finished (or the runner role is free)
  std::deque<Item> items_;
  bool running_ = false;  // some thread holds the runner role
  uint64_t submitted_ = 0, completed_ = 0;
  uint64_t failedAt_ = 0;  // ticket of the first failed call (0: none)
  Status error_ = Status::ok();
  bool stopping_ = false;
  std::atomic<uint64_t> urgent_{0};  // see urgentUpTo()
  std::thread thread_;
};

}  // namespace strata::core
