#include "common/log.h"

#include <strings.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cerrno>
#include <cstdarg>
#include <cstring>
#include <mutex>
#include <string>

#include "common/env.h"
#include "common/strings.h"
#include "strata/strata.h"

namespace strata {
namespace {

constexpr int kUnread = -1;

// logEnabled runs on every STRATA_LOG, so the settings live in atomics: level_ is kUnread until
// the environment has been read, and is stored (release) after mask_, so a reader that sees a
// level also sees its mask. A mutex rather than std::call_once guards the read, because the
// test hook has to be able to forget the settings and a once_flag cannot be reset.
std::atomic<int> g_level{kUnread};
std::atomic<uint32_t> g_mask{0};
std::mutex g_loadMutex;
std::atomic<bool> g_versionPrinted{false};
std::atomic<int> g_rank{-1};
std::atomic<FILE*> g_output{nullptr};  // the test hook's stream; nullptr: none
// STRATA_DEBUG_FILE, opened by the first line written (so a rank that logs nothing leaves no
// empty file): g_fileTried says the attempt was made, g_file holds the stream or nullptr
// (stderr). g_fileMutex makes one thread open it while the others wait.
std::mutex g_fileMutex;
std::atomic<bool> g_fileTried{false};
std::atomic<FILE*> g_file{nullptr};
// Read with the level, under g_loadMutex, before g_level is stored (release): a thread that
// saw the level sees them. Only the test hook changes them again.
std::string g_host;
std::string g_filePattern;

struct Parsed {
  int level;
  uint32_t mask;
  std::string warnings[2];  // logged once the settings are in place
};

bool equalsIgnoreCase(const std::string& a, const char* b) { return strcasecmp(a.c_str(), b) == 0; }

int parseLevel(const std::string& value, std::string* warning) {
  static const char* const kNames[] = {"NONE", "VERSION", "WARN", "INFO", "TRACE"};
  const std::string v = trim(value);
  for (int i = 0; i < 5; ++i) {
    if (equalsIgnoreCase(v, kNames[i])) return i;
  }
  *warning = "unknown STRATA_DEBUG value " + value + "; using WARN (NONE, VERSION, WARN, INFO or " +
             "TRACE)";
  return static_cast<int>(LogLevel::kWarn);
}

// NCCL's semantics: a list adds the named subsystems to an empty mask; a leading ^ removes them
// from a full one. ALL names every subsystem.
uint32_t parseSubsys(const std::string& value, std::string* warning) {
  static const struct {
    const char* name;
    uint32_t bit;
  } kSubsystems[] = {{"INIT", kSubsysInit},     {"TOPO", kSubsysTopo}, {"PLAN", kSubsysPlan},
                     {"FABRIC", kSubsysFabric}, {"COLL", kSubsysColl}, {"ENV", kSubsysEnv},
                     {"ALL", kSubsysAll}};
  const bool invert = !value.empty() && value[0] == '^';
  uint32_t mask = invert ? uint32_t{kSubsysAll} : 0u;
  std::string unknown;
  size_t begin = invert ? 1 : 0;
  while (begin <= value.size()) {
    size_t end = value.find(',', begin);
    if (end == std::string::npos) end = value.size();
    const std::string token = trim(value.substr(begin, end - begin));
    begin = end + 1;
    if (token.empty()) continue;
    bool known = false;
    for (const auto& s : kSubsystems) {
      if (!equalsIgnoreCase(token, s.name)) continue;
      mask = invert ? mask & ~s.bit : mask | s.bit;
      known = true;
    }
    if (!known) unknown += (unknown.empty() ? "" : ",") + token;
  }
  if (!unknown.empty()) {
    *warning = "unknown STRATA_DEBUG_SUBSYS name(s) " + unknown +
               " ignored (INIT, TOPO, PLAN, FABRIC, COLL, ENV or ALL)";
  }
  return mask;
}

// The host a line names: the emulated one (STRATA_HOSTNAME) when set, as ranks are grouped by
// it, else the first component of this machine's name, as NCCL prints it.
std::string lineHostName() {
  const std::string emulated = trim(env::get(env::var::STRATA_HOSTNAME));
  if (!emulated.empty()) return emulated;
  char buf[256] = {};
  if (gethostname(buf, sizeof(buf) - 1) != 0) return "unknown";
  return std::string(buf, std::strcspn(buf, "."));
}

// Reads STRATA_DEBUG, STRATA_DEBUG_SUBSYS and what the line prefix and sink need, once. The env
// registry never logs while reading a registered string, so holding g_loadMutex across it cannot
// recurse.
int loadSettings() {
  Parsed parsed;
  {
    std::lock_guard<std::mutex> lock(g_loadMutex);
    const int level = g_level.load(std::memory_order_acquire);
    if (level != kUnread) return level;
    parsed.level = parseLevel(env::get(env::var::STRATA_DEBUG), &parsed.warnings[0]);
    parsed.mask = parseSubsys(env::get(env::var::STRATA_DEBUG_SUBSYS), &parsed.warnings[1]);
    g_host = lineHostName();
    g_filePattern = env::get(env::var::STRATA_DEBUG_FILE);
    g_mask.store(parsed.mask, std::memory_order_relaxed);
    g_level.store(parsed.level, std::memory_order_release);
  }
  for (const std::string& w : parsed.warnings) {
    if (!w.empty()) STRATA_WARN(kSubsysEnv, "%s", w.c_str());
  }
  return parsed.level;
}

int currentLevel() {
  const int level = g_level.load(std::memory_order_acquire);
  return level != kUnread ? level : loadSettings();
}

long threadId() {
  thread_local const long tid = static_cast<long>(syscall(SYS_gettid));
  return tid;
}

// Writes one line with a single fprintf: stdio locks the stream per call, so concurrent
// threads' lines never interleave.
void emitTo(FILE* out, const char* tag, const char* message, const char* where) {
  char rank[16] = "-";
  const int r = g_rank.load(std::memory_order_relaxed);
  if (r >= 0) std::snprintf(rank, sizeof(rank), "%d", r);
  std::fprintf(out, "%s:%d:%ld [%s] STRATA %s%s%s\n", g_host.c_str(), static_cast<int>(getpid()),
               threadId(), rank, tag, message, where);
}

// Opens STRATA_DEBUG_FILE, once. A file that cannot be opened costs one warning on stderr, and
// the log stays there: losing the log would hide the very problem it was asked for.
void openDebugFile() {
  std::lock_guard<std::mutex> lock(g_fileMutex);
  if (g_fileTried.load(std::memory_order_acquire)) return;
  if (!g_filePattern.empty()) {
    const std::string path =
        detail::expandLogFilePattern(g_filePattern, g_host, static_cast<long>(getpid()));
    FILE* f = std::fopen(path.c_str(), "w");
    if (f != nullptr) {
      setvbuf(f, nullptr, _IOLBF, 0);  // whole lines reach the file even if the process dies
      g_file.store(f, std::memory_order_release);
    } else {
      std::string why = std::strerror(errno);
      if (!why.empty())
        why[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(why[0])));
      const std::string warning = "STRATA_DEBUG_FILE " + g_filePattern + ": cannot open " + path +
                                  ": " + why + "; logging to stderr";
      emitTo(stderr, "WARN ", warning.c_str(), "");
    }
  }
  g_fileTried.store(true, std::memory_order_release);
}

FILE* sink() {
  if (FILE* hooked = g_output.load(std::memory_order_acquire)) return hooked;
  if (!g_fileTried.load(std::memory_order_acquire)) openDebugFile();
  FILE* f = g_file.load(std::memory_order_acquire);
  return f != nullptr ? f : stderr;
}

void emit(const char* tag, const char* message, const char* where) {
  emitTo(sink(), tag, message, where);
}

const char* levelTag(LogLevel level) {
  switch (level) {
    case LogLevel::kWarn:
      return "WARN ";
    case LogLevel::kInfo:
      return "INFO ";
    case LogLevel::kTrace:
      return "TRACE ";
    default:
      return "";
  }
}

}  // namespace

bool logEnabled(LogLevel level, uint32_t subsys) {
  const int current = currentLevel();
  if (static_cast<int>(level) > current) return false;
  // Warnings go out whatever the subsystems, so an error is never hidden by a filter.
  if (level <= LogLevel::kWarn) return true;
  return (g_mask.load(std::memory_order_relaxed) & subsys) != 0;
}

void logMessage(LogLevel level, uint32_t subsys, const char* file, int line, const char* fmt, ...) {
  if (!logEnabled(level, subsys)) return;

  char small[1024];
  std::string large;
  char* message = small;
  va_list args;
  va_start(args, fmt);
  va_list retry;
  va_copy(retry, args);
  const int n = std::vsnprintf(small, sizeof(small), fmt, args);
  va_end(args);
  if (n >= static_cast<int>(sizeof(small))) {
    large.resize(static_cast<size_t>(n) + 1);
    std::vsnprintf(large.data(), large.size(), fmt, retry);
    message = large.data();
  }
  va_end(retry);
  // A trailing newline in the format would end the line before " (file:line)" and leave an
  // empty one; emit() supplies the newline.
  const size_t length = std::strlen(message);
  if (length > 0 && message[length - 1] == '\n') message[length - 1] = '\0';

  char where[300] = "";
  if (level == LogLevel::kTrace) {
    const char* slash = std::strrchr(file, '/');
    std::snprintf(where, sizeof(where), " (%s:%d)", slash != nullptr ? slash + 1 : file, line);
  }
  emit(levelTag(level), message, where);
}

void logSetRank(int rank) { g_rank.store(rank, std::memory_order_relaxed); }

void logVersionOnce() {
  // Only when asked for: the default level is WARN, and a version line from every rank of
  // every job would be noise. Callers print it from one rank.
  if (!env::isSet(env::var::STRATA_DEBUG)) return;
  if (currentLevel() < static_cast<int>(LogLevel::kVersion)) return;
  if (g_versionPrinted.exchange(true)) return;
  char message[64];
  std::snprintf(message, sizeof(message), "version %d.%d.%d", STRATA_MAJOR, STRATA_MINOR,
                STRATA_PATCH);
  emit("", message, "");
}

namespace detail {

void logResetForTesting() {
  std::lock_guard<std::mutex> lock(g_loadMutex);
  g_level.store(kUnread, std::memory_order_release);
  g_versionPrinted.store(false);
  std::lock_guard<std::mutex> fileLock(g_fileMutex);
  if (FILE* f = g_file.exchange(nullptr)) std::fclose(f);
  g_fileTried.store(false, std::memory_order_release);
}

std::string expandLogFilePattern(const std::string& pattern, const std::string& host, long pid) {
  std::string out;
  for (size_t i = 0; i < pattern.size(); ++i) {
    const char next = i + 1 < pattern.size() ? pattern[i + 1] : '\0';
    if (pattern[i] != '%' || (next != 'h' && next != 'p' && next != '%')) {
      out += pattern[i];
      continue;
    }
    out += next == 'h' ? host : next == 'p' ? std::to_string(pid) : std::string("%");
    ++i;
  }
  return out;
}

void logSetOutputForTesting(FILE* out) { g_output.store(out, std::memory_order_release); }

}  // namespace detail
}  // namespace strata
