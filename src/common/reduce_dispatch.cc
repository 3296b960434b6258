// Which instruction-set variant of the reduction kernels runs: the best the CPU has, unless a
// test or benchmark forces another (setKernelIsa).
#include <atomic>

#include "common/reduce.h"
#include "common/reduce_kernels.h"

namespace strata::detail {
namespace {

KernelIsa detectIsa() {
#if STRATA_HAVE_AVX2_KERNELS
  // GCC's runtime also checks that the OS saves the AVX state (XGETBV). Every AVX2 CPU has
  // F16C, but the variant uses both, so it asks for both. The init is idempotent and makes the
  // answer right even for a call from a static constructor that runs before libgcc's.
  __builtin_cpu_init();
  if (__builtin_cpu_supports("avx2") && __builtin_cpu_supports("f16c")) return KernelIsa::kAvx2;
#endif
  return KernelIsa::kPortable;
}

KernelIsa bestIsa() {
  static const KernelIsa best = detectIsa();
  return best;
}

// -1 until the first call: then the best ISA, or what setKernelIsa chose.
std::atomic<int> g_isa{-1};

}  // namespace

bool kernelIsaSupported(KernelIsa isa) {
  return isa == KernelIsa::kPortable || (isa == KernelIsa::kAvx2 && bestIsa() == isa);
}

KernelIsa kernelIsa() {
  int isa = g_isa.load(std::memory_order_relaxed);
  if (isa < 0) {
    isa = static_cast<int>(bestIsa());
    int unset = -1;
    // A concurrent setKernelIsa wins over the default.
    if (!g_isa.compare_exchange_strong(unset, isa, std::memory_order_relaxed)) isa = unset;
  }
  return static_cast<KernelIsa>(isa);
}

bool setKernelIsa(KernelIsa isa) {
  if (!kernelIsaSupported(isa)) return false;
  g_isa.store(static_cast<int>(isa), std::memory_order_relaxed);
  return true;
}

const char* kernelIsaName(KernelIsa isa) {
  switch (isa) {
    case KernelIsa::kPortable:
      return "portable";
    case KernelIsa::kAvx2:
      return "avx2";
  }
  return "unknown";
}

bool useAvx2Kernels() { return kernelIsa() == KernelIsa::kAvx2; }

}  // namespace strata::detail
