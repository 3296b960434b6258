// reduceInto, reduce2 and scaleDown: the type and op are resolved once per call (a switch to a
// template instance), then the instruction-set variant; the kernels are in reduce_kernels.h
// (and reduce_avx2_narrow.h for fp16 and bf16 in the AVX2 variant).
#include "common/reduce.h"

#include "common/reduce_avx2_narrow.h"
#include "common/reduce_kernels.h"

namespace strata {
namespace {

using detail::OpTag;

template <typename E, template <typename> class Op>
void reduce2Portable(OpTag<Op>, void* dst, const void* a, const void* b, size_t n) {
  detail::reduce2Body<E, Op>(dst, a, b, n);
}

template <typename E>
void scaleDownPortable(void* buf, size_t n, int divisor) {
  detail::scaleDownBody<E>(static_cast<typename E::Storage*>(buf), n, divisor);
}

#if STRATA_HAVE_AVX2_KERNELS
template <typename E, template <typename> class Op>
STRATA_TARGET_AVX2 void reduce2Avx2(OpTag<Op>, void* dst, const void* a, const void* b, size_t n) {
  if constexpr (detail::kNarrowAvx2<E>) {
    detail::reduce2Narrow<detail::NarrowAvx2<E>, Op>(static_cast<uint16_t*>(dst),
                                                     static_cast<const uint16_t*>(a),
                                                     static_cast<const uint16_t*>(b), n);
  } else {
    detail::reduce2Body<E, Op>(dst, a, b, n);
  }
}

template <typename E>
STRATA_TARGET_AVX2 void scaleDownAvx2(void* buf, size_t n, int divisor) {
  if constexpr (detail::kNarrowAvx2<E>) {
    detail::scaleDownNarrow<detail::NarrowAvx2<E>>(static_cast<uint16_t*>(buf), n, divisor);
  } else {
    detail::scaleDownBody<E>(static_cast<typename E::Storage*>(buf), n, divisor);
  }
}
#endif

}  // namespace

void reduceInto(void* dst, const void* src, size_t count, strataDataType_t type, strataRedOp_t op) {
  // dst[i] op src[i] is reduce2 with dst == a; that also handles a (contract-breaking)
  // dst == src without violating restrict.
  reduce2(dst, dst, src, count, type, op);
}

void reduce2(void* dst, const void* a, const void* b, size_t count, strataDataType_t type,
             strataRedOp_t op) {
  if (count == 0) return;
  detail::dispatchReduction(type, op, [&](auto e, auto tag, bool avx2) {
    using E = decltype(e);
#if STRATA_HAVE_AVX2_KERNELS
    if (avx2) return reduce2Avx2<E>(tag, dst, a, b, count);
#endif
    reduce2Portable<E>(tag, dst, a, b, count);
  });
}

void scaleDown(void* buf, size_t count, strataDataType_t type, int divisor) {
  if (divisor <= 1 || count == 0) return;  // 1 changes nothing; below 1 is a caller bug
#if STRATA_HAVE_AVX2_KERNELS
  const bool avx2 = detail::useAvx2Kernels();
#endif
  detail::visitType(type, [&](auto e) {
    using E = decltype(e);
#if STRATA_HAVE_AVX2_KERNELS
    if (avx2) return scaleDownAvx2<E>(buf, count, divisor);
#endif
    scaleDownPortable<E>(buf, count, divisor);
  });
}

}  // namespace strata
