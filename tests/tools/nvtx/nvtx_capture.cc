// An NVTX tool for the tests: loaded by NVTX as Nsight Systems is (NVTX_INJECTION64_PATH names
// it), it records the domains, categories and start/end ranges the process makes, one line per
// call, to $NVTX_CAPTURE_DIR/nvtx.<pid>.log:
//   domain <handle> <name>
//   category <handle> <id> <name>
//   start <handle> <range id> <category> <message>
//   end <handle> <range id>
// The test (tests/tools/test_strata_trace.sh, live_nvtx) compares them with strata's timeline.
// Only the core calls strata makes are hooked; any other NVTX call stays a no-op.
#include <nvtx3/nvToolsExt.h>
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <string>

namespace {

std::mutex mutex;
std::FILE* out = nullptr;
std::atomic<uint64_t> nextRange{1};
std::atomic<uintptr_t> nextDomain{1};

void line(const std::string& text) {
  std::lock_guard<std::mutex> lock(mutex);
  if (out == nullptr) return;
  std::fputs(text.c_str(), out);
  std::fputc('\n', out);
  std::fflush(out);
}

std::string handle(nvtxDomainHandle_t d) { return std::to_string(reinterpret_cast<uintptr_t>(d)); }

nvtxDomainHandle_t NVTX_API domainCreateA(const char* name) {
  auto* d = reinterpret_cast<nvtxDomainHandle_t>(nextDomain.fetch_add(1));
  line("domain " + handle(d) + " " + name);
  return d;
}

void NVTX_API nameCategoryA(nvtxDomainHandle_t d, uint32_t id, const char* name) {
  line("category " + handle(d) + " " + std::to_string(id) + " " + name);
}

nvtxRangeId_t NVTX_API rangeStartEx(nvtxDomainHandle_t d, const nvtxEventAttributes_t* a) {
  const uint64_t id = nextRange.fetch_add(1);
  const char* message = a != nullptr && a->messageType == NVTX_MESSAGE_TYPE_ASCII
                            ? a->message.ascii
                            : "(not ascii)";
  line("start " + handle(d) + " " + std::to_string(id) + " " +
       std::to_string(a != nullptr ? a->category : 0) + " " + message);
  return id;
}

void NVTX_API rangeEnd(nvtxDomainHandle_t d, nvtxRangeId_t id) {
  line("end " + handle(d) + " " + std::to_string(id));
}

}  // namespace

extern "C" NVTX_DYNAMIC_EXPORT int InitializeInjectionNvtx2(NvtxGetExportTableFunc_t get) {
  const char* dir = std::getenv("NVTX_CAPTURE_DIR");
  if (dir == nullptr) return 0;  // NVTX then makes every call a no-op
  const std::string path = std::string(dir) + "/nvtx." + std::to_string(getpid()) + ".log";
  out = std::fopen(path.c_str(), "w");
  if (out == nullptr) return 0;
  auto* callbacks = static_cast<const NvtxExportTableCallbacks*>(get(NVTX_ETID_CALLBACKS));
  if (callbacks == nullptr) return 0;
  NvtxFunctionTable table = nullptr;
  unsigned int size = 0;
  if (callbacks->GetModuleFunctionTable(NVTX_CB_MODULE_CORE2, &table, &size) == 0) return 0;
  auto set = [&](unsigned int id, NvtxFunctionPointer f) {
    if (id <= size) *table[id] = f;
  };
  set(NVTX_CBID_CORE2_DomainCreateA, reinterpret_cast<NvtxFunctionPointer>(&domainCreateA));
  set(NVTX_CBID_CORE2_DomainNameCategoryA, reinterpret_cast<NvtxFunctionPointer>(&nameCategoryA));
  set(NVTX_CBID_CORE2_DomainRangeStartEx, reinterpret_cast<NvtxFunctionPointer>(&rangeStartEx));
  set(NVTX_CBID_CORE2_DomainRangeEnd, reinterpret_cast<NvtxFunctionPointer>(&rangeEnd));
  line("injected");
  return 1;
}
