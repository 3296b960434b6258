#include "core/flight_signal.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>

#include "common/log.h"
#include "core/comm.h"
#include "core/flight_dump.h"

namespace strata::core {
namespace {

int gPipe[2] = {-1, -1};  // written by the handler, read by the dumping thread
int gSignal = 0;          // the signal the handler is installed for; 0 none
// Signals taken (by the handler) and answered (every registered communicator dumped, counted
// under registryMutex()). A request is pending while they differ: the process's exit and a
// communicator's destruction wait for it or do its part (finishPending, unwatchDumpSignal).
std::atomic<uint64_t> gRequested{0};
uint64_t gAnswered = 0;  // with registryMutex() held
constexpr double kExitWaitSeconds = 10;  // an exit waits this long at most for a dump

std::mutex& registryMutex() {
  static auto* m = new std::mutex();  // never destroyed: the thread may outlive static dtors
  return *m;
}
std::set<Comm*>& registry() {
  static auto* s = new std::set<Comm*>();
  return *s;
}

extern "C" void onDumpSignal(int) {
  const int saved = errno;
  gRequested.fetch_add(1, std::memory_order_relaxed);  // lock-free: async-signal-safe
  const char byte = 1;
  (void)!write(gPipe[1], &byte, 1);  // a full pipe already holds a request: nothing is lost
  errno = saved;
}

void dumpForSignal(Comm& c) {
  (void)dumpFlightRecorder(c, std::string("signal ") + strsignal(gSignal));
}

// Dumps every registered communicator for the requests taken so far, with registryMutex()
// held. One dump answers every request that arrived before it (the pipe may hold more bytes
// than there are requests left: those find nothing to do).
void answerPending() {
  const uint64_t requested = gRequested.load();
  if (requested == gAnswered) return;
  for (Comm* c : registry()) dumpForSignal(*c);
  gAnswered = requested;
}

void dumpLoop() {
  char byte = 0;
  for (;;) {
    const ssize_t n = read(gPipe[0], &byte, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    std::lock_guard<std::mutex> lock(registryMutex());
    answerPending();
  }
}

// At exit (atexit): a dump requested just before the program returned from main completes
// before the process ends, instead of dying with it. Bounded: a dump stuck writing to a full
// disk must not hold the exit for ever.
extern "C" void finishPending() {
  const auto until = std::chrono::steady_clock::now() +
                     std::chrono::duration<double>(kExitWaitSeconds);
  while (std::chrono::steady_clock::now() < until) {
    {
      std::unique_lock<std::mutex> lock(registryMutex(), std::try_to_lock);
      if (lock.owns_lock()) {
        answerPending();
        return;
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(5));  // the thread is dumping
  }
}

// Installs the handler and starts the thread; with registryMutex() held.
Status install(int signo) {
  if (pipe2(gPipe, O_CLOEXEC) != 0) {
    return systemError(std::string("STRATA_FLIGHT_RECORDER_SIGNAL: pipe: ") + std::strerror(errno));
  }
  // The handler must never block on a full pipe.
  (void)fcntl(gPipe[1], F_SETFL, fcntl(gPipe[1], F_GETFL) | O_NONBLOCK);
  struct sigaction sa {};
  sa.sa_handler = onDumpSignal;
  sigemptyset(&sa.sa_mask);
  sa.sa_flags = SA_RESTART;
  if (sigaction(signo, &sa, nullptr) != 0) {
    return systemError(std::string("STRATA_FLIGHT_RECORDER_SIGNAL: sigaction: ") +
                       std::strerror(errno));
  }
  gSignal = signo;
  std::thread(dumpLoop).detach();
  std::atexit(finishPending);
  STRATA_INFO(kSubsysInit, "flight recorders dump on %s (STRATA_FLIGHT_RECORDER_SIGNAL)",
              strsignal(signo));
  return Status::ok();
}

}  // namespace

Status watchDumpSignal(Comm& c, int signo) {
  if (signo == 0) return Status::ok();
  std::lock_guard<std::mutex> lock(registryMutex());
  if (gSignal == 0) {
    STRATA_RETURN_IF_ERROR(install(signo));
  } else if (gSignal != signo) {
    return invalidUsage(
        std::string("STRATA_FLIGHT_RECORDER_SIGNAL: this process already dumps on ") +
        strsignal(gSignal) + ", not " + strsignal(signo));
  }
  registry().insert(&c);
  return Status::ok();
}

void unwatchDumpSignal(Comm& c) {
  std::lock_guard<std::mutex> lock(registryMutex());
  // A request the thread has not reached yet still includes this communicator: it dumps now,
  // before it is gone (a program that is signalled and then destroys its communicator at once).
  if (registry().count(&c) != 0 && gRequested.load() != gAnswered) dumpForSignal(c);
  registry().erase(&c);
}

}  // namespace strata::core
