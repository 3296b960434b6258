// The members' side of the TCP control plane: one per communicator made from a unique id,
// shared by the bootstraps split from it (tcp_bootstrap.h).
//
// join() registers with the id's rendezvous root (tcp_root.h) and receives every rank's
// listening address. From then on members talk directly: a member sends to a peer over the
// one connection it opened to that peer (lazily, at the first send) and receives over the
// connections its peers opened to it, so each direction of a pair has its own socket and two
// members never race to set up the same one.
//
// Messages are frames (group, tag, bytes) delivered into a mailbox keyed by (group, sender,
// tag); frames with the same key are kept in arrival order. Whoever waits drives the sockets:
// there is no thread of its own. Invariants:
//   - a connection is admitted only after a Hello of kind Peer with the id's secret and a rank
//     in range; strangers are dropped and logged and never reach the mailbox;
//   - a send has left this process (is in the kernel) when exchange() returns, so a member may
//     close its sockets as soon as its last exchange returned;
//   - a peer whose connection to us closed is gone: a receive from it that the mailbox cannot
//     satisfy fails at once, naming the peer, instead of waiting for the deadline; a send to it
//     fails only if bytes for it were still queued (a peer leaves once it has what it needs).
//
// Watching (tcp_watch.cc): between collectives nobody waits, so a watcher thread drives the
// sockets every kWatchMs. A member that finds a peer gone itself (its connection closed, or a
// connect to it refused) tells every other member with a notice frame (group kNoticeGroup, tag
// the lost rank, the reason as body); a member that hears a notice marks the rank gone without
// telling further. Every rank has connections to its neighbours in the world's ring (the
// bootstrap's first allGather opened them), so a lost process is found by both neighbours and
// every member knows within a watch period or two. Subscribers (a communicator's memberLost)
// are told once per lost rank, under the world's lock.
//
// Leaving is not being lost: a member whose world ends (its last communicator of this world
// destroyed or aborted) says goodbye before it closes its connections: a bye frame on those it
// writes to, the byte kByeByte on those it reads from. A member that hears it marks the peer
// gone (a receive from it fails at once, as before) without telling anyone or its subscribers:
// a peer that finished earlier is not a failure of those still tearing down.
#pragma once

#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "bootstrap/sockets.h"
#include "bootstrap/tcp_wire.h"
#include "bootstrap/unique_id.h"
#include "common/status.h"

namespace strata::boot {

class TcpWorld {
 public:
  // Registers as `rank` of `nranks` with the root that `id` names; waits (STRATA_TIMEOUT) for
  // the table of addresses. For an id formed from STRATA_COMM_ID, rank 0 starts the root.
  static StatusOr<std::shared_ptr<TcpWorld>> join(const UniqueId& id, int rank, int nranks);
  ~TcpWorld();  // stops the watcher
  TcpWorld(const TcpWorld&) = delete;
  TcpWorld& operator=(const TcpWorld&) = delete;

  int rank() const { return rank_; }
  int size() const { return size_; }
  // Where this member accepts its peers' connections.
  const net::SockAddr& listenAddress() const { return listenAddr_; }

  struct Send {
    int to;
    uint64_t group, tag;
    const void* data;
    size_t bytes;
    bool optional = false;  // a peer known gone is skipped instead of failing the exchange
  };
  struct Recv {
    int from;
    uint64_t group, tag;
    std::vector<char>* out;  // receives the frame's bytes
  };
  // Queues every send, then moves bytes until every receive is in and every send has left.
  // Bounded by the thread's deadline (STRATA_TIMEOUT outside a call); `what` names the
  // operation in errors. Thread-safe: several bootstraps of one world may wait at once.
  Status exchange(const std::vector<Send>& sends, const std::vector<Recv>& recvs,
                  const std::string& what);

  // For protocols that take frames in whatever order they come (tcp_bootstrap.cc's shrink): the
  // frame (group, from, tag) into *out if it is in, without waiting; whether `from` is gone (why in
  // *why); and one round of driving the sockets, waiting up to `ms`.
  bool take(int from, uint64_t group, uint64_t tag, std::vector<char>* out);
  bool isGone(int peer, std::string* why);
  Status progress(int ms);

  // Tells `fn(rank, why)` of every rank lost, those already lost at once; returns an id for
  // unsubscribe(). fn runs under the world's lock: it must not call into the world.
  using LostFn = std::function<void(int rank, const std::string& why)>;
  uint64_t subscribe(LostFn fn);
  // After it returns, the subscriber's fn is never called again.
  void unsubscribe(uint64_t id);

  static constexpr uint64_t kNoticeGroup = ~uint64_t{0};
  static constexpr uint64_t kByeTag = ~uint64_t{0};  // in kNoticeGroup
  static constexpr char kByeByte = 'B';
  static constexpr int kWatchMs = 50;

 private:
  struct Conn {
    net::Fd fd;
    std::vector<char> in;   // received bytes not yet framed (incoming connections)
    std::vector<char> out;  // bytes not yet written (outgoing connections)
    size_t outOff = 0;
  };
  using Key = std::tuple<uint64_t, int, uint64_t>;  // (group, sender, tag)

  TcpWorld(int rank, int size, const Secret& secret)
      : rank_(rank),
        size_(size),
        secret_(secret),
        to_(static_cast<size_t>(size)),
        from_(static_cast<size_t>(size)),
        gone_(static_cast<size_t>(size)),
        lost_(static_cast<size_t>(size), false),
        lostUnsent_(static_cast<size_t>(size), false) {}
  Status registerWithRoot(const UniqueId& id);
  Status openTo(int peer);
  // One round: waits up to `ms` for any socket, accepts, reads, writes. Called locked.
  Status pollOnce(int ms);
  void acceptAll();
  void readPending(size_t k);
  void readFrom(int peer);
  // `announce`: this member found it (tell the others); false for a notice heard.
  void lose(int peer, const std::string& why, bool announce = true);
  // Sends the notices lose() queued (called locked, after a round of pollOnce).
  void announceLost();
  // A peer said goodbye (called locked): gone, but not lost.
  void left(int peer);
  // The destructor's goodbye to every connected peer (tcp_watch.cc).
  void sayGoodbye();
  void startWatcher();
  void watchLoop();
  bool flushed(const std::vector<Send>& sends) const;

  const int rank_, size_;
  const Secret secret_;
  std::mutex mu_;  // everything below
  net::Fd listener_;
  net::SockAddr listenAddr_;
  std::vector<net::SockAddr> addrs_;  // every rank's listening address
  std::vector<Conn> to_, from_;       // [peer]: the connection this member opened / accepted
  std::vector<std::string> gone_;     // [peer]: why its connection to us ended ("" if open)
  std::vector<bool> lost_;            // [peer]: gone without a goodbye (subscribers told)
  std::vector<bool> lostUnsent_;      // [peer]: bytes for it were still queued when it left
  std::vector<wire::Pending> pending_;
  std::map<Key, std::deque<std::vector<char>>> mailbox_;
  std::vector<std::pair<int, std::string>> toAnnounce_;  // lost ranks not yet told to the others
  std::map<uint64_t, LostFn> subscribers_;
  uint64_t nextSubscriber_ = 0;
  // The watcher (tcp_watch.cc): stopped by the destructor.
  std::mutex stopMu_;
  std::condition_variable stopCv_;
  bool stop_ = false;
  std::thread watcher_;
};

}  // namespace strata::boot
