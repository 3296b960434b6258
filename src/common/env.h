// Environment parameters, read once through one registry (env_vars.def).
//
// Library code reads a variable through its typed accessor, generated from the registry:
//   StatusOr<uint64_t> bytes = env::get(env::var::STRATA_CHUNK_BYTES);
// A misspelt name does not compile, and the value comes back in the type the registry gives
// it, read with the one grammar of its kind (common/units.h for sizes and durations). A set but
// malformed value is an error naming the variable, never the default in disguise.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "common/status.h"

namespace strata::env {

// kSize: units::parseBytes; kDuration: units::parseDuration, a plain number in seconds.
enum class Type { kString, kInt, kSize, kDuration };

struct Param {
  const char* name;
  Type type;
  const char* defaultValue;
  const char* doc;
};

// Every registered parameter, in registry order.
const std::vector<Param>& registry();

namespace detail {
// One enumerator per registered variable, in registry order: a variable's index in registry().
enum class Index : int {
#define STRATA_ENV(NAME, TYPE, DEFAULT, DOC) NAME,
#include "common/env_vars.def"
#undef STRATA_ENV
};
}  // namespace detail

// A registered variable of type T; only the constants in env::var below exist.
template <Type T>
struct Var {
  detail::Index index;
};

// env::var::STRATA_CHUNK_BYTES and so on: one typed constant per variable of env_vars.def. They
// keep the variables' own spelling, so that a grep for a variable finds its readers.
namespace var {
#define STRATA_ENV(NAME, TYPE, DEFAULT, DOC) \
  inline constexpr Var<Type::TYPE> NAME{detail::Index::NAME};
#include "common/env_vars.def"
#undef STRATA_ENV
}  // namespace var

namespace detail {
// The value's text (the environment's when set, read once and cached; otherwise the default)
// and whether the user set it. Unset and empty are the same.
std::string textAt(Index i);
bool isSetAt(Index i);
StatusOr<int64_t> intAt(Index i);
StatusOr<uint64_t> sizeAt(Index i);
StatusOr<double> secondsAt(Index i);
// For env_names.cc: the registry index of `name` (-1 when unregistered); whether this is the
// first malformed read of `i` (warn once); whether user settings are yet to be logged.
int indexOf(const char* name);
bool firstMalformedRead(Index i);
bool firstUserSettingsLog();
}  // namespace detail

// The value of a variable, in its registry type. A malformed value is kInvalidArgument:
// "STRATA_CHUNK_BYTES=64XB: not a size; expected ...". Defaults always parse (a unit test
// checks every one).
inline std::string get(Var<Type::kString> v) { return detail::textAt(v.index); }
inline StatusOr<int64_t> get(Var<Type::kInt> v) { return detail::intAt(v.index); }
inline StatusOr<uint64_t> get(Var<Type::kSize> v) { return detail::sizeAt(v.index); }
// In seconds.
inline StatusOr<double> get(Var<Type::kDuration> v) { return detail::secondsAt(v.index); }

// Whether the user set it.
template <Type T>
bool isSet(Var<T> v) {
  return detail::isSetAt(v.index);
}
// The value as written (or the default's text), for messages.
template <Type T>
std::string text(Var<T> v) {
  return detail::textAt(v.index);
}

// By name, for tools that walk registry() (strata-info) or were written before the typed
// accessors; library code uses get(). An unregistered name is a programming error: it warns
// and reads as unset.
std::string getString(const char* name);
bool isSet(const char* name);
// kInt, kSize and kDuration (whole seconds) values; a malformed one warns once and yields the
// default, since a listing tool must go on.
int64_t getInt(const char* name);

// Logs each parameter the user set, once per process, at INFO under ENV, and warns about any
// STRATA_* variable that is not in the registry (most likely a typo).
void logUserSettings();

// The registry as a Markdown table (| Variable | Default | Meaning |), for docs/env.md.
std::string markdownTable();

namespace detail {
// Test hook: forgets every cached value so the next read sees the current environment.
void resetForTesting();
// Parses a kInt value: decimal, optional minus. Returns false, leaving *out alone, when `text`
// is malformed or overflows.
bool parseInteger(const std::string& text, int64_t* out);
}  // namespace detail

}  // namespace strata::env
