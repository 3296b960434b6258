// Environment parameters, read once through one registry (env_vars.def).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

namespace strata::env {

enum class Type { kString, kInt, kSize };

struct Param {
  const char* name;
  Type type;
  const char* defaultValue;
  const char* doc;
};

// Every registered parameter, in registry order.
const std::vector<Param>& registry();

// The value of a registered parameter: the environment's if set (read once and cached),
// otherwise the default. Unset and empty are the same. Asking for an unregistered name is a
// programming error and returns "".
std::string getString(const char* name);
// Integer parameters; a malformed value logs one warning and yields the default.
int64_t getInt(const char* name);
// Whether the user set it.
bool isSet(const char* name);
// A kSize parameter clamped to [lo, hi], with a warning when the value was outside.
size_t getSizeClamped(const char* name, size_t lo, size_t hi);

// Logs each parameter the user set, once per process, at INFO under ENV, and warns about any
// STRATA_* variable that is not in the registry (most likely a typo).
void logUserSettings();

// The registry as a Markdown table (| Variable | Default | Meaning |), for docs/env.md.
std::string markdownTable();

namespace detail {
// Test hook: forgets every cached value so the next read sees the current environment.
void resetForTesting();
// Parses a kInt (decimal, optional minus) or kSize (decimal with an optional binary K, M or G
// suffix) value. Returns false, leaving *out alone, when `text` is malformed or overflows.
bool parseInteger(const std::string& text, Type type, int64_t* out);
}  // namespace detail

}  // namespace strata::env
