// The collectives of fabric.h over point-to-point messages (p2p_link.h): rings for the bulk
// operations, direct messages for the rooted ones and small allreduces. Transport-neutral:
// a fabric that can send tagged messages (the ucx fabric) gets every Fabric operation from
// here. Counts, displacements, in-place rules and roots are exactly fabric.h's.
//
// Every operation is a fixed sequence of message steps computed from the arguments alone, so
// members that pass the same arguments post matching messages in the same order (the Link's
// in-order matching does the rest). Zero-length blocks are still sent: a member that disagrees
// on a count then fails with a length mismatch instead of waiting for a message never sent.
// All blocking operations use Channel::kCall, exchange() uses kExchange; the asynchronous
// ring (p2p_ring.h) has kRing to itself.
#pragma once

#include <cstddef>
#include <vector>

#include "common/status.h"
#include "fabrics/fabric.h"
#include "fabrics/p2p/p2p_link.h"
#include "fabrics/p2p/p2p_ring.h"
#include "strata/strata.h"

namespace strata::fabric::p2p {

class Collectives {
 public:
  explicit Collectives(Link& link)
      : link_(link), r_(link.rank()), p_(link.size()), ring_(link, Channel::kCall) {}

  // Ring over the members' blocks: p - 1 steps, each sending one partial block right and
  // receiving one from the left.
  Status reduceScatter(const void* in, void* out, const size_t* counts, const size_t* displs,
                       strataDataType_t type, strataRedOp_t op);
  Status allGather(const void* in, void* out, const size_t* counts, const size_t* displs,
                   strataDataType_t type);
  // Small calls: every member sends its vector to every other and reduces all of them in
  // member order (one step; the same bits everywhere). Large ones: the ring of p2p_ring.h on
  // kCall (the asynchronous one on kRing may be in flight meanwhile).
  Status allReduce(const void* in, void* out, size_t count, strataDataType_t type,
                   strataRedOp_t op);
  // Small: the root sends to each member. Large: a scatter of near-equal blocks, then a ring
  // all-gather (every link busy, not only the root's).
  Status broadcast(const void* in, void* out, size_t count, strataDataType_t type, int root);
  // Small: every member sends to the root, which reduces in member order. Large: a ring
  // reduce-scatter, then a gather of the reduced blocks to the root.
  Status reduce(const void* in, void* out, size_t count, strataDataType_t type, strataRedOp_t op,
                int root);
  Status scatter(const void* in, void* out, const size_t* counts, const size_t* displs,
                 strataDataType_t type, int root);
  Status gather(const void* in, void* out, const size_t* counts, const size_t* displs,
                strataDataType_t type, int root);
  // Every operation posted (kExchange), then all waited for.
  Status exchange(const PeerOp* ops, size_t n);

  // The scratch blocks, handed over when the fabric goes after an abort (an abandoned
  // receive may still name them; common/mpi_wait.h: keepUntilExit).
  std::vector<std::vector<char>> takeScratch();

  // Below this many bytes per member's vector, allreduce and reduce send whole vectors and
  // broadcast sends from the root only.
  static constexpr size_t kDirectBytes = 32 << 10;

 private:
  int mod(int x) const { return ((x % p_) + p_) % p_; }
  // Near-equal blocks of `count` (the first count % p one element longer), in evenCounts_.
  void evenBlocks(size_t count);
  char* grow(std::vector<char>& v, size_t bytes);
  // Receives every other member's vector (and sends this one's to each when sendToAll), then
  // reduces all of them in member order into `out`.
  Status reduceGathered(const void* in, void* out, size_t count, strataDataType_t type,
                        strataRedOp_t op, bool sendToAll, const char* what);

  Link& link_;
  int r_, p_;
  std::vector<size_t> evenCounts_, evenDispls_;  // evenBlocks()
  std::vector<char> sendScratch_, recvScratch_;  // ring partials; grow, never shrink
  std::vector<char> gathered_;                   // small allreduce/reduce: every vector
  std::vector<const void*> srcs_;                // reduceMany's sources
  RingAllReduce ring_;                           // large allreduces
};

}  // namespace strata::fabric::p2p
