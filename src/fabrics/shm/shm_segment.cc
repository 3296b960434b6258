#include "fabrics/shm/shm_segment.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <random>

#include "common/log.h"

namespace strata::fabric {
namespace {

constexpr size_t kNameBytes = 64;  // what travels over the bootstrap, NUL included

std::string errnoText(const std::string& what, int err) { return what + ": " + std::strerror(err); }

// Maps `fd` (already `bytes` long); closes it either way.
StatusOr<void*> mapFd(int fd, size_t bytes, const std::string& name) {
  void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  const int err = errno;
  close(fd);
  if (p == MAP_FAILED) return systemError(errnoText("shm fabric: mmap of " + name, err));
  return p;
}

// Member 0: a new name, created exclusively and sized. *name is set when created (to unlink).
StatusOr<void*> createFirst(size_t bytes, std::string* name) {
  static std::atomic<unsigned> counter{0};
  std::random_device rd;
  for (int attempt = 0; attempt < 8; ++attempt) {
    char buf[kNameBytes];
    std::snprintf(buf, sizeof(buf), "/%s%ld-%u-%08x%08x", ShmSegment::kNamePrefix,
                  static_cast<long>(getpid()), counter.fetch_add(1), rd(), rd());
    const int fd = shm_open(buf, O_CREAT | O_EXCL | O_RDWR, 0600);
    if (fd < 0 && errno == EEXIST) continue;
    if (fd < 0) return systemError(errnoText(std::string("shm fabric: shm_open of ") + buf, errno));
    *name = buf;
    // posix_fallocate returns the error instead of setting errno.
    const int rc = posix_fallocate(fd, 0, static_cast<off_t>(bytes));
    if (rc != 0) {
      close(fd);
      return systemError(
          errnoText("shm fabric: cannot size " + *name + " to " + std::to_string(bytes) +
                        " bytes (is /dev/shm large enough? see STRATA_SHM_SLOT_BYTES)",
                    rc));
    }
    return mapFd(fd, bytes, *name);
  }
  return systemError("shm fabric: no free segment name after 8 attempts");
}

StatusOr<void*> openOther(size_t bytes, const std::string& name) {
  const int fd = shm_open(name.c_str(), O_RDWR, 0600);
  if (fd < 0) {
    return systemError(errnoText("shm fabric: cannot open member 0's segment " + name +
                                     " (do the group's ranks all share this host's memory? if "
                                     "not, use fabric mpi for this level)",
                                 errno));
  }
  struct stat st {};
  if (fstat(fd, &st) != 0 || static_cast<size_t>(st.st_size) != bytes) {
    close(fd);
    return systemError("shm fabric: segment " + name + " is not the " + std::to_string(bytes) +
                       " bytes member 0 made (the ranks disagree on STRATA_SHM_SLOT_BYTES?)");
  }
  return mapFd(fd, bytes, name);
}

}  // namespace

ShmSegment& ShmSegment::operator=(ShmSegment&& o) noexcept {
  if (this != &o) {
    unmap();
    data_ = o.data_;
    bytes_ = o.bytes_;
    o.data_ = nullptr;
    o.bytes_ = 0;
  }
  return *this;
}

void ShmSegment::unmap() {
  if (data_ != nullptr) munmap(data_, bytes_);
  data_ = nullptr;
  bytes_ = 0;
}

StatusOr<ShmSegment> ShmSegment::create(boot::Bootstrap& group, size_t bytes) {
  ShmSegment seg;
  std::string name;
  Status local = Status::ok();
  if (group.rank() == 0) {
    StatusOr<void*> p = createFirst(bytes, &name);
    if (p.isOk()) {
      seg.data_ = p.value();
      seg.bytes_ = bytes;
    }
    local = p.status();
  }
  // Whatever happens from here, member 0 removes the name before returning.
  struct Unlink {
    const std::string& name;
    ~Unlink() {
      if (!name.empty()) shm_unlink(name.c_str());
    }
  } unlinkAtEnd{name};
  STRATA_RETURN_IF_ERROR(boot::agree(group, local));
  char wire[kNameBytes] = {};
  if (group.rank() == 0) std::snprintf(wire, sizeof(wire), "%s", name.c_str());
  STRATA_RETURN_IF_ERROR(group.broadcast(wire, sizeof(wire), 0));
  if (group.rank() != 0) {
    wire[kNameBytes - 1] = '\0';
    StatusOr<void*> p = openOther(bytes, wire);
    if (p.isOk()) {
      seg.data_ = p.value();
      seg.bytes_ = bytes;
    }
    local = p.status();
  }
  // Every member has mapped it (or the group fails together); then the name goes.
  STRATA_RETURN_IF_ERROR(boot::agree(group, local));
  STRATA_TRACE(kSubsysFabric, "shm segment %s: %zu bytes, mapped by %d members", wire, bytes,
               group.size());
  return seg;
}

}  // namespace strata::fabric
