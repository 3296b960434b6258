// A shared-memory segment of strata's own for the members of one host (the shm fabric's
// slots and barrier lines), instead of an MPI-3 shared window.
//
// Why not MPI_Win_allocate_shared: freeing a window is collective, so strataCommAbort either
// waited for peers that may be gone or leaked; and Open MPI's segments start at 8 mod 64, which
// misaligns every alignas(64) structure placed in them (UBSan). A POSIX segment is mapped at a
// page boundary and unmapped locally.
//
// Lifetime of the name: member 0 creates /strata-<pid>-<n>-<random> (O_EXCL), sizes it with
// posix_fallocate (so a full /dev/shm is an error here, not a SIGBUS later), maps it and sends
// the name over the group's bootstrap; the others open and map it; once every member has
// (a bootstrap agreement, which also carries any member's failure), member 0 unlinks the name,
// whether or not the group succeeded. From then on /dev/shm holds nothing of strata's: the
// memory lives only as long as some member maps it, and goes with the processes however they
// end. Only a crash of member 0 inside create() can leave a name behind.
#pragma once

#include <cstddef>
#include <string>

#include "bootstrap/bootstrap.h"
#include "common/status.h"

namespace strata::fabric {

class ShmSegment {
 public:
  ShmSegment() = default;
  ~ShmSegment() { unmap(); }
  ShmSegment(ShmSegment&& o) noexcept { *this = std::move(o); }
  ShmSegment& operator=(ShmSegment&& o) noexcept;
  ShmSegment(const ShmSegment&) = delete;
  ShmSegment& operator=(const ShmSegment&) = delete;

  // Collective over `group` (members of one host): every member maps the same `bytes` bytes,
  // zero-filled. Fails on every member when any member fails (for example when a member is on
  // another host and cannot open the name: the group does not share memory).
  static StatusOr<ShmSegment> create(boot::Bootstrap& group, size_t bytes);

  void* data() const { return data_; }
  size_t size() const { return bytes_; }

  // The prefix of every name strata gives a segment (tests check /dev/shm for it).
  static constexpr const char* kNamePrefix = "strata-";

 private:
  void unmap();
  void* data_ = nullptr;
  size_t bytes_ = 0;
};

}  // namespace strata::fabric
