// reduceMany: every source combined into dst in one pass, block by block through an L1-sized
// accumulator (reduce_kernels.h, reduceManyBody).
#include <cstring>

#include "common/datatype.h"
#include "common/reduce.h"
#include "common/reduce_avx2_narrow.h"
#include "common/reduce_kernels.h"

namespace strata {
namespace {

template <typename E, template <typename> class Op>
void reduceManyPortable(detail::OpTag<Op>, void* dst, const void* const* srcs, int nsrc, size_t n) {
  detail::reduceManyBody<E, Op>(dst, srcs, nsrc, n);
}

#if STRATA_HAVE_AVX2_KERNELS
template <typename E, template <typename> class Op>
STRATA_TARGET_AVX2 void reduceManyAvx2(detail::OpTag<Op>, void* dst, const void* const* srcs,
                                       int nsrc, size_t n) {
  if constexpr (detail::kNarrowAvx2<E>) {
    detail::reduceManyNarrow<detail::NarrowAvx2<E>, Op>(dst, srcs, nsrc, n);
  } else {
    detail::reduceManyBody<E, Op>(dst, srcs, nsrc, n);
  }
}
#endif

}  // namespace

void reduceMany(void* dst, const void* const* srcs, int nsrc, size_t count, strataDataType_t type,
                strataRedOp_t op) {
  if (count == 0 || nsrc < 1 || !validDataType(type) || !validRedOp(op)) return;
  if (nsrc == 1) {
    // A copy, bit for bit (no widening that would quieten a signalling NaN).
    if (dst != srcs[0]) std::memcpy(dst, srcs[0], count * dataTypeSize(type));
    return;
  }
  // Two sources need no accumulator: one rounding per element either way.
  if (nsrc == 2) return reduce2(dst, srcs[0], srcs[1], count, type, op);
  detail::dispatchReduction(type, op, [&](auto e, auto tag, bool avx2) {
    using E = decltype(e);
#if STRATA_HAVE_AVX2_KERNELS
    if (avx2) return reduceManyAvx2<E>(tag, dst, srcs, nsrc, count);
#endif
    reduceManyPortable<E>(tag, dst, srcs, nsrc, count);
  });
}

}  // namespace strata
