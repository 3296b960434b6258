// The registry's storage and typed reads. Nothing here logs (see slotLocked); the by-name
// reads, the user-settings log and the Markdown table are in env_names.cc.
#include "common/env.h"

#include <atomic>
#include <cstdlib>
#include <cstring>
#include <mutex>

#include "common/units.h"

namespace strata::env {
namespace {

// One cache slot per registry entry. The environment is read on first use and never again, so
// a value cannot change under a running communicator.
struct Slot {
  bool read = false;
  bool set = false;
  std::string value;  // the environment's value when set, otherwise the default
  bool warned = false;  // getInt() (env_names.cc) warned about a malformed value
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

// The slot of registry entry `i`, read from the environment on first use. Caller holds the
// mutex. Nothing in this file logs: log.cc reads its own settings through here while holding
// its own lock, and the NCCL drop-in compiles this file without the log.
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

}  // namespace

namespace detail {

int indexOf(const char* name) {
  const std::vector<Param>& params = registry();
  for (size_t i = 0; i < params.size(); ++i) {
    if (std::strcmp(params[i].name, name) == 0) return static_cast<int>(i);
  }
  return -1;
}

bool firstMalformedRead(Index i) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  Slot& slot = slotLocked(s, static_cast<int>(i));
  const bool first = !slot.warned;
  slot.warned = true;
  return first;
}

bool firstUserSettingsLog() { return !state().userSettingsLogged.exchange(true); }

}  // namespace detail

namespace {

Slot copyOf(int i) {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  return slotLocked(s, i);
}

Status malformed(const Param& p, const std::string& value, const std::string& expected) {
  return invalidArgument(std::string(p.name) + "=" + value + ": " + expected);
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

namespace detail {

std::string textAt(Index i) { return copyOf(static_cast<int>(i)).value; }

bool isSetAt(Index i) { return copyOf(static_cast<int>(i)).set; }

StatusOr<int64_t> intAt(Index i) {
  const Param& p = registry()[static_cast<int>(i)];
  const std::string value = textAt(i);
  int64_t v = 0;
  if (!parseInteger(value, &v)) return malformed(p, value, "not an integer");
  return v;
}

StatusOr<uint64_t> sizeAt(Index i) {
  const Param& p = registry()[static_cast<int>(i)];
  const std::string value = textAt(i);
  uint64_t v = 0;
  switch (units::parseBytes(value, &v)) {
    case units::Problem::kNone:
      return v;
    case units::Problem::kTooLarge:
      return malformed(p, value, "too large; a size must be below 2^63 bytes");
    case units::Problem::kMalformed:
      break;
  }
  return malformed(p, value, std::string("not a size; expected ") + units::kSizeForms);
}

StatusOr<double> secondsAt(Index i) {
  const Param& p = registry()[static_cast<int>(i)];
  const std::string value = textAt(i);
  double v = 0;
  switch (units::parseDuration(value, 1, &v)) {
    case units::Problem::kNone:
      return v;
    case units::Problem::kTooLarge:
      return malformed(p, value, "too large a duration");
    case units::Problem::kMalformed:
      break;
  }
  return malformed(p, value,
                   std::string("not a duration; expected ") + units::kDurationForms +
                       "; a number alone is seconds");
}

void resetForTesting() {
  State& s = state();
  std::lock_guard<std::mutex> lock(s.mutex);
  s.slots.clear();
  s.userSettingsLogged.store(false);
}

bool parseInteger(const std::string& text, int64_t* out) {
  size_t pos = 0;
  const bool negative = !text.empty() && text[0] == '-';
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
  if (pos == firstDigit || pos != text.size()) return false;
  *out = negative ? static_cast<int64_t>(0 - magnitude) : static_cast<int64_t>(magnitude);
  return true;
}

}  // namespace detail
}  // namespace strata::env
