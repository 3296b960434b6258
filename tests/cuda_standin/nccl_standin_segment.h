// The layout of a NCCL stand-in communicator's shared-memory segment and what waits on it:
// shared by its joining and collectives (nccl_standin_shm.cc) and its point-to-point operations
// (nccl_standin_peers.cc). Internal to libstrata_nccl_standin.so; nccl_standin_shm.h states the
// protocol.
#pragma once

#include <signal.h>
#include <sys/mman.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>
#include <thread>

namespace nccl_standin {

// Per member at most this much of a collective's data per round, and per ordered pair of
// members a mailbox chunk of this much. Small enough that strata's larger calls (the sweep's
// 65537 elements) take several rounds, a partial last one included.
inline constexpr size_t kSlotBytes = size_t{256} << 10;
constexpr size_t kBoxBytes = size_t{64} << 10;
constexpr int kMaxMembers = 64;
constexpr uint64_t kMagic = 0x31692d6c63636e73ull;  // "sncl-i1": a stand-in segment, layout 1
constexpr char kNamePrefix[] = "/strata-nccl-standin-";

static_assert(std::atomic<uint64_t>::is_always_lock_free &&
                  std::atomic<int32_t>::is_always_lock_free,
              "counters in shared memory must be lock-free (address-free)");

using Clock = std::chrono::steady_clock;
constexpr auto kWarnEvery = std::chrono::seconds(10);

// A member's published description of the collective it runs (compared by every member).
struct Desc {
  uint64_t seq, count;
  uint32_t kind, type, op;
  int32_t root;
  bool operator!=(const Desc& o) const {
    return seq != o.seq || count != o.count || kind != o.kind || type != o.type || op != o.op ||
           root != o.root;
  }
};

enum MemberState : int32_t { kAbsent = 0, kJoined = 1, kDestroyed = 2, kAborted = 3 };

// The segment starts zero-filled (ftruncate), which is every field's initial state.
struct alignas(64) Header {
  std::atomic<uint64_t> magic;
  std::atomic<int32_t> nranks;
  std::atomic<int32_t> joined;  // members attached so far
  std::atomic<int32_t> failed;  // 0, or 1 + the first member that failed or aborted
};

struct alignas(64) Member {
  std::atomic<uint64_t> barrier;  // barriers passed
  std::atomic<int32_t> state;     // MemberState
  int32_t pid;                    // written before state becomes kJoined
  unsigned char uuid[16];         // its GPU, likewise
  Desc desc;                      // the collective it runs: written before its first barrier
};

struct alignas(64) Box {
  std::atomic<uint64_t> posted;  // chunks the sender wrote (only the sender writes it)
  std::atomic<uint64_t> taken;   // chunks the receiver read (only the receiver writes it)
  uint64_t message;              // the chunk's message size in bytes, and where it starts in it
  uint64_t offset;
  uint64_t bytes;
};

inline size_t roundUp(size_t n, size_t to) { return (n + to - 1) / to * to; }

inline size_t membersOffset() { return roundUp(sizeof(Header), 64); }
inline size_t slotsOffset(int n) { return roundUp(membersOffset() + n * sizeof(Member), 4096); }
inline size_t boxStride() { return roundUp(sizeof(Box), 64) + kBoxBytes; }
inline size_t boxesOffset(int n) { return slotsOffset(n) + static_cast<size_t>(n) * kSlotBytes; }
inline size_t segmentBytes(int n) { return boxesOffset(n) + static_cast<size_t>(n) * n * boxStride(); }

inline long long secondsSince(Clock::time_point t) {
  return std::chrono::duration_cast<std::chrono::seconds>(Clock::now() - t).count();
}

// Pauses between two looks at shared counters: yields first (the peer is usually about to
// arrive), then sleeps, so that waiting members leave the CPU to the ones they wait for.
class Poller {
 public:
  void pause() {
    if (++polls_ < 200) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(50));
    }
  }
  // True once every kWarnEvery (the caller prints what it waits for).
  bool warnDue() {
    const auto now = Clock::now();
    if (now - lastWarn_ < kWarnEvery) return false;
    lastWarn_ = now;
    return true;
  }
  long long seconds() const { return secondsSince(start_); }

 private:
  uint64_t polls_ = 0;
  Clock::time_point start_ = Clock::now(), lastWarn_ = start_;
};

inline bool processGone(int32_t pid) { return pid > 0 && kill(pid, 0) != 0 && errno == ESRCH; }

inline std::string uuidText(const unsigned char* u) {
  char text[40];
  std::snprintf(text, sizeof text,
                "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", u[0], u[1],
                u[2], u[3], u[4], u[5], u[6], u[7], u[8], u[9], u[10], u[11], u[12], u[13], u[14],
                u[15]);
  return text;
}

// The mapping of one communicator's segment.
struct Segment {
  char* base = nullptr;
  size_t bytes = 0;
  int n = 0;
  ~Segment() {
    if (base != nullptr) munmap(base, bytes);
  }
  Header& header() { return *reinterpret_cast<Header*>(base); }
  Member& member(int m) { return reinterpret_cast<Member*>(base + membersOffset())[m]; }
  char* slot(int m) { return base + slotsOffset(n) + static_cast<size_t>(m) * kSlotBytes; }
  Box& box(int from, int to) {
    return *reinterpret_cast<Box*>(base + boxesOffset(n) +
                                   (static_cast<size_t>(from) * n + to) * boxStride());
  }
  char* boxData(int from, int to) {
    return reinterpret_cast<char*>(&box(from, to)) + roundUp(sizeof(Box), 64);
  }
};

}  // namespace nccl_standin
