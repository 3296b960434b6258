// A hang watchdog for the MPI test programs: a deadlock becomes a failing ctest entry with a
// message that names the step in progress, instead of a CI job that hangs.
//
// It ends the process with _exit(124) rather than MPI_Abort, which is not safe from a second
// thread at MPI_THREAD_SINGLE; mpiexec sees a rank exit without MPI_Finalize and kills the others.
#pragma once

#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <mutex>
#include <string>
#include <thread>
#include <utility>

namespace strata::test {

class Watchdog {
 public:
  Watchdog() = default;
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;
  ~Watchdog() { stop(); }

  // Starts the clock. If stop() has not been called `seconds` from now, prints
  // "TIMEOUT: <prefix><step>" to stderr and ends the process with status 124.
  void start(double seconds, std::string prefix, std::string step = "") {
    stop();
    {
      std::lock_guard<std::mutex> lock(mutex_);
      prefix_ = std::move(prefix);
      step_ = std::move(step);
      done_ = false;
    }
    const auto deadline = std::chrono::steady_clock::now() +
                          std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                              std::chrono::duration<double>(seconds));
    thread_ = std::thread([this, deadline] { run(deadline); });
  }

  // Names the step in progress, for the timeout message.
  void setStep(std::string step) {
    std::lock_guard<std::mutex> lock(mutex_);
    step_ = std::move(step);
  }

  // Disarms the watchdog; safe to call more than once, or without start().
  void stop() {
    if (!thread_.joinable()) return;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      done_ = true;
    }
    cv_.notify_all();
    thread_.join();
  }

 private:
  void run(std::chrono::steady_clock::time_point deadline) {
    std::unique_lock<std::mutex> lock(mutex_);
    if (cv_.wait_until(lock, deadline, [this] { return done_; })) return;
    std::fprintf(stderr, "TIMEOUT: %s%s\n", prefix_.c_str(), step_.c_str());
    std::fflush(stderr);
    _exit(124);
  }

  std::mutex mutex_;
  std::condition_variable cv_;
  bool done_ = false;
  std::string prefix_, step_;
  std::thread thread_;
};

}  // namespace strata::test
