// The NCCL stand-in's communicators of several members (nccl_standin.cc serves NCCL's API over
// them): the members are processes of one host, each with a GPU of its own
// (CUDA_STANDIN_OWN_GPU=1), that meet in a POSIX shared-memory segment named by the unique id.
// Internal to libstrata_nccl_standin.so.
//
// Protocol (what makes it correct):
//   - NCCL's rule: every member issues the same collectives, with the same counts, types, ops
//     and roots, in the same order. Member m's k-th collective meets every other member's k-th:
//     k is counted when the collective RUNS on its stream's thread (never when it is issued),
//     so a collective recorded into a CUDA graph and replayed takes a fresh k at each run.
//     Each collective's first round publishes what it is (kind, count, type, op, root, k); every
//     member compares them all with its own, so a member that disagrees fails every member at
//     once instead of mixing data.
//   - A collective runs in rounds of at most kSlotBytes of each member's data: every member
//     copies its part of the round into its own slot, a barrier, every member reads the slots it
//     needs (reduced left to right, member 0 first, so every member gets the same bits), a
//     barrier (nobody refills a slot before everyone has read it). Barriers count: member m has
//     passed barrier b once its counter reads b, and a member's barriers are numbered the same
//     on every member because every member runs the same rounds.
//   - Point-to-point has a mailbox per ordered pair of members holding one chunk of at most
//     kBoxBytes: the sender fills it when empty (posted == taken), the receiver empties it. Sends
//     to one peer arrive in the order they were issued, as NCCL's; a message's size travels
//     with every chunk, so a receive of another size fails instead of mixing data. A group's
//     sends and receives advance together, so pairs that exchange both ways never deadlock.
//   - Memory ordering: every counter is a std::atomic in the segment (address-free, lock-free);
//     a release store of a counter publishes the slot or box written before it, and the reader's
//     acquire load sees it.
//   - Nothing waits for ever without saying so: every wait prints every 10 s what it waits for,
//     and ends (the communicator fails) when this member aborts, when any member failed or
//     aborted, or when the member it waits for destroyed its communicator or exited.
//   - The segment's name is removed as soon as every member has joined (or joining failed), so
//     nothing is left in /dev/shm whatever happens afterwards; the mapping lives until the last
//     reference to this member's communicator (queued stream work holds one) is gone.
#pragma once

#include <nccl.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <utility>
#include <vector>

namespace nccl_standin {

// ----- types and reductions (nccl_standin_reduce.cc) ------------------------------------------
size_t typeBytes(ncclDataType_t t);  // 0 for an invalid type
const char* typeName(ncclDataType_t t);
const char* opName(ncclRedOp_t op);

// dst[i] = srcs[0][i] op srcs[1][i] op ... op srcs[n-1][i], combined left to right, then, for
// ncclAvg, divided by n (integer division for integer types). strata's host reduction
// (common/reduce.h) does strata's ten types, so fp16 and bf16 widen to float, combine in float
// and round once, as strata's reference does; fp8 (e4m3, e5m2) does the same here, rounding to
// nearest even and saturating to the largest finite value (as CUDA's __nv_fp8 conversions).
// dst must not overlap a source.
void reduce(void* dst, const void* const* srcs, int n, size_t count, ncclDataType_t type,
            ncclRedOp_t op);

// ----- operations -----------------------------------------------------------------------------
enum class Kind : uint32_t { kAllReduce, kReduceScatter, kAllGather, kBroadcast, kReduce };
const char* kindName(Kind k);

// One collective as its caller issued it. The buffers are the program's device addresses,
// reached through cuda_standin::deviceAccess when the collective runs.
struct Collective {
  Kind kind = Kind::kAllReduce;
  const void* send = nullptr;  // read on the root only for broadcast
  void* recv = nullptr;        // written on the root only for reduce
  size_t count = 0;            // NCCL's: recvcount for reduce-scatter, sendcount for all-gather
  ncclDataType_t type = ncclFloat32;
  ncclRedOp_t op = ncclSum;  // the reducing kinds
  int root = 0;              // broadcast and reduce
};

// The bytes of `c`'s send and receive buffers this member touches (0: not touched).
void extents(const Collective& c, int nranks, int rank, size_t* sendBytes, size_t* recvBytes);
// "allreduce of 1021 float32 (sum)"
std::string describe(const Collective& c);

struct PeerOp {
  bool send = true;
  void* buf = nullptr;
  size_t count = 0;
  ncclDataType_t type = ncclFloat32;
  int peer = 0;
};

// ----- a member's communicator ----------------------------------------------------------------
struct Segment;  // the mapping (nccl_standin_shm.cc)

class MultiComm {
 public:
  // The segment name an id carries; false for an id that ncclGetUniqueId did not make.
  static bool nameOf(const ncclUniqueId& id, std::string* name);
  // A fresh id: a random segment name (nothing is created until members join).
  static void makeId(ncclUniqueId* id);

  // Joins the `nranks` members that pass the same id, as member `rank`, on this process's GPU
  // (`uuid`, 16 bytes). Waits up to kJoinTimeoutSeconds for every member; two members on one
  // GPU fail as NCCL's "Duplicate GPU detected". On failure *why says what went wrong.
  static ncclResult_t join(const ncclUniqueId& id, int nranks, int rank, const unsigned char* uuid,
                           std::shared_ptr<MultiComm>* out, std::string* why);
  ~MultiComm();
  MultiComm(const MultiComm&) = delete;
  MultiComm& operator=(const MultiComm&) = delete;

  int size() const { return size_; }
  int rank() const { return rank_; }

  // On the stream's thread: runs one collective, or a group's point-to-point operations (over
  // one or more communicators) together. A failure is kept (error()) and ends the communicator.
  void run(const Collective& c);
  static void runPeers(const std::vector<std::pair<std::shared_ptr<MultiComm>, PeerOp>>& ops);

  // ncclSuccess while healthy; else the failure that ended the communicator, and why.
  ncclResult_t error(std::string* why) const;

  // ncclCommAbort: ends this member's waits now (never waits for a peer), and fails the peers'
  // waits for it. ncclCommDestroy: leave() marks the member gone, so that a peer still waiting
  // for it fails instead of hanging.
  void abort();
  void leave();

 private:
  MultiComm(std::unique_ptr<Segment> seg, int nranks, int rank);

  bool barrier();
  bool stopped(int peer);  // may fail the communicator; true when a wait must end
  void fail(ncclResult_t rc, const std::string& why);
  std::string waitingIn() const;  // the operation a wait belongs to, for its warnings
  void runRounds(const Collective& c, uint64_t seq, const char* send, char* recv);

  std::unique_ptr<Segment> seg_;
  const int size_, rank_;
  std::mutex run_;            // one operation of this communicator at a time in this process
  uint64_t collectives_ = 0;  // collectives run so far (under run_): the next one's k - 1
  uint64_t barriers_ = 0;     // barriers passed (under run_)
  std::string current_;       // what runs now, for the warnings (under run_)
  std::atomic<bool> aborted_{false};
  mutable std::mutex errorMutex_;
  ncclResult_t error_ = ncclSuccess;  // under errorMutex_
  std::string errorText_;
};

constexpr int kJoinTimeoutSeconds = 60;

}  // namespace nccl_standin
