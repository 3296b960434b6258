// The recovery test's clock and messages (recover_program.cc): wall-clock times that ranks of
// one machine compare, the victims' times of death passed through files, STRATA_TIMEOUT as the
// program reads it, and whether an error names a rank.
#pragma once

#include <unistd.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <string>

namespace strata::recovery {

inline double now() {
  timespec t;
  clock_gettime(CLOCK_REALTIME, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}

// STRATA_TIMEOUT in seconds (docs/env.md: a number of seconds, or with ms, s, min), 600 unset.
inline double strataTimeout() {
  const char* v = std::getenv("STRATA_TIMEOUT");
  if (v == nullptr || *v == '\0') return 600;
  char* end = nullptr;
  const double x = std::strtod(v, &end);
  const std::string unit = end;
  return unit == "ms" ? x / 1000 : unit == "min" ? x * 60 : x;
}

// The victims' times of death go through files: rank r writes DIR/died.r (renamed into place,
// so a reader never sees half of it) just before it dies or stalls.
inline void writeTime(const std::string& path, double t) {
  const std::string tmp = path + ".tmp";
  FILE* f = std::fopen(tmp.c_str(), "w");
  if (f == nullptr || std::fprintf(f, "%.9f\n", t) < 0 || std::fclose(f) != 0 ||
      std::rename(tmp.c_str(), path.c_str()) != 0) {
    std::fprintf(stderr, "recover_program: cannot write %s\n", path.c_str());
  }
}

// The time in `path`, waiting up to `seconds` for it to appear; NAN if it never does.
inline double readTime(const std::string& path, double seconds) {
  const double end = now() + seconds;
  do {
    if (FILE* f = std::fopen(path.c_str(), "r")) {
      double t = NAN;
      const int got = std::fscanf(f, "%lf", &t);
      std::fclose(f);
      if (got == 1) return t;
    }
    usleep(10000);
  } while (now() < end);
  return NAN;
}

// Does `message` name rank r ("rank 3", not "rank 30")?
inline bool names(const std::string& message, int r) {
  const std::string word = "rank " + std::to_string(r);
  for (size_t at = message.find(word); at != std::string::npos; at = message.find(word, at + 1)) {
    const size_t end = at + word.size();
    if (end == message.size() || !std::isdigit(static_cast<unsigned char>(message[end]))) {
      return true;
    }
  }
  return false;
}

}  // namespace strata::recovery
