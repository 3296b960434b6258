// The NCCL stand-in's communicators of several members: joining the shared-memory segment
// (nccl_standin_segment.h), errors and waits, and the collectives run over it (their
// point-to-point operations: nccl_standin_peers.cc; nccl_standin_shm.h states the protocol).
#include "nccl_standin_shm.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <random>
#include <thread>
#include <tuple>

#include "nccl_standin_segment.h"
#include "standin.h"

namespace nccl_standin {

// ----- ids ------------------------------------------------------------------------------------

bool MultiComm::nameOf(const ncclUniqueId& id, std::string* name) {
  const size_t len = strnlen(id.internal, sizeof id.internal);
  if (len == sizeof id.internal) return false;
  *name = std::string(id.internal, len);
  return name->compare(0, sizeof kNamePrefix - 1, kNamePrefix) == 0;
}

void MultiComm::makeId(ncclUniqueId* id) {
  std::random_device device;
  const uint64_t a = (static_cast<uint64_t>(device()) << 32) ^ device();
  const uint64_t b = (static_cast<uint64_t>(device()) << 32) ^ device() ^
                     static_cast<uint64_t>(Clock::now().time_since_epoch().count());
  std::memset(id, 0, sizeof *id);
  std::snprintf(id->internal, sizeof id->internal, "%s%d-%016llx%016llx", kNamePrefix,
                static_cast<int>(getpid()), static_cast<unsigned long long>(a),
                static_cast<unsigned long long>(b));
}

// ----- joining --------------------------------------------------------------------------------

namespace {

// Opens the segment `name` for `n` members, creating it if this member comes first. Waits
// (within `deadline`) for a creator to size it; false with *why on failure.
bool openSegment(const std::string& name, int n, Clock::time_point deadline, Segment* seg,
                 std::string* why) {
  const size_t bytes = segmentBytes(n);
  Poller poll;
  for (;;) {
    int fd = shm_open(name.c_str(), O_RDWR | O_CREAT | O_EXCL, 0600);
    if (fd >= 0) {  // first: size it; zero-filled is every field's initial state
      const int rc = posix_fallocate(fd, 0, static_cast<off_t>(bytes));
      if (rc != 0 && ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
        *why = "sizing shared memory " + name + " to " + std::to_string(bytes) +
               " bytes: " + std::strerror(rc);
        close(fd);
        shm_unlink(name.c_str());
        return false;
      }
    } else if (errno == EEXIST) {
      fd = shm_open(name.c_str(), O_RDWR, 0600);
      if (fd < 0 && errno != ENOENT) {
        *why = "opening shared memory " + name + ": " + std::strerror(errno);
        return false;
      }
      // ENOENT: removed between the two calls (a creator that gave up): try again.
    } else {
      *why = "creating shared memory " + name + ": " + std::strerror(errno);
      return false;
    }
    if (fd >= 0) {
      struct stat st {};
      while (fstat(fd, &st) == 0 && st.st_size == 0 && Clock::now() < deadline) poll.pause();
      if (static_cast<size_t>(st.st_size) != bytes) {
        *why = st.st_size == 0 ? "shared memory " + name + " was never sized by its creator"
                               : "shared memory " + name + " holds " + std::to_string(st.st_size) +
                                     " bytes, not the " + std::to_string(bytes) + " of " +
                                     std::to_string(n) + " members: the members disagree on nranks";
        close(fd);
        return false;
      }
      void* p = mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
      const int mapErrno = errno;
      close(fd);
      if (p == MAP_FAILED) {
        *why = "mapping shared memory " + name + ": " + std::strerror(mapErrno);
        return false;
      }
      seg->base = static_cast<char*>(p);
      seg->bytes = bytes;
      seg->n = n;
      return true;
    }
    if (Clock::now() >= deadline) {
      *why = "shared memory " + name + " kept disappearing";
      return false;
    }
    poll.pause();
  }
}

}  // namespace

MultiComm::MultiComm(std::unique_ptr<Segment> seg, int nranks, int rank)
    : seg_(std::move(seg)), size_(nranks), rank_(rank) {}

MultiComm::~MultiComm() = default;

ncclResult_t MultiComm::join(const ncclUniqueId& id, int nranks, int rank,
                             const unsigned char* uuid, std::shared_ptr<MultiComm>* out,
                             std::string* why) {
  std::string name;
  if (!nameOf(id, &name)) {
    *why = "the unique id is not one the stand-in's ncclGetUniqueId made";
    return ncclInvalidArgument;
  }
  if (nranks < 2 || nranks > kMaxMembers || rank < 0 || rank >= nranks) {
    *why = "rank " + std::to_string(rank) + " of " + std::to_string(nranks) +
           ": the stand-in joins 2 to " + std::to_string(kMaxMembers) + " members";
    return ncclInvalidArgument;
  }
  const Clock::time_point deadline = Clock::now() + std::chrono::seconds(kJoinTimeoutSeconds);
  auto seg = std::make_unique<Segment>();
  if (!openSegment(name, nranks, deadline, seg.get(), why)) return ncclSystemError;
  Header& h = seg->header();
  Member& me = seg->member(rank);
  // Gives up: the name goes (nobody else may join a communicator that failed), and a peer that
  // joined, or joins later, sees the failure instead of waiting for this member.
  auto giveUp = [&](ncclResult_t rc, const std::string& text) {
    *why = text;
    int32_t none = 0;
    h.failed.compare_exchange_strong(none, rank + 1);
    me.state.store(kAborted, std::memory_order_release);
    shm_unlink(name.c_str());
    return rc;
  };
  uint64_t magic = 0;
  if (!h.magic.compare_exchange_strong(magic, kMagic) && magic != kMagic) {
    return giveUp(ncclSystemError, name + " is not a stand-in communicator's shared memory");
  }
  int32_t n = 0;
  if (!h.nranks.compare_exchange_strong(n, nranks) && n != nranks) {
    return giveUp(ncclInvalidUsage, "this member says " + std::to_string(nranks) +
                                        " members, another said " + std::to_string(n));
  }
  me.pid = static_cast<int32_t>(getpid());
  std::memcpy(me.uuid, uuid, sizeof me.uuid);
  int32_t absent = kAbsent;
  if (!me.state.compare_exchange_strong(absent, kJoined, std::memory_order_acq_rel)) {
    return giveUp(ncclInvalidUsage, "two members joined as rank " + std::to_string(rank));
  }
  // The last member to join removes the name: from here on nothing is left in /dev/shm.
  if (h.joined.fetch_add(1, std::memory_order_acq_rel) + 1 == nranks) shm_unlink(name.c_str());

  Poller poll;
  while (h.joined.load(std::memory_order_acquire) < nranks) {
    if (const int32_t f = h.failed.load(); f != 0) {
      return giveUp(ncclRemoteError,
                    "member " + std::to_string(f - 1) + " gave up joining communicator " + name);
    }
    if (Clock::now() >= deadline || poll.warnDue()) {
      std::string missing;
      for (int m = 0; m < nranks; ++m) {
        if (seg->member(m).state.load() == kAbsent) missing += " " + std::to_string(m);
      }
      if (Clock::now() >= deadline) {
        return giveUp(ncclSystemError,
                      "ncclCommInitRank: after " + std::to_string(kJoinTimeoutSeconds) +
                          " s, members" + missing + " of " + std::to_string(nranks) +
                          " have not joined " + name +
                          " (every member must call it with the same id and nranks)");
      }
      std::fprintf(stderr,
                   "NCCL stand-in: member %d of %d has waited %lld s for members%s to join %s\n",
                   rank, nranks, poll.seconds(), missing.c_str(), name.c_str());
    }
    poll.pause();
  }
  // Every member wrote its pid and GPU before its increment: the acquire above sees them.
  for (int a = 0; a < nranks; ++a) {
    for (int b = 0; b < a; ++b) {
      if (std::memcmp(seg->member(a).uuid, seg->member(b).uuid, 16) == 0) {
        return giveUp(ncclInvalidUsage,
                      "Duplicate GPU detected: members " + std::to_string(b) + " and " +
                          std::to_string(a) + " are both on GPU " + uuidText(seg->member(a).uuid) +
                          " (the stand-in gives each process a GPU of its own only with "
                          "CUDA_STANDIN_OWN_GPU=1)");
      }
    }
  }
  if (std::getenv("NCCL_DEBUG") != nullptr) {
    std::fprintf(stderr, "NCCL stand-in: member %d of %d joined %s (GPU %s)\n", rank, nranks,
                 name.c_str(), uuidText(uuid).c_str());
  }
  out->reset(new MultiComm(std::move(seg), nranks, rank));
  return ncclSuccess;
}

// ----- errors and waits -----------------------------------------------------------------------

void MultiComm::fail(ncclResult_t rc, const std::string& why) {
  {
    std::lock_guard<std::mutex> lock(errorMutex_);
    if (error_ != ncclSuccess) return;  // the first failure is the one reported
    error_ = rc;
    errorText_ = why;
  }
  std::fprintf(stderr, "NCCL stand-in: member %d of %d: %s\n", rank_, size_, why.c_str());
  int32_t none = 0;
  seg_->header().failed.compare_exchange_strong(none, rank_ + 1);
}

ncclResult_t MultiComm::error(std::string* why) const {
  std::lock_guard<std::mutex> lock(errorMutex_);
  if (why != nullptr) *why = errorText_;
  return error_;
}

void MultiComm::abort() {
  aborted_.store(true);
  seg_->member(rank_).state.store(kAborted, std::memory_order_release);
  int32_t none = 0;
  seg_->header().failed.compare_exchange_strong(none, rank_ + 1);
}

void MultiComm::leave() { seg_->member(rank_).state.store(kDestroyed, std::memory_order_release); }

std::string MultiComm::waitingIn() const { return current_; }

bool MultiComm::stopped(int peer) {
  if (aborted_.load()) {
    fail(ncclInvalidUsage, "aborted (ncclCommAbort) during " + current_);
    return true;
  }
  if (error(nullptr) != ncclSuccess) return true;
  if (const int32_t f = seg_->header().failed.load(); f != 0) {
    fail(ncclRemoteError, "member " + std::to_string(f - 1) +
                              " failed or aborted its "
                              "communicator; " +
                              current_ + " cannot complete");
    return true;
  }
  const Member& m = seg_->member(peer);
  if (m.state.load(std::memory_order_acquire) == kDestroyed) {
    fail(ncclRemoteError, "member " + std::to_string(peer) + " destroyed its communicator while " +
                              current_ + " waits for it");
    return true;
  }
  return false;
}

bool MultiComm::barrier() {
  const uint64_t b = ++barriers_;
  seg_->member(rank_).barrier.store(b, std::memory_order_release);
  Poller poll;
  int late = 0;  // the first member not there yet (looked at first next time)
  for (;;) {
    for (; late < size_; ++late) {
      if (seg_->member(late).barrier.load(std::memory_order_acquire) < b) break;
    }
    if (late == size_) return true;
    if (stopped(late)) return false;
    poll.pause();
    if (poll.warnDue()) {
      if (processGone(seg_->member(late).pid)) {
        fail(ncclRemoteError, "member " + std::to_string(late) + " (pid " +
                                  std::to_string(seg_->member(late).pid) + ") exited during " +
                                  current_);
        return false;
      }
      std::fprintf(stderr,
                   "NCCL stand-in: member %d of %d has waited %lld s in %s for member %d "
                   "(barrier %llu; it passed %llu)\n",
                   rank_, size_, poll.seconds(), current_.c_str(), late,
                   static_cast<unsigned long long>(b),
                   static_cast<unsigned long long>(seg_->member(late).barrier.load()));
    }
  }
}

// ----- collectives ----------------------------------------------------------------------------

void MultiComm::run(const Collective& c) {
  std::lock_guard<std::mutex> lock(run_);
  const uint64_t seq = ++collectives_;  // when it runs: a replayed graph takes a fresh one
  current_ = "collective #" + std::to_string(seq) + " (" + describe(c) + ")";
  if (error(nullptr) != ncclSuccess || aborted_.load()) return;  // a failed communicator stays so
  size_t sendBytes = 0, recvBytes = 0;
  extents(c, size_, rank_, &sendBytes, &recvBytes);
  const char* send = nullptr;
  char* recv = nullptr;
  cudaError_t err = cudaSuccess;
  if (sendBytes > 0 && (send = static_cast<const char*>(
                            cuda_standin::deviceAccess(c.send, sendBytes, &err))) == nullptr) {
    return fail(ncclUnhandledCudaError, current_ + ": sendbuff is not device memory that holds " +
                                            std::to_string(sendBytes) + " bytes");
  }
  if (recvBytes > 0 &&
      (recv = static_cast<char*>(cuda_standin::deviceAccess(c.recv, recvBytes, &err))) == nullptr) {
    return fail(ncclUnhandledCudaError, current_ + ": recvbuff is not device memory that holds " +
                                            std::to_string(recvBytes) + " bytes");
  }
  runRounds(c, seq, send, recv);
}

void MultiComm::runRounds(const Collective& c, uint64_t seq, const char* send, char* recv) {
  const int n = size_, me = rank_;
  const size_t ts = typeBytes(c.type), count = c.count;
  // Elements per round: what fits in one slot (reduce-scatter holds a block per member).
  const size_t per =
      std::max<size_t>(1, kSlotBytes / ts / (c.kind == Kind::kReduceScatter ? n : 1));
  const bool reducing =
      c.kind == Kind::kAllReduce || c.kind == Kind::kReduceScatter || c.kind == Kind::kReduce;
  const bool rooted = c.kind == Kind::kBroadcast || c.kind == Kind::kReduce;
  const Desc mine{seq,
                  count,
                  static_cast<uint32_t>(c.kind),
                  static_cast<uint32_t>(c.type),
                  reducing ? static_cast<uint32_t>(c.op) : 0u,
                  rooted ? c.root : 0};
  std::vector<const void*> srcs(n);
  for (size_t off = 0; off < count;) {
    const size_t e = std::min(per, count - off);
    char* slot = seg_->slot(me);
    switch (c.kind) {  // this member's part of the round, into its slot
      case Kind::kAllReduce:
      case Kind::kReduce:
      case Kind::kAllGather:
        std::memcpy(slot, send + off * ts, e * ts);
        break;
      case Kind::kBroadcast:
        if (me == c.root) std::memcpy(slot, send + off * ts, e * ts);
        break;
      case Kind::kReduceScatter:
        for (int i = 0; i < n; ++i) {
          std::memcpy(slot + i * e * ts, send + (i * count + off) * ts, e * ts);
        }
        break;
    }
    if (off == 0) seg_->member(me).desc = mine;  // read by the others after the barrier
    if (!barrier()) return;
    if (off == 0) {
      for (int m = 0; m < n; ++m) {
        const Desc& theirs = seg_->member(m).desc;
        if (theirs != mine) {
          Collective other = c;
          other.kind = static_cast<Kind>(theirs.kind);
          other.count = theirs.count;
          other.type = static_cast<ncclDataType_t>(theirs.type);
          other.op = static_cast<ncclRedOp_t>(theirs.op);
          other.root = theirs.root;
          return fail(ncclInvalidUsage,
                      "collective #" + std::to_string(seq) + " differs between members: member " +
                          std::to_string(m) + "'s is " +
                          describe(other) +
                          (theirs.seq == seq ? "" : " (its #" + std::to_string(theirs.seq) + ")") +
                          ", this member's " + describe(c) +
                          " (every member must issue the same collectives in the same order)");
        }
      }
    }
    switch (c.kind) {  // every slot is full: this member's result of the round
      case Kind::kAllReduce:
      case Kind::kReduce:
        if (c.kind == Kind::kAllReduce || me == c.root) {
          for (int m = 0; m < n; ++m) srcs[m] = seg_->slot(m);
          reduce(recv + off * ts, srcs.data(), n, e, c.type, c.op);
        }
        break;
      case Kind::kReduceScatter:
        for (int m = 0; m < n; ++m) srcs[m] = seg_->slot(m) + me * e * ts;
        reduce(recv + off * ts, srcs.data(), n, e, c.type, c.op);
        break;
      case Kind::kAllGather:
        for (int m = 0; m < n; ++m) {
          std::memcpy(recv + (m * count + off) * ts, seg_->slot(m), e * ts);
        }
        break;
      case Kind::kBroadcast:
        if (me != c.root || recv != send) {  // the root in place already holds it
          std::memcpy(recv + off * ts, seg_->slot(c.root), e * ts);
        }
        break;
    }
    if (!barrier()) return;  // every member read every slot: they may be refilled
    off += e;
  }
}

}  // namespace nccl_standin
