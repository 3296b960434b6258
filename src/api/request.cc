#include "api/request.h"

#include <mutex>
#include <unordered_set>

namespace strata::api {
namespace {

std::mutex gMutex;
std::unordered_set<const strataRequest*>& live() {
  static auto* set = new std::unordered_set<const strataRequest*>();  // never destroyed
  return *set;
}

}  // namespace

strataRequest* newRequest() {
  auto* r = new strataRequest();
  std::lock_guard<std::mutex> lock(gMutex);
  live().insert(r);
  return r;
}

bool isLiveRequest(const strataRequest* r) {
  std::lock_guard<std::mutex> lock(gMutex);
  return live().count(r) > 0;
}

void freeRequest(strataRequest* r) {
  {
    std::lock_guard<std::mutex> lock(gMutex);
    live().erase(r);
  }
  delete r;
}

}  // namespace strata::api
