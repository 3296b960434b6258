#include "api/handle.h"

#include <cstdint>
#include <mutex>
#include <vector>

namespace strata::api {
namespace {

static_assert(sizeof(uintptr_t) == 8, "a handle holds a 32-bit slot and a 32-bit generation");

struct Slot {
  std::unique_ptr<CommEntry> entry;  // null while the slot is free
  uint32_t generation = 0;
};

// Never destroyed: calls made from static destructors at exit still find a table.
struct Table {
  std::mutex mutex;
  std::vector<Slot> slots;
  std::vector<uint32_t> freeSlots;
};
Table& table() {
  static auto* t = new Table();
  return *t;
}

// handle = generation << 32 | slot << 1 | 1.
strataComm_t encode(uint32_t slot, uint32_t generation) {
  const uint64_t v = (uint64_t{generation} << 32) | (uint64_t{slot} << 1) | 1u;
  return reinterpret_cast<strataComm_t>(static_cast<uintptr_t>(v));
}

// The slot a handle names when it is live; -1 otherwise. Called with the lock held.
int64_t liveSlot(const Table& t, strataComm_t handle) {
  const auto v = static_cast<uint64_t>(reinterpret_cast<uintptr_t>(handle));
  if ((v & 1u) == 0) return -1;  // NULL, or an address: never a handle
  const uint64_t slot = (v & 0xffffffffu) >> 1;
  const auto generation = static_cast<uint32_t>(v >> 32);
  if (slot >= t.slots.size()) return -1;
  const Slot& s = t.slots[slot];
  if (!s.entry || s.generation != generation) return -1;
  return static_cast<int64_t>(slot);
}

}  // namespace

strataComm_t registerComm(std::unique_ptr<CommEntry> entry) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  uint32_t slot = 0;
  if (!t.freeSlots.empty()) {
    slot = t.freeSlots.back();
    t.freeSlots.pop_back();
  } else {
    slot = static_cast<uint32_t>(t.slots.size());
    t.slots.emplace_back();
  }
  t.slots[slot].entry = std::move(entry);
  return encode(slot, t.slots[slot].generation);
}

std::unique_ptr<CommEntry> unregisterComm(strataComm_t handle) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  const int64_t slot = liveSlot(t, handle);
  if (slot < 0) return nullptr;
  Slot& s = t.slots[static_cast<size_t>(slot)];
  ++s.generation;  // every handle of the old communicator is stale from here on
  t.freeSlots.push_back(static_cast<uint32_t>(slot));
  return std::move(s.entry);
}

CommEntry* lookupComm(strataComm_t handle) {
  Table& t = table();
  std::lock_guard<std::mutex> lock(t.mutex);
  const int64_t slot = liveSlot(t, handle);
  return slot < 0 ? nullptr : t.slots[static_cast<size_t>(slot)].entry.get();
}

Status CommEntry::finishInit(bool cancel) {
  if (!pending) return Status::ok();
  if (cancel) pending->cancel.set("aborted (strataCommAbort)");
  if (pending->thread.joinable()) pending->thread.join();
  Status st = pending->status;
  impl = std::move(pending->comm);
  pending.reset();
  if (!st.isOk()) {
    lastError = "nonblocking init: " + st.message();
    initError = st;
  }
  return st;
}

}  // namespace strata::api
