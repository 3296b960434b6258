// The instruction set of a prepared call (core/program.h): what one executor loop
// (core/run.h: execute) runs, on host or device memory alike. prepare() lowers every collective
// to these (core/lower.cc); nothing is decided while they run.
//
// Buffers are named by role and element offset (BufRef), never by address: one program serves
// every call of its shape, and a fusion pack's buffers are only known when it runs.
//
// Invariants the lowering keeps and the executor relies on:
// - at most one allreduce is in flight (kStart .. kWait), and every kStart has its kWait later
//   in the same program; the steps between run while it is in flight (fabric::IdleHook);
// - a kStep's or kStart's group is one this rank is a member of, made before the program was
//   handed out (groups and plans live as long as the communicator);
// - a step's `step` points into a schedule the program keeps (Program::keep);
// - every rank's program has the same fabric operations on each group, in the same order.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "common/collective.h"
#include "common/wire.h"
#include "decompose/schedule.h"

namespace strata::core {

struct LevelGroup;

// The buffers an instruction names.
enum class Buf : uint8_t {
  kNone,
  kSend,     // the call's sendbuff
  kRecv,     // the call's recvbuff
  kScratch,  // the executor's scratch (Program::scratchBytes of it)
  kFusion,   // a fusion pack's buffer (core/fusion.h), the pack's elements one after another
};

// Element `at` of buffer `buf` (elements of the call's type).
struct BufRef {
  Buf buf = Buf::kNone;
  size_t at = 0;
};

enum class Op : uint8_t {
  // A fabric collective: `step` (a plan::Step: its kind, ranges relative to `work`, root) on
  // `group`'s fabric, in wire type `wire`. It reads `in` (its first step's input; the working
  // buffer itself afterwards) and works in `work`, as decompose/schedule.h says for its kind.
  // With `whole`, `in` and `work` are the call's own buffers and the step's counts describe
  // them (a flat reduce-scatter or all-gather straight between the user's buffers).
  kStep,
  // The pipeline's allreduce `step` on `group`, started: in flight until the next kWait.
  kStart,
  // Waits for the allreduce in flight (piece `piece` of `pieces`, for messages).
  kWait,
  kCopy,    // work[0, count) <- in[0, count)
  kDivide,  // work[0, count) /= the communicator's size: finishing strataAvg
  kPack,    // the fusion members' inputs, one after another, into Buf::kFusion
  kUnpack,  // Buf::kFusion's elements back to each member's recvbuff
  kPeer,    // the call's send or receive on `group` (the flat group)
};

struct Instr {
  Op op = Op::kCopy;
  const plan::Step* step = nullptr;  // kStep, kStart
  LevelGroup* group = nullptr;       // kStep, kStart, kPeer
  WireType wire = WireType::kNone;   // kStep, kStart
  bool whole = false;                // kStep
  BufRef in, work;
  size_t count = 0;                  // kCopy, kDivide
  // kStep and kStart: the step's place in its schedule, 1-based (messages, timeline, flight
  // recorder); kWait: the piece whose allreduce it waits for.
  int index = 0, total = 0;
};

// How messages name a fabric step (kStep, kStart) running on `fabric`: "step 2 of 3 (allreduce
// at level 1, fabric staged<more>)".
inline std::string stepText(const Instr& i, const std::string& fabric,
                            const std::string& more = "") {
  const plan::Step& s = *i.step;
  return "step " + std::to_string(i.index) + " of " + std::to_string(i.total) + " (" +
         collectiveName(s.kind) + " at level " +
         (s.level == plan::kFlatLevel ? std::string("flat") : std::to_string(s.level)) +
         ", fabric " + fabric + more + ")";
}

}  // namespace strata::core
