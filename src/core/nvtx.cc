#include "core/nvtx.h"

#ifdef STRATA_HAVE_CUDA
#include <nvtx3/nvToolsExt.h>
#endif

namespace strata::core::nvtx {

#ifndef STRATA_HAVE_CUDA

bool attached() { return false; }
uint64_t start(const char*, uint32_t) { return 0; }
void end(uint64_t) {}

#else

namespace {

// The categories' names, in TimelineEvent::Cat's order (1-based for NVTX: 0 is "none").
constexpr const char* kCategories[] = {"call", "step", "wait", "fusion", "compress", "staging"};
// One colour per category, so that calls and steps read apart in a viewer (ARGB).
constexpr uint32_t kColours[] = {0xff4e79a7, 0xff59a14f, 0xffe15759,
                                 0xfff28e2b, 0xffb07aa1, 0xff76b7b2};

// Null when no tool collects NVTX: NVTX's own no-op implementation hands out no domain.
nvtxDomainHandle_t domain() {
  static const nvtxDomainHandle_t d = [] {
    const nvtxDomainHandle_t h = nvtxDomainCreateA("strata");
    if (h != nullptr) {
      for (uint32_t i = 0; i < sizeof(kCategories) / sizeof(kCategories[0]); ++i) {
        nvtxDomainNameCategoryA(h, i + 1, kCategories[i]);
      }
    }
    return h;
  }();
  return d;
}

}  // namespace

bool attached() { return domain() != nullptr; }

uint64_t start(const char* message, uint32_t category) {
  const nvtxDomainHandle_t d = domain();
  if (d == nullptr) return 0;
  nvtxEventAttributes_t a = {};
  a.version = NVTX_VERSION;
  a.size = NVTX_EVENT_ATTRIB_STRUCT_SIZE;
  a.category = category;
  a.colorType = NVTX_COLOR_ARGB;
  const size_t n = sizeof(kColours) / sizeof(kColours[0]);
  a.color = category >= 1 && category <= n ? kColours[category - 1] : 0xff888888;
  a.messageType = NVTX_MESSAGE_TYPE_ASCII;
  a.message.ascii = message;
  return nvtxDomainRangeStartEx(d, &a);
}

void end(uint64_t id) {
  const nvtxDomainHandle_t d = domain();
  if (d != nullptr && id != 0) nvtxDomainRangeEnd(d, id);
}

#endif  // STRATA_HAVE_CUDA

}  // namespace strata::core::nvtx
