#include "api/handle.h"

#include <mutex>
#include <unordered_set>

namespace strata::api {
namespace {

std::mutex gMutex;
std::unordered_set<const strataComm*>& live() {
  static auto* set = new std::unordered_set<const strataComm*>();  // never destroyed: safe at exit
  return *set;
}

}  // namespace

void registerComm(strataComm* comm) {
  std::lock_guard<std::mutex> lock(gMutex);
  live().insert(comm);
}

bool unregisterComm(strataComm* comm) {
  std::lock_guard<std::mutex> lock(gMutex);
  return live().erase(comm) > 0;
}

bool isLive(const strataComm* comm) {
  std::lock_guard<std::mutex> lock(gMutex);
  return live().count(comm) > 0;
}

}  // namespace strata::api
