#include "perf_plot.h"

#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <vector>

extern char** environ;

namespace strata::tools {

std::string plotScript() {
  char self[4096];
  const ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
  if (n > 0) {
    std::string dir(self, static_cast<size_t>(n));
    dir = dir.substr(0, dir.rfind('/'));
    const std::string installed = dir + "/strata-perf-plot";
    if (access(installed.c_str(), X_OK) == 0) return installed;
  }
#ifdef STRATA_PERF_PLOT_SOURCE
  if (access(STRATA_PERF_PLOT_SOURCE, X_OK) == 0) return STRATA_PERF_PLOT_SOURCE;
#endif
  return "";
}

Status plotReady() {
  if (plotScript().empty()) {
    return systemError(
        "--png: the plot script is missing (strata-perf-plot next to "
        "strata-perf, or tools/plot in the source tree)");
  }
  const char* path = std::getenv("PATH");
  std::string dirs = path != nullptr ? path : "";
  for (size_t start = 0; start <= dirs.size();) {
    size_t end = dirs.find(':', start);
    if (end == std::string::npos) end = dirs.size();
    const std::string dir = end > start ? dirs.substr(start, end - start) : ".";
    if (access((dir + "/gnuplot").c_str(), X_OK) == 0) return Status::ok();
    start = end + 1;
  }
  return systemError("--png: gnuplot is not installed (Debian: apt-get install gnuplot-nox)");
}

Status runPlot(const std::string& json, const std::string& png, const std::string& title,
               bool logBusbw) {
  const std::string script = plotScript();
  if (script.empty()) {
    return systemError(
        "--png: no plot script (strata-perf-plot next to strata-perf, or "
        "tools/plot in the source tree); run tools/plot on the --json file");
  }
  std::vector<std::string> args = {script, "-o", png};
  if (!title.empty()) {
    args.push_back("--title");
    args.push_back(title);
  }
  if (logBusbw) args.push_back("--log-y");
  args.push_back(json);
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  pid_t pid = 0;
  const int rc = posix_spawn(&pid, script.c_str(), nullptr, nullptr, argv.data(), environ);
  if (rc != 0) return systemError("--png: cannot run " + script + ": " + std::strerror(rc));
  int status = 0;
  while (waitpid(pid, &status, 0) < 0) {
    if (errno != EINTR)
      return systemError("--png: waiting for " + script + ": " + std::strerror(errno));
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0) {
    return systemError("--png: " + script + " failed (exit status " +
                       std::to_string(WIFEXITED(status) ? WEXITSTATUS(status) : -1) + ")");
  }
  return Status::ok();
}

}  // namespace strata::tools
