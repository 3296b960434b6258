#include "core/nvtx.h"

#ifdef STRATA_HAVE_CUDA
#include <nvtx3/nvToolsExt.h>

#include <iterator>

#include "core/timeline.h"
#endif

namespace strata::core::nvtx {

#ifndef STRATA_HAVE_CUDA

bool attached() { return false; }
uint64_t start(const char*, uint32_t) { return 0; }
void end(uint64_t) {}

#else

namespace {

// One colour per category (TimelineEvent::Cat's order), so that calls and steps read apart in a
// viewer (ARGB).
constexpr uint32_t kColours[] = {0xff4e79a7, 0xff59a14f, 0xffe15759,
                                 0xfff28e2b, 0xffb07aa1, 0xff76b7b2};
static_assert(std::size(kColours) == TimelineEvent::kCats, "a colour per timeline category");

// Null when no tool collects NVTX: NVTX's own no-op implementation hands out no domain.
nvtxDomainHandle_t domain() {
  static const nvtxDomainHandle_t d = [] {
    const nvtxDomainHandle_t h = nvtxDomainCreateA("strata");
    if (h != nullptr) {
      // NVTX's category 0 is "none": a timeline category c is c + 1.
      for (int c = 0; c < TimelineEvent::kCats; ++c) {
        nvtxDomainNameCategoryA(h, static_cast<uint32_t>(c) + 1,
                                TimelineEvent::catName(static_cast<TimelineEvent::Cat>(c)));
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
  a.color = category >= 1 && category <= std::size(kColours) ? kColours[category - 1] : 0xff888888;
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
