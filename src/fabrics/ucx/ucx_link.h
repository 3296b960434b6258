// The ucx fabric's transport: p2p_link.h's tagged messages over UCX's UCP API.
//
// One UCP worker per fabric (not one per process): a worker is UCX's tag-matching space and
// progress engine, so each group's messages match only that group's receives and the tag
// needs no group id; a fabric is driven by one thread at a time (the issuing or the progress
// thread), which is UCS_THREAD_MODE_SERIALIZED, with no lock shared with other communicators;
// and abandoning one fabric (strataCommAbort) destroys only its own worker. The cost is a few
// sockets and shared-memory FIFOs per fabric, made once at setup. The UCP context (the
// transports' configuration, UCX_* variables) is one per process (ucx_context.h).
//
// Every member connects an endpoint to every member, itself included (UCX's `self`
// transport), from the worker addresses exchanged over the group's bootstrap: any Bootstrap
// works, MPI or not.
//
// Tags (64 bits): channel (8) | sender's position in the group (24) | sequence (32).
// Invariant: the sequence counts the messages of one channel from one member to another, on
// both sides (sends by destination, receives by source). Every member posts a channel's
// messages to a peer in the same order as the peer posts the matching receives (p2p_link.h),
// so the k-th send and the k-th receive carry the same tag and a receive, posted with the full
// mask, can only match its own message: never another channel's (the asynchronous ring stays
// apart from blocking calls), another sender's, or an earlier or later one. The 32-bit
// sequence wraps harmlessly: fewer than 2^32 messages of a channel are ever in flight.
#pragma once

#include <ucp/api/ucp.h>

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "bootstrap/bootstrap.h"
#include "fabrics/p2p/p2p_link.h"

namespace strata::fabric {

class UcxLink final : public p2p::Link {
 public:
  // Collective over `group`: every member gets a link connected to all, or every member the
  // error of the first that failed.
  static StatusOr<std::unique_ptr<UcxLink>> create(boot::Bootstrap& group);
  ~UcxLink() override;
  UcxLink(const UcxLink&) = delete;
  UcxLink& operator=(const UcxLink&) = delete;

  int rank() const override { return rank_; }
  int size() const override { return size_; }
  Status postSend(p2p::Channel ch, int peer, const void* buf, size_t bytes) override;
  Status postRecv(p2p::Channel ch, int peer, void* buf, size_t bytes) override;
  Status test(p2p::Channel ch, bool* done) override;
  Status wait(p2p::Channel ch, const char* what) override;
  // ucp_tag_probe_nb on the channel's bits (and the sender's, for one peer); a match counts
  // only when it carries the sequence the next receive from its sender will post.
  Status probe(p2p::Channel ch, int peer, bool* found, int* source, size_t* bytes) override;

  // strataCommAbort (or the error state): the destructor then neither flushes nor waits on
  // any peer, and keeps the worker (see there).
  void abandon() { abandoned_ = true; }
  // Fabric::retire: the destructor neither flushes nor waits, and destroys the worker.
  void retire() { abandoned_ = retired_ = true; }

 private:
  UcxLink(int rank, int size) : rank_(rank), size_(size) {}
  Status connect(boot::Bootstrap& group);

  // One message in flight. `request` is null once complete (or when it completed at once).
  struct Pending {
    void* request = nullptr;
    bool recv = false;
    int peer = 0;
    size_t bytes = 0;
    uint32_t seq = 0;
    ucs_status_t status = UCS_INPROGRESS;  // its outcome once complete
    size_t received = 0;                   // a receive's length, once complete
  };
  struct ChannelState {
    std::vector<Pending> pending;       // reused: no allocation when steady
    std::vector<uint32_t> sent, taken;  // sequence numbers, per peer (see the tag invariant)
  };

  uint64_t tag(p2p::Channel ch, int sender, uint32_t seq) const;
  // Collects completed requests of `ch`; *done when none is left. A failed request or a
  // receive of another length fails (and abandons the channel).
  Status collect(p2p::Channel ch, bool* done);
  Status finished(p2p::Channel ch, Pending& p, ucs_status_t st);
  Status failed(p2p::Channel ch, Status st);
  void abandonChannel(p2p::Channel ch);
  // Closes every endpoint without a handshake (force), locally.
  void closeEndpoints();
  std::string describe(const Pending& p, p2p::Channel ch, const char* what) const;
  void flushAndClose();

  int rank_, size_;
  ucp_worker_h worker_ = nullptr;
  std::vector<ucp_ep_h> eps_;  // by member
  ChannelState channels_[p2p::kChannels];
  bool abandoned_ = false;
  bool retired_ = false;
};

}  // namespace strata::fabric
