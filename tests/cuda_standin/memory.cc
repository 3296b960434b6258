// The memory the stand-in knows: device allocations, each a file in memory mapped twice (once
// without access, the address the program holds, and once readable and writable, where stream
// work reaches it), and pinned host memory (runtime.h).
#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>

#include "runtime.h"
#include "standin.h"

namespace cuda_standin {
namespace {

// What fresh device memory holds: not zeros, so that a result nobody wrote does not pass.
constexpr unsigned char kFreshByte = 0xCB;

struct Memory {
  std::mutex mutex;
  std::map<uintptr_t, Region> regions;  // by base address
};

Memory& memory() {
  static auto* m = new Memory();  // never freed: stream threads may free memory during exit
  return *m;
}

size_t pageRounded(size_t bytes) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return (bytes + page - 1) / page * page;
}

// Two views of one memory file: `base` without access, `access` readable and writable.
bool mapDevice(size_t bytes, char** base, char** access) {
  const int fd = memfd_create("cuda-standin-device", MFD_CLOEXEC);
  if (fd < 0) return false;
  const size_t len = pageRounded(bytes);
  bool ok = ftruncate(fd, static_cast<off_t>(len)) == 0;
  void* b = ok ? mmap(nullptr, len, PROT_NONE, MAP_SHARED, fd, 0) : MAP_FAILED;
  void* a = b != MAP_FAILED ? mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)
                            : MAP_FAILED;
  close(fd);  // the mappings keep the memory
  if (a == MAP_FAILED) {
    if (b != MAP_FAILED) munmap(b, len);
    return false;
  }
  *base = static_cast<char*>(b);
  *access = static_cast<char*>(a);
  return true;
}

}  // namespace

void* allocate(MemKind kind, size_t bytes, unsigned flags) {
  Region r;
  r.kind = kind;
  r.bytes = bytes;
  r.flags = flags;
  if (kind == MemKind::kDevice) {
    if (!mapDevice(bytes, &r.base, &r.access)) return nullptr;
    std::memset(r.access, kFreshByte, bytes);
  } else {
    void* p = nullptr;
    if (posix_memalign(&p, 4096, pageRounded(bytes)) != 0) return nullptr;
    r.base = r.access = static_cast<char*>(p);
  }
  Memory& m = memory();
  std::lock_guard<std::mutex> lock(m.mutex);
  m.regions[reinterpret_cast<uintptr_t>(r.base)] = r;
  return r.base;
}

bool release(void* base, MemKind kind) {
  Region r;
  {
    Memory& m = memory();
    std::lock_guard<std::mutex> lock(m.mutex);
    const auto it = m.regions.find(reinterpret_cast<uintptr_t>(base));
    if (it == m.regions.end() || it->second.kind != kind) return false;
    r = it->second;
    m.regions.erase(it);
  }
  if (kind == MemKind::kDevice) {
    munmap(r.base, pageRounded(r.bytes));
    munmap(r.access, pageRounded(r.bytes));
  } else {
    std::free(r.base);
  }
  return true;
}

bool find(const void* p, Region* out) {
  Memory& m = memory();
  const auto addr = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> lock(m.mutex);
  auto it = m.regions.upper_bound(addr);
  if (it == m.regions.begin()) return false;
  --it;
  // One past the end belongs to the allocation too (a zero-length range there is valid).
  if (addr > it->first + it->second.bytes) return false;
  *out = it->second;
  return true;
}

void* deviceAccess(const void* ptr, size_t bytes, cudaError_t* err) {
  Region r;
  const char* p = static_cast<const char*>(ptr);
  if (!find(ptr, &r)) {
    char text[96];
    std::snprintf(text, sizeof text, "%p is neither device nor pinned host memory", ptr);
    *err = fail(cudaErrorInvalidValue, "device access", text);
    return nullptr;
  }
  if (static_cast<size_t>(p - r.base) + bytes > r.bytes) {
    char text[160];
    std::snprintf(text, sizeof text,
                  "%zu bytes at %p run past the end of their allocation (%zu bytes at %p)", bytes,
                  ptr, r.bytes, static_cast<void*>(r.base));
    *err = fail(cudaErrorInvalidValue, "device access", text);
    return nullptr;
  }
  *err = cudaSuccess;
  return r.access + (p - r.base);
}

}  // namespace cuda_standin
