// Small text helpers every reader of user input needs (environment values, files, flags), so
// that each does not write its own.
#pragma once

#include <string>
#include <string_view>

namespace strata {

// `text` in ASCII lower case (locale-independent: user input is compared with ASCII names).
std::string lower(std::string_view text);

// `text` without leading and trailing ASCII white space (space, tab, CR, LF, VT, FF).
std::string_view trimView(std::string_view text);
inline std::string trim(std::string_view text) { return std::string(trimView(text)); }

}  // namespace strata
