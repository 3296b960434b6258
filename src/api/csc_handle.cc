#include "api/csc_handle.h"

#include <cstdint>
#include <mutex>
#include <unordered_map>

namespace strata::api {
namespace {

// Never destroyed: calls made from static destructors at exit still find a table.
struct Table {
  std::mutex mutex;
  uint64_t lastId = 0;
  std::unordered_map<uint64_t, std::unique_ptr<CscEntry>> entries;
};
Table& table() {
  static auto* t = new Table();
  return *t;
}

// handle = id << 1 | 1.
strataCsc_t encode(uint64_t id) {
  return reinterpret_cast<strataCsc_t>(static_cast<uintptr_t>((id << 1) | 1u));
}
uint64_t decode(strataCsc_t handle) {
  const auto v = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(handle));
  return (v & 1u) != 0 ? v >> 1 : 0;  // 0: NULL or an address, never an id
}

}  // namespace

strataCsc_t registerCsc(std::unique_ptr<CscEntry> entry) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  const uint64_t id = ++t.lastId;
  t.entries.emplace(id, std::move(entry));
  return encode(id);
}

std::unique_ptr<CscEntry> unregisterCsc(strataCsc_t handle) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = t.entries.find(decode(handle));
  if (it == t.entries.end()) return nullptr;
  std::unique_ptr<CscEntry> entry = std::move(it->second);
  t.entries.erase(it);
  return entry;
}

CscEntry* lookupCsc(strataCsc_t handle) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  auto it = t.entries.find(decode(handle));
  return it == t.entries.end() ? nullptr : it->second.get();
}

}  // namespace strata::api
