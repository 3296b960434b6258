// The registry by name: for tools that walk it, the log of user settings and the Markdown table.
// Apart from env.cc because these log, and env.cc must not (see there).
#include <unistd.h>

#include <string_view>

#include "common/env.h"
#include "common/log.h"
#include "common/units.h"

extern char** environ;  // NOLINT: POSIX; scanned for unregistered STRATA_* names

namespace strata::env {

using detail::indexOf;

namespace {

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

// The value of entry `i` read with its type's grammar; the result of a kInt and kSize read
// widened to the type getInt() returns.
StatusOr<int64_t> integerOf(int i) {
  const Param& p = registry()[i];
  switch (p.type) {
    case Type::kInt:
      return detail::intAt(static_cast<detail::Index>(i));
    case Type::kSize: {
      STRATA_ASSIGN_OR_RETURN(uint64_t v, detail::sizeAt(static_cast<detail::Index>(i)));
      return static_cast<int64_t>(v);  // below 2^63 by the grammar
    }
    case Type::kDuration: {
      STRATA_ASSIGN_OR_RETURN(double v, detail::secondsAt(static_cast<detail::Index>(i)));
      return static_cast<int64_t>(v < 9e18 ? v : 9e18);
    }
    case Type::kString:
      break;
  }
  return invalidArgument(std::string(p.name) + " is text, not a number");
}

}  // namespace

std::string getString(const char* name) {
  const int i = indexOf(name);
  if (i < 0) {
    warnUnregistered(name);
    return "";
  }
  return detail::textAt(static_cast<detail::Index>(i));
}

int64_t getInt(const char* name) {
  const int i = indexOf(name);
  if (i < 0) {
    warnUnregistered(name);
    return 0;
  }
  StatusOr<int64_t> v = integerOf(i);
  if (v.isOk()) return v.value();
  const Param& p = registry()[i];
  if (detail::firstMalformedRead(static_cast<detail::Index>(i))) {
    STRATA_WARN(kSubsysEnv, "%s; using the default %s", v.status().message().c_str(),
                p.defaultValue);
  }
  const std::string saved = p.defaultValue;
  int64_t fallback = 0;
  if (p.type == Type::kInt) {
    (void)detail::parseInteger(saved, &fallback);
  } else if (p.type == Type::kSize) {
    uint64_t bytes = 0;
    (void)units::parseBytes(saved, &bytes);
    fallback = static_cast<int64_t>(bytes);
  } else if (p.type == Type::kDuration) {
    double seconds = 0;
    (void)units::parseDuration(saved, 1, &seconds);
    fallback = static_cast<int64_t>(seconds);
  }
  return fallback;
}

bool isSet(const char* name) {
  const int i = indexOf(name);
  if (i < 0) {
    warnUnregistered(name);
    return false;
  }
  return detail::isSetAt(static_cast<detail::Index>(i));
}

void logUserSettings() {
  if (!detail::firstUserSettingsLog()) return;
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

}  // namespace strata::env
