#include "common/env.h"

#include <unistd.h>

#include <atomic>
#include <cctype>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <string_view>

#include "common/log.h"

extern char** environ;  // NOLINT: POSIX; scanned for unregistered STRATA_* names

namespace strata::env {
namespace {

// One cache slot per registry entry. The environment is read on first use and never again, so
// a value cannot change under a running communicator.
struct Slot {
  bool read = false;
  bool set = false;
  std::string value;  // the environment's value when set, otherwise the default
  bool parsed = false;
  int64_t number = 0;  // value as an integer, once parsed (the default if value is malformed)
};

struct State {
  std::mutex mutex;
  std::vector<Slot> slots;  // parallel to registry()
  std::atomic<bool> userSettingsLogged{false};
};

// A function-local static, so reads from other files' static initialisers are safe.
State& state() {
  static State s;
  return s;
}

int indexOf(const char* name) {
  const std::vector<Param>& params = registry();
  for (size_t i = 0; i < params.size(); ++i) {
    if (std::strcmp(params[i].name, name) == 0) return static_cast<int>(i);
  }
  return -1;
}

// The slot of registry entry `i`, read from the environment on first use. Caller holds the
// mutex. Never logs: log.cc reads its own settings through here while holding its own lock.
Slot& slotLocked(State& s, int i) {
  if (s.slots.empty()) s.slots.resize(registry().size());
  Slot& slot = s.slots[i];
  if (!slot.read) {
    const Param& p = registry()[i];
    const char* v = std::getenv(p.name);
    slot.set = v != nullptr && *v != '\0';
    slot.value = slot.set ? v : p.defaultValue;
    slot.read = true;
  }
  return slot;
}

void warnUnregistered(const char* name) {
  STRATA_WARN(kSubsysEnv, "internal: %s is not in env_vars.def; add it to the registry", name);
}

std::string markdownEscape(const char* text) {
  std::string out;
  for (const char* c = text; *c != '\0'; ++c) {
    if (*c == '|') out += '\\';  // a bare | would end the table cell
    out += *c;
  }
  return out;
}

}  // namespace

const std::vector<Param>& registry() {
  static const std::vector<Param> params = {
#define STRATA_ENV(NAME, TYPE, DEFAULT, DOC) {#NAME, Type::TYPE, DEFAULT, DOC},
#include "common/env_vars.def"
#undef STRATA_ENV
  };
  return params;
}

std::string getString(const char* name) {
  const int i = indexOf(name);
  if (i < 0) {
    warnUnregistered(name);
    return "";
  }
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return slotLocked(s, i).value;
}

int64_t getInt(const char* name) {
  const int i = indexOf(name);
  if (i < 0) {
    warnUnregistered(name);
    return 0;
  }
  const Param& p = registry()[i];
  std::string malformed;
  int64_t result = 0;
  {
    State& s = state();
    std::lock_guard<std::mutex> lock(s.mutex);
    Slot& slot = slotLocked(s, i);
    if (!slot.parsed) {
      slot.parsed = true;
      if (!detail::parseInteger(slot.value, p.type, &slot.number)) {
        malformed = slot.value;
        // Defaults always parse; tests/unit/test_env.cc checks every registered one.
        (void)detail::parseInteger(p.defaultValue, p.type, &slot.number);
      }
    }
    result = slot.number;
  }
  // Logged outside the lock (the log reads its settings through this file). Only the first
  // read parses, so the warning appears once per process.
  if (!malformed.empty()) {
    STRATA_WARN(
        kSubsysEnv, "%s=%s is not %s; using the default %s", p.name, malformed.c_str(),
        p.type == Type::kSize ? "a size (an integer with optional K, M or G suffix)" : "an integer",
        p.defaultValue);
  }
  return result;
}

bool isSet(const char* name) {
  const int i = indexOf(name);
  if (i < 0) {
    warnUnregistered(name);
    return false;
  }
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return slotLocked(s, i).set;
}

size_t getSizeClamped(const char* name, size_t lo, size_t hi) {
  int64_t v = getInt(name);
  if (v < static_cast<int64_t>(lo) || v > static_cast<int64_t>(hi)) {
    STRATA_WARN(kSubsysEnv, "%s=%lld is outside [%zu, %zu]; clamped", name,
                static_cast<long long>(v), lo, hi);
    v = v < static_cast<int64_t>(lo) ? static_cast<int64_t>(lo) : static_cast<int64_t>(hi);
  }
  return static_cast<size_t>(v);
}

void logUserSettings() {
  if (state().userSettingsLogged.exchange(true)) return;
  for (const Param& p : registry()) {
    if (isSet(p.name)) {
      STRATA_INFO(kSubsysEnv, "%s set by environment to %s", p.name, getString(p.name).c_str());
    }
  }
  // A misspelt variable would otherwise be ignored silently and the user would believe it took.
  constexpr std::string_view kPrefix = "STRATA_";
  for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
    const std::string_view entry(*e);
    if (entry.substr(0, kPrefix.size()) != kPrefix) continue;
    const std::string name(entry.substr(0, entry.find('=')));
    if (indexOf(name.c_str()) < 0) {
      STRATA_WARN(kSubsysEnv, "unknown variable %s ignored; strata-info --env lists the known ones",
                  name.c_str());
    }
  }
}

std::string markdownTable() {
  std::string out = "| Variable | Default | Meaning |\n|---|---|---|\n";
  for (const Param& p : registry()) {
    out += "| `";
    out += p.name;
    out += "` | ";
    out += *p.defaultValue != '\0' ? "`" + std::string(p.defaultValue) + "`" : "(none)";
    out += " | ";
    out += markdownEscape(p.doc);
    out += " |\n";
  }
  return out;
}

namespace detail {

void resetForTesting() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.slots.clear();
  s.userSettingsLogged.store(false);
}

bool parseInteger(const std::string& text, Type type, int64_t* out) {
  size_t pos = 0;
  const bool negative = type != Type::kSize && !text.empty() && text[0] == '-';
  if (negative) ++pos;
  const size_t firstDigit = pos;
  // Accumulate the magnitude as unsigned so INT64_MIN is representable before negation.
  const uint64_t limit = negative ? uint64_t{1} << 63 : static_cast<uint64_t>(INT64_MAX);
  uint64_t magnitude = 0;
  for (; pos < text.size() && text[pos] >= '0' && text[pos] <= '9'; ++pos) {
    const uint64_t digit = static_cast<uint64_t>(text[pos] - '0');
    if (magnitude > (limit - digit) / 10) return false;
    magnitude = magnitude * 10 + digit;
  }
  if (pos == firstDigit) return false;
  if (type == Type::kSize && pos < text.size()) {
    // Binary multiples: 64M means 64 << 20, as `numfmt --from=iec` reads it.
    const size_t unit = std::string_view("KMG").find(
        static_cast<char>(std::toupper(static_cast<unsigned char>(text[pos]))));
    if (unit == std::string_view::npos) return false;
    const int shift = 10 * static_cast<int>(unit + 1);
    if (magnitude > (limit >> shift)) return false;
    magnitude <<= shift;
    ++pos;
  }
  if (pos != text.size()) return false;
  *out = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
  return true;
}

}  // namespace detail
}  // namespace strata::env
