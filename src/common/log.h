// Logging in NCCL's manner: STRATA_DEBUG picks the level, STRATA_DEBUG_SUBSYS the subsystems.
//
//   STRATA_DEBUG=WARN|INFO|TRACE (also NONE, VERSION)   default WARN
//   STRATA_DEBUG_SUBSYS=INIT,TOPO,PLAN,FABRIC,COLL,ENV  default INIT,ENV; ALL for every one;
//                                                       a leading ^ excludes the listed ones
//   STRATA_DEBUG_FILE=path   lines go to this file instead of stderr; %h is the host name, %p
//                            the pid (NCCL_DEBUG_FILE's pattern)
// Lines look like "host:pid:tid [rank] STRATA INFO message", host being STRATA_HOSTNAME when it
// is set (the emulated host), else this machine's name up to the first dot. Warnings go out
// once, where the error is detected; callers that propagate a Status do not log it again.
// A line may name several subsystems (kSubsysInit | kSubsysPlan), as NCCL's do: it shows when
// any of them is enabled. Communicator setup uses that, so the default INIT shows the whole
// setup and PLAN alone shows only the plans.
#pragma once

#include <cstdint>
#include <cstdio>
#include <string>

namespace strata {

enum class LogLevel { kNone = 0, kVersion = 1, kWarn = 2, kInfo = 3, kTrace = 4 };

enum LogSubsys : uint32_t {
  kSubsysInit = 1u << 0,
  kSubsysTopo = 1u << 1,
  kSubsysPlan = 1u << 2,
  kSubsysFabric = 1u << 3,
  kSubsysColl = 1u << 4,
  kSubsysEnv = 1u << 5,
  kSubsysAll = ~0u,
};

bool logEnabled(LogLevel level, uint32_t subsys);
void logMessage(LogLevel level, uint32_t subsys, const char* file, int line, const char* fmt, ...)
    __attribute__((format(printf, 5, 6)));
// The rank shown in the line prefix; -1 until a communicator is made.
void logSetRank(int rank);
// Prints "STRATA version X.Y.Z" once per process when STRATA_DEBUG is set to VERSION or above.
// Init calls it on rank 0 (each rank's "Init START" line carries the version too).
void logVersionOnce();

namespace detail {
// STRATA_DEBUG_FILE's expansion: %h -> host, %p -> pid, %% -> %; any other % is kept as is.
std::string expandLogFilePattern(const std::string& pattern, const std::string& host, long pid);
}  // namespace detail

namespace detail {
// Test hooks. The settings are read once per process; this forgets them (and the version line)
// so the next log call reads them again. Call env::detail::resetForTesting() first when the
// environment changed, since the log reads it through the registry's cache.
void logResetForTesting();
// Sends log lines to `out` instead of stderr; nullptr restores stderr.
void logSetOutputForTesting(FILE* out);
}  // namespace detail

}  // namespace strata

#define STRATA_LOG(level, subsys, ...)                                      \
  do {                                                                      \
    if (::strata::logEnabled(level, subsys))                                \
      ::strata::logMessage(level, subsys, __FILE__, __LINE__, __VA_ARGS__); \
  } while (0)
#define STRATA_WARN(subsys, ...) STRATA_LOG(::strata::LogLevel::kWarn, subsys, __VA_ARGS__)
#define STRATA_INFO(subsys, ...) STRATA_LOG(::strata::LogLevel::kInfo, subsys, __VA_ARGS__)
#define STRATA_TRACE(subsys, ...) STRATA_LOG(::strata::LogLevel::kTrace, subsys, __VA_ARGS__)
