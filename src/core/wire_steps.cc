#include "core/wire_steps.h"

#include <cstdint>

#include "common/collective.h"

namespace strata::core {
namespace {

constexpr size_t kWireSize = 2;  // fp16 and bf16

float* floats(void* p, size_t offset) { return static_cast<float*>(p) + offset; }
const float* floats(const void* p, size_t offset) { return static_cast<const float*>(p) + offset; }
uint16_t* wires(void* p, size_t offset) { return static_cast<uint16_t*>(p) + offset; }

// The scale exponent every member of `f` uses for this step: from the largest magnitude any of
// them contributes (`mine`, n floats) and the number of values a sum adds (`terms`). One
// float allreduce (max) on the step's own fabric, before its data call: the same order on
// every member. bf16 needs none.
StatusOr<int> agreeExponent(fabric::Fabric& f, WireType w, const float* mine, size_t n, int terms) {
  if (w != WireType::kFp16) return 0;
  float m = maxAbsFinite(mine, n);
  STRATA_RETURN_IF_ERROR(f.allReduce(&m, &m, 1, strataFloat32, strataMax)
                             .withContext("agreeing on the fp16 scale of a compressed step"));
  return fp16ScaleExponent(m, terms);
}

// The casts to and from the wire type, on the timeline (compress, as much as the float side).
void narrow(Timeline* t, const float* src, uint16_t* dst, size_t n, WireType w, int exp) {
  TimelineSpan span(t, TimelineEvent::Cat::kCompress, "cast to the wire type",
                    t != nullptr ? t->running() : 0);
  span.event.bytes = n * sizeof(float);
  narrowScaled(src, dst, n, w, exp);
}

void widen(Timeline* t, const uint16_t* src, float* dst, size_t n, WireType w, int exp) {
  TimelineSpan span(t, TimelineEvent::Cat::kCompress, "cast from the wire type",
                    t != nullptr ? t->running() : 0);
  span.event.bytes = n * sizeof(float);
  widenScaled(src, dst, n, w, exp);
}

}  // namespace

size_t wireBytes(const plan::Step& s) { return s.count * kWireSize; }

Status runWireStep(fabric::Fabric& f, const plan::Step& s, const void* in, void* work, WireType w,
                   void* scratch, Timeline* t) {
  const strataDataType_t wt = wireDataType(w);
  switch (s.kind) {
    case Collective::kReduceScatter: {
      // Every member sends its whole range; it receives the sum of its block from g members.
      const float* src = floats(in, s.offset);
      STRATA_ASSIGN_OR_RETURN(int exp, agreeExponent(f, w, src, s.count, f.size()));
      narrow(t, src, wires(scratch, 0), s.count, w, exp);
      const size_t mine = s.displs[s.index];
      STRATA_RETURN_IF_ERROR(f.reduceScatter(scratch, wires(scratch, mine), s.counts.data(),
                                             s.displs.data(), wt, strataSum));
      widen(t, wires(scratch, mine), floats(work, s.offset + mine), s.counts[s.index], w, exp);
      return Status::ok();
    }
    case Collective::kAllReduce: {
      const float* src = floats(in, s.offset);
      STRATA_ASSIGN_OR_RETURN(int exp, agreeExponent(f, w, src, s.count, f.size()));
      narrow(t, src, wires(scratch, 0), s.count, w, exp);
      STRATA_RETURN_IF_ERROR(f.allReduce(scratch, scratch, s.count, wt, strataSum));
      widen(t, wires(scratch, 0), floats(work, s.offset), s.count, w, exp);
      return Status::ok();
    }
    case Collective::kAllGather: {
      // Nothing is added: the scale only keeps the largest block value below fp16's range.
      const size_t mine = s.displs[s.index];
      const float* own = floats(work, s.offset + mine);
      STRATA_ASSIGN_OR_RETURN(int exp, agreeExponent(f, w, own, s.counts[s.index], 1));
      narrow(t, own, wires(scratch, mine), s.counts[s.index], w, exp);
      STRATA_RETURN_IF_ERROR(
          f.allGather(wires(scratch, mine), scratch, s.counts.data(), s.displs.data(), wt));
      widen(t, wires(scratch, 0), floats(work, s.offset), s.count, w, exp);
      return Status::ok();
    }
    default:
      return internalError(std::string("a compressed ") + collectiveName(s.kind) +
                           " step; only reduce-scatter, allreduce and all-gather compress");
  }
}

StatusOr<WireAllReduce> startWireAllReduce(fabric::Fabric& f, const void* in, void* out,
                                           size_t count, WireType w, void* scratch, Timeline* t) {
  WireAllReduce p;
  p.wire = w;
  p.scratch = scratch;
  p.out = out;
  p.count = count;
  const float* src = floats(in, 0);
  STRATA_ASSIGN_OR_RETURN(p.exp, agreeExponent(f, w, src, count, f.size()));
  narrow(t, src, wires(scratch, 0), count, w, p.exp);
  STRATA_RETURN_IF_ERROR(f.allReduceStart(scratch, scratch, count, wireDataType(w), strataSum));
  return p;
}

Status finishWireAllReduce(fabric::Fabric& f, const WireAllReduce& pending, Timeline* t) {
  STRATA_RETURN_IF_ERROR(f.allReduceWait());
  widen(t, wires(pending.scratch, 0), floats(pending.out, 0), pending.count, pending.wire,
        pending.exp);
  return Status::ok();
}

}  // namespace strata::core
