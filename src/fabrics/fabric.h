// A fabric runs the collectives of one group of one level (gloo transports, Aluminum backends).
//
// Every fabric implements the same operations over its group, on the memory its traits name
// (host memory, or CUDA device memory for the device fabrics; fabrics/registry.h). Counts and
// displacements are in elements. Ops are strataSum/Prod/Max/Min: strataAvg is finished by the
// dispatcher (one division), never by a fabric.
//
// Layout contract for reduceScatter/allGather/scatter/gather: all members pass the same
// `counts` (one per member, any may be 0) and the blocks are contiguous in member order, so
// block j starts at displs[j] = counts[0] + ... + counts[j-1] and the range holds the sum of
// the counts. Rooted operations take the root's position in the group; every member passes the
// same root, count and type.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>

#include "common/status.h"
#include "strata/strata.h"

namespace strata::fabric {

// One point-to-point operation of an exchange (Fabric::exchange).
struct PeerOp {
  bool send = true;
  void* buf = nullptr;  // read for a send, written for a receive
  size_t count = 0;
  strataDataType_t type = strataFloat32;
  int peer = 0;  // a member's position in the group (this member itself is allowed)
};

class Fabric {
 public:
  virtual ~Fabric() = default;
  virtual const char* name() const = 0;
  virtual int size() const = 0;  // members in the group
  virtual int rank() const = 0;  // this member's position

  // Every member contributes the whole range `in`; member j receives the reduction of block j.
  // `out` holds counts[rank()] elements. In place when out == in + displs[rank()] (then `in` is
  // writable and its other blocks may be overwritten).
  virtual Status reduceScatter(const void* in, void* out, const size_t* counts,
                               const size_t* displs, strataDataType_t type, strataRedOp_t op) = 0;

  // Member j contributes block j (`in`, counts[j] elements); every member receives the whole
  // range in `out`. In place when in == out + displs[rank()].
  virtual Status allGather(const void* in, void* out, const size_t* counts, const size_t* displs,
                           strataDataType_t type) = 0;

  // Every member receives the reduction of all members' `in`. In place when in == out.
  virtual Status allReduce(const void* in, void* out, size_t count, strataDataType_t type,
                           strataRedOp_t op) = 0;

  // Member `root`'s `in` (count elements) into every member's `out`; `in` is read on the root
  // only. In place when in == out.
  virtual Status broadcast(const void* in, void* out, size_t count, strataDataType_t type,
                           int root) = 0;

  // The reduction of every member's `in` into member `root`'s `out` (written there only; other
  // members may pass out == in or any pointer). In place when in == out.
  virtual Status reduce(const void* in, void* out, size_t count, strataDataType_t type,
                        strataRedOp_t op, int root) = 0;

  // Member `root`'s range `in` (read there only): member j receives block j in `out`
  // (counts[j] elements). In place on the root when out == in + displs[root].
  virtual Status scatter(const void* in, void* out, const size_t* counts, const size_t* displs,
                         strataDataType_t type, int root) = 0;

  // Member j's block `in` (counts[j] elements) into member `root`'s range `out` (written there
  // only). In place on the root when in == out + displs[root].
  virtual Status gather(const void* in, void* out, const size_t* counts, const size_t* displs,
                        strataDataType_t type, int root) = 0;

  // Point-to-point: every operation is posted together and all have finished at return, so
  // matching pairs never deadlock whatever their order on either side. Between two members,
  // sends and receives match in the order they appear; a send and its receive have the same
  // count and type. No buffer is used by two operations.
  virtual Status exchange(const PeerOp* ops, size_t n) = 0;

  // Whether a message that another member's exchange() sends to this one has arrived and no
  // receive of this member has taken it yet: from member `peer`, or from any member when peer
  // is -1. Nonblocking. On *found, *source is its sender and *bytes its length, and this
  // member's next receive from *source in an exchange takes that message (messages between two
  // members stay in order). Host fabrics that carry a communicator's point-to-point calls
  // (mpi, ucx) implement it; the others say they cannot.
  virtual Status probe(int peer, bool* found, int* source, size_t* bytes) {
    (void)peer;
    *found = false;
    *source = -1;
    *bytes = 0;
    return invalidUsage(std::string("fabric ") + name() + " cannot probe for messages");
  }

  // The same allreduce, started and finished apart (the dispatcher's pipeline overlaps it with
  // other fabrics' work). At most one is in flight per fabric; the buffers must stay untouched
  // until allReduceWait returns. progress() lets it advance and must be cheap: it is called
  // from other fabrics' waits (see IdleHook). By default the allreduce runs at start.
  virtual Status allReduceStart(const void* in, void* out, size_t count, strataDataType_t type,
                                strataRedOp_t op) {
    return allReduce(in, out, count, type, op);
  }
  virtual void progress() {}
  virtual Status allReduceWait() { return Status::ok(); }

  // strataCommAbort: the fabric's destructor must then free only local resources and never
  // wait on another member (peers may be gone or stuck).
  virtual void abandon() {}
  // The communicator was replaced by a shrink (strataCommShrink): every member that is left
  // ended its calls on it and agreed on the new one, and the others are gone. Like abandon()
  // (no waiting on peers), but what abandon keeps for late peers (a UCX worker and its sockets
  // and shared memory) is freed: none will come, and a job that recovers many times must not
  // collect them.
  virtual void retire() { abandon(); }

  // Stream-ordered device fabrics (nccl, local): a CUDA stream carries their operations by
  // itself. Each operation is only enqueued, on the stream last given to useStream (the
  // communicator's own until then), and returns before it runs: the caller orders what follows
  // on that stream, or waits for it. Such a fabric is only ever called from one thread at a
  // time, in the communicator's call order (core/device_submit.cc: the issuing thread), so that
  // every member enqueues its collectives in the same order. Every other fabric returns with
  // its operation complete, and needs a host thread to run it.
  virtual bool streamOrdered() const { return false; }
  virtual void useStream(void* stream) { (void)stream; }
};

// What a fabric calls while it waits on its peers or between large copies, so that an
// allreduce started on another fabric keeps moving (one thread drives both). Per thread;
// IdleHook sets it for a scope and restores the previous one.
class IdleHook {
 public:
  explicit IdleHook(Fabric* f) : saved_(current_) { current_ = f; }
  ~IdleHook() { current_ = saved_; }
  IdleHook(const IdleHook&) = delete;
  IdleHook& operator=(const IdleHook&) = delete;
  static void idle() {
    if (current_ != nullptr) current_->progress();
  }

 private:
  Fabric* saved_;
  static thread_local Fabric* current_;
};

// Where a fabric shows spans of its own work on the communicator's timeline (core/timeline.h)
// and as NVTX ranges: the staged fabric's waits for its copies. openSpan() at its start,
// closeSpan() with what openSpan() returned at its end, on the same thread.
class SpanSink {
 public:
  struct Open {
    const char* name = "";  // a static string
    int64_t beginNs = 0;
    uint64_t range = 0;  // its NVTX range; 0: none
  };
  virtual Open openSpan(const char* name) = 0;
  virtual void closeSpan(const Open& span, uint64_t bytes) = 0;

 protected:
  ~SpanSink() = default;
};

// Settings a fabric takes from the communicator (which reads them once from the environment).
struct FabricOptions {
  size_t shmSlotBytes = 4 << 20;  // shm: bytes of each of a member's two shared slots
  // STRATA_NET: the engine of point-to-point messages between hosts, "mpi" or "ucx" (the
  // shm fabric's rooted operations and exchanges run on it; fabrics/registry.h: netFabric).
  std::string net = "mpi";
  // Device fabrics (CUDA builds): the communicator's stream (a cudaStream_t: the staged and
  // mpi-cuda fabrics' work, and a stream-ordered fabric's until Fabric::useStream) and the bytes
  // of each pinned slot of the staged fabric.
  void* stream = nullptr;
  size_t stagingBytes = 4 << 20;
  // The communicator's timeline, when STRATA_TRACE or an NVTX tool wants spans; null otherwise.
  SpanSink* spans = nullptr;
};

}  // namespace strata::fabric
