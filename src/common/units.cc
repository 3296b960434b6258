#include "common/units.h"

#include <cmath>
#include <cstdlib>

#include "common/strings.h"

namespace strata::units {
namespace {

// Splits "<number><blanks><unit>" (already trimmed) at the end of the number's characters.
void splitNumber(std::string_view text, std::string_view numberChars, std::string_view* number,
                 std::string* unit) {
  size_t end = text.find_first_not_of(numberChars);
  if (end == std::string_view::npos) end = text.size();
  *number = text.substr(0, end);
  *unit = lower(trimView(text.substr(end)));
}

}  // namespace

Problem parseBytes(std::string_view text, uint64_t* out) {
  std::string_view digits;
  std::string unit;
  splitNumber(trimView(text), "0123456789", &digits, &unit);
  if (digits.empty()) return Problem::kMalformed;
  static const struct {
    const char* name;
    int shift;
  } kUnits[] = {{"", 0},    {"b", 0},    {"k", 10}, {"kb", 10}, {"kib", 10}, {"m", 20},
                {"mb", 20}, {"mib", 20}, {"g", 30}, {"gb", 30}, {"gib", 30}};
  int shift = -1;
  for (const auto& u : kUnits) {
    if (unit == u.name) shift = u.shift;
  }
  if (shift < 0) return Problem::kMalformed;
  // Every digit is read before deciding, so "99999999999999999999x" is malformed, not large.
  const uint64_t limit = (uint64_t{1} << 63) >> shift;  // exclusive
  uint64_t value = 0;
  bool tooLarge = false;
  for (char c : digits) {
    const uint64_t digit = static_cast<uint64_t>(c - '0');
    if (tooLarge || value > (limit - 1 - digit) / 10) {
      tooLarge = true;
      continue;
    }
    value = value * 10 + digit;
  }
  if (tooLarge) return Problem::kTooLarge;
  *out = value << shift;
  return Problem::kNone;
}

StatusOr<uint64_t> bytesOf(std::string_view text, const std::string& what) {
  uint64_t value = 0;
  switch (parseBytes(text, &value)) {
    case Problem::kNone:
      return value;
    case Problem::kTooLarge:
      return invalidArgument(what + " '" + std::string(text) +
                             "': too large; a size must be below 2^63 bytes");
    case Problem::kMalformed:
      break;
  }
  return invalidArgument(what + " '" + std::string(text) + "': not a size; expected " + kSizeForms);
}

std::string bytesText(uint64_t bytes) {
  if (bytes == 0) return "0";
  static const struct {
    int shift;
    const char* suffix;
  } kUnits[] = {{30, "GiB"}, {20, "MiB"}, {10, "KiB"}};
  for (const auto& unit : kUnits) {
    const uint64_t mask = (uint64_t{1} << unit.shift) - 1;
    if ((bytes & mask) == 0) return std::to_string(bytes >> unit.shift) + unit.suffix;
  }
  return std::to_string(bytes);
}

Problem parseDuration(std::string_view text, double plainUnitSeconds, double* seconds) {
  std::string_view number;
  std::string unit;
  splitNumber(trimView(text), "0123456789.", &number, &unit);
  // Plain decimals only: at least one digit and at most one point (strtod would also take
  // signs, exponents, hex, inf and nan, none of which a user means here).
  size_t digitCount = 0, points = 0;
  for (char c : number) (c == '.' ? points : digitCount) += 1;
  if (digitCount == 0 || points > 1) return Problem::kMalformed;
  static const struct {
    const char* name;
    double seconds;
  } kUnits[] = {{"ns", 1e-9}, {"us", 1e-6}, {"ms", 1e-3}, {"s", 1}, {"min", 60}, {"h", 3600}};
  double scale = unit.empty() ? plainUnitSeconds : -1;
  for (const auto& u : kUnits) {
    if (unit == u.name) scale = u.seconds;
  }
  if (scale < 0) return Problem::kMalformed;
  const std::string digits(number);
  const double value = std::strtod(digits.c_str(), nullptr) * scale;
  if (!std::isfinite(value)) return Problem::kTooLarge;
  *seconds = value;
  return Problem::kNone;
}

StatusOr<double> secondsOf(std::string_view text, double plainUnitSeconds,
                           const std::string& what) {
  double value = 0;
  switch (parseDuration(text, plainUnitSeconds, &value)) {
    case Problem::kNone:
      return value;
    case Problem::kTooLarge:
      return invalidArgument(what + " '" + std::string(text) + "': too large a duration");
    case Problem::kMalformed:
      break;
  }
  return invalidArgument(what + " '" + std::string(text) + "': not a duration; expected " +
                         kDurationForms);
}

}  // namespace strata::units
