// Sizes and durations as users write them: one grammar for each, read the same way from
// environment variables (env.h), plan files (decompose/plan_file.h) and tool flags, and
// documented once in docs/env.md ("Sizes and durations").
//
// A size is a count of bytes: decimal digits, then optionally a binary unit, any case, with
// blanks allowed around the number and before the unit:
//   4096   4K   4k   4KiB   4KB   4 KiB   4MiB   1G   1gb   512B
// K, KiB and KB all mean 2^10 (KB is binary, as nccl-tests and numfmt --from=iec read it), M
// 2^20, G 2^30; B is bytes. A size is below 2^63. Signs, fractions, hex and other units are
// refused.
//
// A duration is a non-negative decimal number, fraction allowed, then optionally a unit, any
// case: ns, us, ms, s, min, h. A number without a unit is in the unit its setting names
// (seconds for STRATA_TIMEOUT):
//   600   0.25   1.5s   250ms   2min   1h
// Signs, exponents, inf and nan are refused.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "common/status.h"

namespace strata::units {

// Why a text is not a value, so that each reader can word its own message.
enum class Problem { kNone, kMalformed, kTooLarge };

// The size in `text`; *out is set only on kNone.
Problem parseBytes(std::string_view text, uint64_t* out);
// The same, as a status: "<what> '<text>': not a size; ..." naming the accepted forms.
StatusOr<uint64_t> bytesOf(std::string_view text, const std::string& what);
// A size as strata writes it: with the largest binary unit that divides it exactly ("64KiB",
// "3MiB", "1000"), which parseBytes reads back to the same value.
std::string bytesText(uint64_t bytes);

// The duration in `text`, in seconds; a number without a unit is counted in `plainUnitSeconds`
// (1 for seconds). *seconds is set only on kNone.
Problem parseDuration(std::string_view text, double plainUnitSeconds, double* seconds);
// The same, as a status: "<what> '<text>': not a duration; ...".
StatusOr<double> secondsOf(std::string_view text, double plainUnitSeconds, const std::string& what);

// The accepted forms, for messages.
inline constexpr const char* kSizeForms =
    "an integer of bytes with an optional binary unit K, KiB or KB (2^10), M, MiB or MB (2^20), "
    "G, GiB or GB (2^30), any case, below 2^63 (e.g. 4096, 64K, 4MiB)";
inline constexpr const char* kDurationForms =
    "a non-negative decimal number with an optional unit ns, us, ms, s, min or h (e.g. 600, "
    "0.5, 250ms, 2min)";

}  // namespace strata::units
