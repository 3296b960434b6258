// Compressed steps: a float32 sum or average whose stage has a wire type (PlanExec::wire:
// STRATA_COMPRESS on the stages that cross hosts, or a plan file's `wire:`) runs its fabric call
// on a narrower copy of the step's range instead of the range itself:
//
//   narrow: this rank's input range -> the wire type, in host scratch (x2 fewer bytes);
//   the same fabric call (reduce-scatter, allreduce, all-gather) on the wire type, with the
//   fabric's own fp16/bf16 sum (combined in float, rounded once per combining step);
//   widen: the result -> float32, into the working buffer.
//
// fp16 is scaled by 2^k first and by 2^-k after (common/wire.h): before each fp16 step the
// members agree on k with a one-float max allreduce of their largest magnitudes on the same
// fabric, so every member scales alike, and the step's sum over its g members cannot overflow.
// Invariants: every member of a stage group computes the same wire type for the step (it
// comes from the plan and agreed settings), so all of them run the same extra max allreduce
// and the same wire-type call; an all-gather widens its whole range, this rank's own block
// included, so every member ends with the same bits.
#pragma once

#include <cstddef>

#include "common/status.h"
#include "common/wire.h"
#include "core/timeline.h"
#include "decompose/schedule.h"
#include "fabrics/fabric.h"

namespace strata::core {

// Runs step `s` (a reduce-scatter, allreduce or all-gather of float32, summed) on `f` in wire
// type `w`, reading `in` and writing `work` as core/run.cc says for the step's kind.
// `scratch` holds the step's range in the wire type (wireBytes(s) bytes). The casts go on
// timeline `t` when it is not null.
Status runWireStep(fabric::Fabric& f, const plan::Step& s, const void* in, void* work, WireType w,
                   void* scratch, Timeline* t);

// The bytes runWireStep needs in scratch for `s`.
size_t wireBytes(const plan::Step& s);

// The pipeline's allreduce in flight (core/run.cc), compressed: start narrows `in`'s
// range into `scratch` and starts the wire-type allreduce; finish waits for it and widens the
// result into `out`'s range. `scratch` must stay untouched in between.
struct WireAllReduce {
  WireType wire = WireType::kNone;
  int exp = 0;
  void* scratch = nullptr;
  void* out = nullptr;  // float32
  size_t count = 0;
};
StatusOr<WireAllReduce> startWireAllReduce(fabric::Fabric& f, const void* in, void* out,
                                           size_t count, WireType w, void* scratch, Timeline* t);
Status finishWireAllReduce(fabric::Fabric& f, const WireAllReduce& pending, Timeline* t);

}  // namespace strata::core
