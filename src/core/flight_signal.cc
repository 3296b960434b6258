#include "core/flight_signal.h"

#include <fcntl.h>
#include <signal.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <set>
#include <thread>

#include "common/log.h"
#include "common/strings.h"
#include "core/comm.h"
#include "core/flight_dump.h"

namespace strata::core {
namespace {

int gPipe[2] = {-1, -1};  // written by the handler, read by the dumping thread
int gSignal = 0;          // the signal the handler is installed for; 0 none

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
  const char byte = 1;
  (void)!write(gPipe[1], &byte, 1);  // a full pipe already holds a request: nothing is lost
  errno = saved;
}

void dumpLoop() {
  char byte = 0;
  for (;;) {
    const ssize_t n = read(gPipe[0], &byte, 1);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    std::lock_guard<std::mutex> lock(registryMutex());
    for (Comm* c : registry()) {
      (void)dumpFlightRecorder(*c, std::string("signal ") + strsignal(gSignal));
    }
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
  STRATA_INFO(kSubsysInit, "flight recorders dump on %s (STRATA_FLIGHT_RECORDER_SIGNAL)",
              strsignal(signo));
  return Status::ok();
}

}  // namespace

StatusOr<int> parseDumpSignal(const std::string& value) {
  std::string v = lower(trim(value));
  if (v.empty()) return 0;
  if (v.rfind("sig", 0) == 0) v = v.substr(3);
  if (v == "usr1") return SIGUSR1;
  if (v == "usr2") return SIGUSR2;
  return invalidArgument("STRATA_FLIGHT_RECORDER_SIGNAL=" + value +
                         ": expected USR1 or USR2 (or SIGUSR1, SIGUSR2)");
}

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
  registry().erase(&c);
}

}  // namespace strata::core
