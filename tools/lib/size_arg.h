// Sizes on the command line: plan files' parser (plan::detail::parseSize), accepting the
// spellings users also type to nccl-tests: suffixes in any case, an optional "b", and KB/MB/GB
// read as binary like K/M/G.
#pragma once

#include <cctype>
#include <cstddef>
#include <string>

#include "decompose/plan_file.h"

namespace strata::tools {

// False for anything malformed, and for 2^63 bytes or more.
inline bool parseSizeArg(const std::string& text, size_t* out) {
  size_t digits = 0;
  while (digits < text.size() && std::isdigit(static_cast<unsigned char>(text[digits]))) ++digits;
  std::string suffix = text.substr(digits);
  for (char& ch : suffix) ch = static_cast<char>(std::tolower(static_cast<unsigned char>(ch)));
  static const char* const kSpellings[][2] = {{"", ""},     {"b", ""},   {"k", "K"},  {"kb", "K"},
                                              {"kib", "K"}, {"m", "M"},  {"mb", "M"}, {"mib", "M"},
                                              {"g", "G"},   {"gb", "G"}, {"gib", "G"}};
  for (const auto& spelling : kSpellings) {
    if (suffix != spelling[0]) continue;
    bool tooLarge = false;
    return plan::detail::parseSize(text.substr(0, digits) + spelling[1], out, &tooLarge);
  }
  return false;
}

}  // namespace strata::tools
