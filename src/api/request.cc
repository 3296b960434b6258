#include "api/request.h"

#include <mutex>
#include <unordered_map>

namespace strata::api {
namespace {

std::mutex gMutex;
// Every live request, and whether a thread is completing it now.
std::unordered_map<const strataRequest*, bool>& live() {
  static auto* map = new std::unordered_map<const strataRequest*, bool>();  // never destroyed
  return *map;
}

}  // namespace

strataRequest* newRequest(strataComm_t comm) {
  auto* r = new strataRequest();
  r->comm = comm;
  std::lock_guard<std::mutex> lock(gMutex);
  live().emplace(r, false);
  return r;
}

Claim claimRequest(const strataRequest* r) {
  std::lock_guard<std::mutex> lock(gMutex);
  auto it = live().find(r);
  if (it == live().end()) return Claim::kNotLive;
  if (it->second) return Claim::kBusy;
  it->second = true;
  return Claim::kClaimed;
}

strataComm_t requestComm(strataRequest_t* request) {
  if (request == nullptr) return nullptr;
  std::lock_guard<std::mutex> lock(gMutex);
  const strataRequest* r = *request;
  return live().count(r) != 0 ? r->comm : nullptr;
}

void releaseRequest(const strataRequest* r) {
  std::lock_guard<std::mutex> lock(gMutex);
  auto it = live().find(r);
  if (it != live().end()) it->second = false;
}

void freeRequest(strataRequest* r) {
  {
    std::lock_guard<std::mutex> lock(gMutex);
    live().erase(r);
  }
  delete r;
}

}  // namespace strata::api
