// One description of a collective call, from the C boundary down to the fabrics (NCCL's
// ncclInfo plays this part): which collective, its buffers, count, type, op and root or peer.
// The API builds a Call once; dispatch, the schedules, the staging plan and the planner all
// name collectives with the one Collective enum below.
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>

#include "strata/strata.h"

namespace strata {

// The public collectives first; kScatter and kGather only appear as steps of a hierarchical
// broadcast or reduce (a rooted scatter or gather over one level's group).
enum class Collective {
  kAllReduce,
  kReduceScatter,
  kAllGather,
  kBroadcast,
  kReduce,
  kSend,
  kRecv,
  kScatter,
  kGather,
};

// "allreduce", "reducescatter", "allgather", "broadcast", "reduce", "send", "recv", "scatter",
// "gather": the names strata-perf and strata-plan accept.
const char* collectiveName(Collective c);

// Whether the collective reduces (takes an op).
inline bool reduces(Collective c) {
  return c == Collective::kAllReduce || c == Collective::kReduceScatter || c == Collective::kReduce;
}

// Whether `root` names a rank (the root of a broadcast or reduce, the peer of a send or recv).
inline bool hasRoot(Collective c) {
  return c == Collective::kBroadcast || c == Collective::kReduce || c == Collective::kSend ||
         c == Collective::kRecv || c == Collective::kScatter || c == Collective::kGather;
}

// Whether only two ranks take part (a send or a receive).
inline bool pointToPoint(Collective c) { return c == Collective::kSend || c == Collective::kRecv; }

struct Call {
  Collective coll = Collective::kAllReduce;
  const void* send = nullptr;  // null for recv
  void* recv = nullptr;        // null for send
  // Elements: count (allreduce, broadcast, reduce, send, recv), recvcount (reduce-scatter: the
  // send buffer holds nranks * count) or sendcount (all-gather: the receive buffer holds it).
  size_t count = 0;
  strataDataType_t type = strataFloat32;
  strataRedOp_t op = strataSum;  // reductions only
  int root = 0;                  // broadcast and reduce: the root; send and recv: the peer
  // Its number on the communicator, given once as it is issued (core/check.h: CallSequence)
  // and named by every message and check about it; 0 until then.
  uint64_t seq = 0;
  // Its record in the communicator's flight recorder (core/flight_recorder.h); 0: none.
  uint64_t record = 0;
  // When it was issued, on the timeline's clock (core/timeline.h); 0: not traced.
  int64_t issuedNs = 0;
  // Where the application called strata: the return address of the C entry point (STRATA_CHECK=2
  // compares it, as an offset in its module: core/check.h); null when not known.
  const void* site = nullptr;
  // A library's own call, not the program's (strataCommNoteNextCall): what it is, named in the
  // flight recorder and in the call's errors; empty for the program's calls.
  std::string note;
};

}  // namespace strata
