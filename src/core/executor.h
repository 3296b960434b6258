// Where a call's bytes live. The executor loop (core/run.h) reaches memory and fabrics only
// through an Executor: host memory (this file), or CUDA device memory on the communicator's
// stream (core/device_side.cc), so one loop runs both.
#pragma once

#include <cstddef>
#include <cstring>

#include "common/reduce.h"
#include "common/status.h"
#include "core/group_table.h"
#include "core/run_memory.h"
#include "fabrics/fabric.h"

namespace strata::core {

class Executor {
 public:
  virtual ~Executor() = default;
  // dst <- src, `bytes` bytes (no overlap).
  virtual Status copy(void* dst, const void* src, size_t bytes) = 0;
  // buf[i] /= divisor (finishing strataAvg).
  virtual Status divide(void* buf, size_t count, strataDataType_t type, int divisor) = 0;
  // Working memory of at least `bytes`, reused across calls.
  virtual StatusOr<void*> scratch(size_t bytes) = 0;
  // The group's fabric for this memory. A missing one is a broken invariant: setup makes every
  // fabric a call needs before the call runs.
  virtual StatusOr<fabric::Fabric*> fabricOf(LevelGroup& g) = 0;
  // Host memory for the wire-type copy of a compressed step (core/wire_steps.h); slot 0 or 1 as
  // Scratch::wire says. Null: this executor's memory is not compressed (device programs have
  // no wire types: core/lower.cc).
  virtual void* wireScratch(int slot, size_t bytes) {
    (void)slot;
    (void)bytes;
    return nullptr;
  }
  // A fusion pack's buffer (core/fusion.h), slot 0 or 1 (RunMemory::fusionBuffer). Null: this
  // memory has no fusion (packs are host calls).
  virtual void* fusionBuffer(int slot, size_t bytes) {
    (void)slot;
    (void)bytes;
    return nullptr;
  }
};

class HostExecutor final : public Executor {
 public:
  explicit HostExecutor(RunMemory& memory) : memory_(memory) {}
  Status copy(void* dst, const void* src, size_t bytes) override {
    std::memcpy(dst, src, bytes);
    return Status::ok();
  }
  Status divide(void* buf, size_t count, strataDataType_t type, int divisor) override {
    scaleDown(buf, count, type, divisor);
    return Status::ok();
  }
  StatusOr<void*> scratch(size_t bytes) override { return memory_.scratch().get(bytes); }
  void* wireScratch(int slot, size_t bytes) override {
    return memory_.scratch().wire(slot, bytes);
  }
  void* fusionBuffer(int slot, size_t bytes) override {
    return memory_.fusionBuffer(slot).get(bytes);
  }
  StatusOr<fabric::Fabric*> fabricOf(LevelGroup& g) override {
    if (!g.fabric) return internalError("a step on a group this rank has no fabric for");
    return g.fabric.get();
  }

 private:
  RunMemory& memory_;
};

}  // namespace strata::core
