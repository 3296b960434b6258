// A process-wide change that overlapping scopes share: the first scope to open applies it, the
// last to close undoes it (scopes on several threads may overlap). `Change` names the change:
// static apply() and undo(), called under a mutex of its own. Each Change type has its own
// count, so unrelated changes never wait for each other.
#pragma once

#include <mutex>

namespace strata {

template <typename Change>
class CountedScope {
 public:
  CountedScope() {
    std::lock_guard<std::mutex> lock(mutex());
    if (users()++ == 0) Change::apply();
  }
  ~CountedScope() {
    std::lock_guard<std::mutex> lock(mutex());
    if (--users() == 0) Change::undo();
  }
  CountedScope(const CountedScope&) = delete;
  CountedScope& operator=(const CountedScope&) = delete;

 private:
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  static int& users() {
    static int n = 0;
    return n;
  }
};

}  // namespace strata
