// What a process holds of strata's, for the recovery test's leak check (recover_program.cc):
// threads, sockets, mappings of /dev/shm and /dev/shm entries this process created. Measured
// before the first strata call and again after every communicator was destroyed; the second
// must come back to the first (threads and sockets close asynchronously, so the check waits a
// little for them).
#pragma once

#include <dirent.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <string>
#include <thread>

namespace strata::recovery {

struct Usage {
  int threads = 0;     // entries of /proc/self/task
  int sockets = 0;     // file descriptors that are sockets
  int fds = 0;         // all file descriptors
  int shmMaps = 0;     // mappings of files under /dev/shm (strata's segments, UCX's)
  int shmEntries = 0;  // /dev/shm entries named as strata names this process's segments

  bool operator==(const Usage& o) const {
    return threads == o.threads && sockets == o.sockets && fds == o.fds && shmMaps == o.shmMaps &&
           shmEntries == o.shmEntries;
  }
  std::string text() const {
    return std::to_string(threads) + " threads, " + std::to_string(fds) + " fds (" +
           std::to_string(sockets) + " sockets), " + std::to_string(shmMaps) +
           " mappings of /dev/shm, " + std::to_string(shmEntries) + " /dev/shm/strata-" +
           std::to_string(getpid()) + "-* entries";
  }
};

inline Usage measureUsage() {
  Usage u;
  if (DIR* d = opendir("/proc/self/task")) {
    while (const dirent* e = readdir(d)) u.threads += e->d_name[0] != '.';
    closedir(d);
  }
  if (DIR* d = opendir("/proc/self/fd")) {
    const int own = dirfd(d);
    while (const dirent* e = readdir(d)) {
      if (e->d_name[0] == '.' || std::stoi(e->d_name) == own) continue;
      ++u.fds;
      char target[256];
      const std::string link = std::string("/proc/self/fd/") + e->d_name;
      const ssize_t len = readlink(link.c_str(), target, sizeof(target) - 1);
      if (len > 0 && std::string(target, static_cast<size_t>(len)).rfind("socket:", 0) == 0) {
        ++u.sockets;
      }
    }
    closedir(d);
  }
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    if (line.find(" /dev/shm/") != std::string::npos) ++u.shmMaps;
  }
  // fabrics/shm/shm_segment.cc names a segment /strata-<creator's pid>-<n>-<random> and unlinks
  // it once every member mapped it.
  const std::string mine = "strata-" + std::to_string(getpid()) + "-";
  if (DIR* d = opendir("/dev/shm")) {
    while (const dirent* e = readdir(d)) u.shmEntries += std::string(e->d_name).rfind(mine, 0) == 0;
    closedir(d);
  }
  return u;
}

// The threads' names and the descriptors' targets, to name what leaked.
inline std::string listHeld() {
  std::string s = "threads:";
  if (DIR* d = opendir("/proc/self/task")) {
    while (const dirent* e = readdir(d)) {
      if (e->d_name[0] == '.') continue;
      std::ifstream comm(std::string("/proc/self/task/") + e->d_name + "/comm");
      std::string name;
      std::getline(comm, name);
      s += " " + name;
    }
    closedir(d);
  }
  s += "; fds:";
  if (DIR* d = opendir("/proc/self/fd")) {
    const int own = dirfd(d);
    while (const dirent* e = readdir(d)) {
      if (e->d_name[0] == '.' || std::stoi(e->d_name) == own) continue;
      char target[256];
      const std::string link = std::string("/proc/self/fd/") + e->d_name;
      const ssize_t len = readlink(link.c_str(), target, sizeof(target) - 1);
      s += " " + std::string(e->d_name) + "=" +
           (len > 0 ? std::string(target, static_cast<size_t>(len)) : "?");
    }
    closedir(d);
  }
  s += "; /dev/shm mappings:";
  std::ifstream maps("/proc/self/maps");
  for (std::string line; std::getline(maps, line);) {
    const size_t at = line.find(" /dev/shm/");
    if (at != std::string::npos) s += line.substr(at);
  }
  return s;
}

// Waits up to `seconds` for the usage to come back to `before`; returns the last measurement.
inline Usage waitForUsage(const Usage& before, double seconds) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  for (;;) {
    const Usage now = measureUsage();
    if (now == before || std::chrono::steady_clock::now() > end) return now;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

}  // namespace strata::recovery
