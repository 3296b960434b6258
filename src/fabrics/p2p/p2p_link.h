// Tagged point-to-point messages between the members of one group: what the transport-neutral
// collectives of this folder (p2p_collectives.h, p2p_ring.h) are built on. A transport (the
// ucx fabric's UcxLink) implements it; the algorithms never see the transport's requests.
//
// Contract of a transport:
//   - Messages of different channels never match each other: a channel's receives only take
//     that channel's sends.
//   - Between two members, on one channel, the k-th send of one matches the k-th receive of the
//     other (in posting order), whatever the timing: the algorithms post in the same order on
//     both sides, so no other matching is needed.
//   - Every channel has its own set of requests in flight: waiting on one channel never waits
//     for another's (the asynchronous ring stays in flight across blocking calls).
//   - A receive that gets another length than it posted fails with strataInvalidUsage (the
//     peers disagree on a count); a message to oneself is allowed; lengths may be 0 or GBs.
#pragma once

#include <cstddef>
#include <cstring>

#include "common/status.h"

namespace strata::fabric::p2p {

enum class Channel : unsigned {
  kCall = 0,      // a blocking collective (reduce-scatter, broadcast, a blocking allreduce...)
  kExchange = 1,  // Fabric::exchange
  kRing = 2,      // the allreduce started by allReduceStart, in flight across other calls
};
constexpr unsigned kChannels = 3;

// memmove that takes the null pointers of empty blocks (the C functions' arguments must not be
// null even for 0 bytes, and a block of 0 elements may come with a null buffer).
inline void copyBytes(void* dst, const void* src, size_t n) {
  if (n > 0) std::memmove(dst, src, n);
}

class Link {
 public:
  virtual ~Link() = default;
  virtual int rank() const = 0;
  virtual int size() const = 0;

  // Post one message; it is in flight until test() or wait() on its channel says done. The
  // buffer stays untouched (send) or unread (receive) until then. A failed post abandons the
  // channel's messages in flight, as a failed wait does.
  virtual Status postSend(Channel ch, int peer, const void* buf, size_t bytes) = 0;
  virtual Status postRecv(Channel ch, int peer, void* buf, size_t bytes) = 0;

  // Advances the transport; *done when every message posted on `ch` completed (then none is
  // in flight on it). A failure abandons the channel's messages (see wait()).
  virtual Status test(Channel ch, bool* done) = 0;

  // Until every message posted on `ch` completed, within the thread's deadline
  // (common/deadline.h), running fabric::IdleHook::idle between polls. `what` names the
  // operation ("ucx reduce-scatter, ring step 2 of 6") for messages, which also name the
  // first peer still awaited. On expiry or failure the channel's messages are abandoned: never
  // waited on again, receives cancelled; their buffers may still be touched by a late peer,
  // so the caller's communicator enters its error state.
  virtual Status wait(Channel ch, const char* what) = 0;

  // Fabric::probe on channel `ch`: whether the next message of `ch` from `peer` (any member
  // when -1) has arrived with no receive posted for it, and its sender and length. A
  // transport that cannot tell says so.
  virtual Status probe(Channel ch, int peer, bool* found, int* source, size_t* bytes) {
    (void)ch;
    (void)peer;
    *found = false;
    *source = -1;
    *bytes = 0;
    return invalidUsage("this transport cannot probe for messages");
  }
};

// Posts a send to `to` and a receive from `from` on `ch`, then waits for both (one ring step).
Status sendRecv(Link& link, Channel ch, int to, const void* sendBuf, size_t sendBytes, int from,
                void* recvBuf, size_t recvBytes, const char* what);

}  // namespace strata::fabric::p2p
