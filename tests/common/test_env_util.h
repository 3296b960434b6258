// Helpers for unit tests that change STRATA_* variables or read what the logger writes.
#pragma once

#include <cstdio>
#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "common/env.h"
#include "common/log.h"

namespace strata::test {

// Sets (or, with nullptr, unsets) one variable for the scope of a test and restores it after;
// both times the env and log caches are dropped so the next read sees the change.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const char* value) : name_(name) {
    const char* old = std::getenv(name);
    hadOld_ = old != nullptr;
    if (hadOld_) old_ = old;
    if (value != nullptr) {
      setenv(name, value, 1);
    } else {
      unsetenv(name);
    }
    reload();
  }
  ~ScopedEnv() {
    if (hadOld_) {
      setenv(name_.c_str(), old_.c_str(), 1);
    } else {
      unsetenv(name_.c_str());
    }
    reload();
  }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  static void reload() {
    env::detail::resetForTesting();
    strata::detail::logResetForTesting();
  }
  std::string name_;
  bool hadOld_ = false;
  std::string old_;
};

// Collects log lines in a temporary file for the scope of a test.
class CapturedLog {
 public:
  CapturedLog() : file_(std::tmpfile()) { strata::detail::logSetOutputForTesting(file_); }
  ~CapturedLog() {
    strata::detail::logSetOutputForTesting(nullptr);
    std::fclose(file_);
  }
  CapturedLog(const CapturedLog&) = delete;
  CapturedLog& operator=(const CapturedLog&) = delete;

  std::string text() {
    std::fflush(file_);
    std::rewind(file_);
    std::string out;
    char buf[4096];
    for (size_t n; (n = std::fread(buf, 1, sizeof(buf), file_)) > 0;) out.append(buf, n);
    return out;
  }

  std::vector<std::string> lines() {
    std::vector<std::string> out;
    std::istringstream in(text());
    for (std::string line; std::getline(in, line);) out.push_back(line);
    return out;
  }

 private:
  std::FILE* file_;
};

// How many times `needle` occurs in `haystack`, overlaps included.
inline int countOf(const std::string& haystack, const std::string& needle) {
  int n = 0;
  for (size_t at = haystack.find(needle); at != std::string::npos;
       at = haystack.find(needle, at + 1)) {
    ++n;
  }
  return n;
}

}  // namespace strata::test
