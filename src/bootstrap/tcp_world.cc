#include "bootstrap/tcp_world.h"

#include <poll.h>

#include <cstring>
#include <thread>

#include "bootstrap/tcp_root.h"
#include "common/deadline.h"
#include "common/log.h"

namespace strata::boot {
namespace {

std::string rankName(int r) { return "rank " + std::to_string(r); }

// A connection closed with no goodbye before it (tcp_world.h, "Leaving").
constexpr const char* kClosedWhy =
    "its process is gone: its connections closed without a goodbye (it crashed, was killed, or "
    "exited without destroying its communicators)";

}  // namespace

StatusOr<std::shared_ptr<TcpWorld>> TcpWorld::join(const UniqueId& id, int rank, int nranks) {
  deadline::DefaultScope scope;
  std::shared_ptr<TcpWorld> w(new TcpWorld(rank, nranks, id.secret));
  STRATA_ASSIGN_OR_RETURN(net::Interface itf, net::chooseInterface(&id.root));
  w->listenAddr_ = itf.addr;
  w->listenAddr_.setPort(0);
  STRATA_ASSIGN_OR_RETURN(w->listener_, net::listenOn(&w->listenAddr_));
  if (id.fromEnv && rank == 0) {
    net::SockAddr root = id.root;
    const Status st = startRoot(&root, id.secret);
    if (!st.isOk()) {
      return Status(st.code(),
                    "STRATA_COMM_ID=" + id.root.str() + ": rank 0 runs the root: " + st.message());
    }
  }
  STRATA_RETURN_IF_ERROR(w->registerWithRoot(id));
  STRATA_INFO(kSubsysInit, "tcp bootstrap: rank %d of %d listens on %s (interface %s)", rank,
              nranks, w->listenAddr_.str().c_str(), itf.name.c_str());
  w->startWatcher();
  return w;
}

Status TcpWorld::registerWithRoot(const UniqueId& id) {
  const std::string what = "the rendezvous root " + id.root.str();
  StatusOr<net::Fd> conn = net::connectTo(id.root, true, "the rendezvous root");
  if (!conn.isOk()) {
    return Status(conn.status().code(),
                  conn.status().message() +
                      " (the process that made the id must keep running until every rank has "
                      "joined; an id serves one communicator)");
  }
  net::Fd fd = conn.take();
  wire::Hello hello;
  hello.secret = secret_;
  hello.kind = static_cast<uint32_t>(wire::Kind::kRegister);
  hello.rank = rank_;
  hello.nranks = size_;
  const wire::AddrWire mine = wire::toWire(listenAddr_);
  STRATA_RETURN_IF_ERROR(
      net::writeAll(fd.get(), &hello, sizeof(hello), "registering with " + what));
  STRATA_RETURN_IF_ERROR(net::writeAll(fd.get(), &mine, sizeof(mine), "registering with " + what));
  wire::ReplyHeader h;
  STRATA_RETURN_IF_ERROR(
      net::readAll(fd.get(), &h, sizeof(h), "waiting for every rank to register with " + what));
  if (h.status != 0) {
    std::string msg(std::min<uint32_t>(h.bytes, 4096), '\0');
    STRATA_RETURN_IF_ERROR(net::readAll(fd.get(), msg.data(), msg.size(), "reading " + what));
    return Status(h.status == 2 ? Code::kRemoteError : Code::kInvalidUsage, msg);
  }
  if (h.bytes != static_cast<uint64_t>(size_) * sizeof(wire::AddrWire)) {
    return internalError("the rendezvous root sent a table of " + std::to_string(h.bytes) +
                         " bytes for " + std::to_string(size_) + " ranks");
  }
  std::vector<wire::AddrWire> table(static_cast<size_t>(size_));
  STRATA_RETURN_IF_ERROR(net::readAll(fd.get(), table.data(), h.bytes, "reading " + what));
  for (const wire::AddrWire& a : table) {
    STRATA_ASSIGN_OR_RETURN(net::SockAddr addr, wire::fromWire(a));
    addrs_.push_back(addr);
  }
  return Status::ok();
}

Status TcpWorld::openTo(int peer) {
  StatusOr<net::Fd> fd = net::connectTo(addrs_[peer], false, rankName(peer));
  if (!fd.isOk()) {
    lose(peer, fd.status().message());
    return fd.status();
  }
  Conn& c = to_[peer];
  c.fd = fd.take();
  wire::Hello hello;
  hello.secret = secret_;
  hello.kind = static_cast<uint32_t>(wire::Kind::kPeer);
  hello.rank = rank_;
  hello.nranks = size_;
  const auto* p = reinterpret_cast<const char*>(&hello);
  c.out.insert(c.out.end(), p, p + sizeof(hello));
  return Status::ok();
}

Status TcpWorld::exchange(const std::vector<Send>& sends, const std::vector<Recv>& recvs,
                          const std::string& what) {
  deadline::DefaultScope scope;
  std::unique_lock<std::mutex> lock(mu_);
  for (const Send& s : sends) {
    const auto* data = static_cast<const char*>(s.data);
    if (s.to == rank_) {
      mailbox_[Key{s.group, rank_, s.tag}].emplace_back(data, data + s.bytes);
      continue;
    }
    if (!gone_[s.to].empty()) {
      if (s.optional) continue;
      return Status(Code::kRemoteError,
                    what + ": cannot send to " + rankName(s.to) + ": " + gone_[s.to]);
    }
    if (!to_[s.to].fd.valid()) {
      const Status opened = openTo(s.to);
      if (!opened.isOk() && s.optional) continue;  // it is gone now (openTo lost it)
      STRATA_RETURN_IF_ERROR(opened);
    }
    wire::FrameHeader h{s.group, s.tag, s.bytes};
    const auto* hp = reinterpret_cast<const char*>(&h);
    std::vector<char>& out = to_[s.to].out;
    out.insert(out.end(), hp, hp + sizeof(h));
    out.insert(out.end(), data, data + s.bytes);
  }
  for (;;) {
    bool have = true;
    for (const Recv& r : recvs) {
      auto it = mailbox_.find(Key{r.group, r.from, r.tag});
      if (it != mailbox_.end() && !it->second.empty()) continue;
      have = false;
      if (!gone_[r.from].empty()) {
        return Status(Code::kRemoteError,
                      what + ": waiting for " + rankName(r.from) + ": " + gone_[r.from]);
      }
    }
    for (const Send& s : sends) {
      // A peer may leave as soon as it has what it needs: only bytes it never got are lost.
      if (s.to != rank_ && !s.optional && !gone_[s.to].empty() && lostUnsent_[s.to]) {
        return Status(Code::kRemoteError,
                      what + ": sending to " + rankName(s.to) + ": " + gone_[s.to]);
      }
    }
    if (have && flushed(sends)) break;
    STRATA_RETURN_IF_ERROR(pollOnce(10));
    if (deadline::Scope::expired()) {
      std::string waiting;
      for (const Recv& r : recvs) {
        auto it = mailbox_.find(Key{r.group, r.from, r.tag});
        if (it == mailbox_.end() || it->second.empty()) waiting += " " + std::to_string(r.from);
      }
      return deadline::expiredError(
          what + (waiting.empty() ? " (sending)" : " waiting for rank(s)" + waiting));
    }
    // Let another bootstrap of this world drive the sockets between rounds.
    lock.unlock();
    std::this_thread::yield();
    lock.lock();
  }
  for (const Recv& r : recvs) {
    auto it = mailbox_.find(Key{r.group, r.from, r.tag});
    *r.out = std::move(it->second.front());
    it->second.pop_front();
    if (it->second.empty()) mailbox_.erase(it);
  }
  return Status::ok();
}

bool TcpWorld::flushed(const std::vector<Send>& sends) const {
  for (const Send& s : sends) {
    if (s.to == rank_) continue;
    const Conn& c = to_[s.to];
    if (c.fd.valid() && c.outOff < c.out.size()) return false;
  }
  return true;
}

Status TcpWorld::pollOnce(int ms) {
  std::vector<pollfd> fds;
  std::vector<int> who;  // -1 listener, -2 - k pending k, peer for from_, size_ + peer for to_
  fds.push_back({listener_.get(), POLLIN, 0});
  who.push_back(-1);
  for (size_t k = 0; k < pending_.size(); ++k) {
    fds.push_back({pending_[k].fd.get(), POLLIN, 0});
    who.push_back(-2 - static_cast<int>(k));
  }
  for (int p = 0; p < size_; ++p) {
    if (from_[p].fd.valid()) {
      fds.push_back({from_[p].fd.get(), POLLIN, 0});
      who.push_back(p);
    }
    if (to_[p].fd.valid()) {
      // POLLIN on a connection we only write to means the peer closed it (or reset it).
      const short ev = POLLIN | (to_[p].outOff < to_[p].out.size() ? POLLOUT : 0);
      fds.push_back({to_[p].fd.get(), ev, 0});
      who.push_back(size_ + p);
    }
  }
  const int n = ::poll(fds.data(), fds.size(), ms);
  if (n < 0 && errno != EINTR) return systemError(std::string("poll: ") + std::strerror(errno));
  std::vector<size_t> readyPending;
  std::vector<int> closedTo;  // peers whose connection we write to was closed by them
  for (size_t i = 0; n > 0 && i < fds.size(); ++i) {
    if (fds[i].revents == 0) continue;
    const int w = who[i];
    if (w == -1) {
      acceptAll();
    } else if (w <= -2) {
      readyPending.push_back(static_cast<size_t>(-2 - w));
    } else if (w < size_) {
      if (from_[w].fd.valid()) readFrom(w);
    } else {
      const int p = w - size_;
      Conn& c = to_[p];
      if (!c.fd.valid()) continue;  // lost earlier in this round
      if ((fds[i].revents & (POLLIN | POLLHUP | POLLERR)) != 0) {
        char probe;
        StatusOr<size_t> got = net::readSome(c.fd.get(), &probe, 1);
        if (!got.isOk()) {
          closedTo.push_back(p);
          continue;
        }
        if (got.value() == 1 && probe == kByeByte) {
          left(p);
          continue;
        }
      }
      if ((fds[i].revents & POLLOUT) != 0 && c.outOff < c.out.size()) {
        StatusOr<size_t> put =
            net::writeSome(c.fd.get(), c.out.data() + c.outOff, c.out.size() - c.outOff);
        if (!put.isOk()) {
          lose(p, put.status().message());
          continue;
        }
        c.outOff += put.value();
        if (c.outOff == c.out.size()) {
          c.out.clear();
          c.outOff = 0;
        }
      }
    }
  }
  // Backwards: readPending removes entries.
  for (size_t k = readyPending.size(); k-- > 0;) readPending(readyPending[k]);
  // A peer that closed its connections may have sent its last frames, before it left, over its
  // connection to us that is still being set up (not yet accepted, or its hello not yet read):
  // read what is there first, so that everything it sent before leaving still counts, and only
  // then call it lost (a peer that left after our message reached it did nothing wrong).
  if (!closedTo.empty()) {
    acceptAll();
    for (size_t k = pending_.size(); k-- > 0;) readPending(k);
    for (int p : closedTo) {
      if (from_[p].fd.valid()) readFrom(p);
      if (gone_[p].empty()) {
        lose(p, kClosedWhy);
      }
    }
  }
  announceLost();
  const double now = wire::nowSeconds();
  for (size_t k = pending_.size(); k-- > 0;) {
    if (now - pending_[k].since <= wire::kHelloSeconds) continue;
    STRATA_WARN(kSubsysInit,
                "tcp bootstrap (rank %d): dropped a connection from %s: no hello in "
                "30 s",
                rank_, pending_[k].peer.str().c_str());
    pending_.erase(pending_.begin() + static_cast<long>(k));
  }
  return Status::ok();
}

void TcpWorld::acceptAll() {
  for (;;) {
    wire::Pending p;
    p.fd = net::acceptOne(listener_.get(), &p.peer);
    if (!p.fd.valid()) return;
    p.since = wire::nowSeconds();
    if (pending_.size() >= wire::kMaxPending) pending_.erase(pending_.begin());
    pending_.push_back(std::move(p));
  }
}

void TcpWorld::readPending(size_t k) {
  wire::Pending& p = pending_[k];
  StatusOr<bool> full = p.fill(sizeof(wire::Hello));
  std::string problem;
  wire::Hello hello;
  if (!full.isOk()) {
    problem = "closed before its hello (a port scan?)";
  } else if (!full.value()) {
    return;
  } else {
    std::memcpy(&hello, p.buf.data(), sizeof(hello));
    problem = wire::helloProblem(hello, secret_, wire::Kind::kPeer, size_);
    if (problem.empty() && (hello.rank == rank_ || from_[hello.rank].fd.valid())) {
      problem = "a second connection claiming " + rankName(hello.rank);
    }
  }
  if (!problem.empty()) {
    STRATA_WARN(kSubsysInit, "tcp bootstrap (rank %d): dropped a connection from %s: %s", rank_,
                p.peer.str().c_str(), problem.c_str());
  } else {
    from_[hello.rank].fd = std::move(p.fd);
  }
  pending_.erase(pending_.begin() + static_cast<long>(k));
}

void TcpWorld::readFrom(int peer) {
  Conn& c = from_[peer];
  char buf[65536];
  bool closed = false;
  for (;;) {
    StatusOr<size_t> got = net::readSome(c.fd.get(), buf, sizeof(buf));
    if (!got.isOk()) {
      closed = true;  // the frames that arrived whole before the end still count
      break;
    }
    if (got.value() == 0) break;
    c.in.insert(c.in.end(), buf, buf + got.value());
  }
  size_t at = 0;
  while (c.in.size() - at >= sizeof(wire::FrameHeader)) {
    wire::FrameHeader h;
    std::memcpy(&h, c.in.data() + at, sizeof(h));
    if (h.bytes > wire::kMaxFrameBytes) {
      lose(peer, "it sent a corrupted stream");
      return;
    }
    if (c.in.size() - at - sizeof(h) < h.bytes) break;
    const char* body = c.in.data() + at + sizeof(h);
    if (h.group == kNoticeGroup && h.tag == kByeTag) {
      left(peer);
    } else if (h.group == kNoticeGroup) {
      // A peer found rank `tag` lost (tcp_watch.cc); what it says of ourselves is not news.
      const int lost = static_cast<int>(h.tag);
      // Not news either: a sender naming itself (its frames are being read from it here).
      if (h.tag < static_cast<uint64_t>(size_) && lost != rank_ && lost != peer &&
          gone_[lost].empty()) {
        lose(lost, rankName(peer) + " found it lost: " + std::string(body, h.bytes), false);
      }
    } else {
      mailbox_[Key{h.group, peer, h.tag}].emplace_back(body, body + h.bytes);
    }
    at += sizeof(h) + h.bytes;
  }
  c.in.erase(c.in.begin(), c.in.begin() + static_cast<long>(at));
  if (closed) lose(peer, kClosedWhy);
}

void TcpWorld::lose(int peer, const std::string& why, bool announce) {
  lostUnsent_[peer] = lostUnsent_[peer] || to_[peer].outOff < to_[peer].out.size();
  if (gone_[peer].empty()) {
    gone_[peer] = why;
    STRATA_INFO(kSubsysInit, "tcp bootstrap (rank %d): %s: %s", rank_, rankName(peer).c_str(),
                why.c_str());
    lost_[peer] = true;
    if (announce) toAnnounce_.emplace_back(peer, why);
    for (auto& s : subscribers_) s.second(peer, why);
  }
  to_[peer] = Conn();
  from_[peer] = Conn();
}

}  // namespace strata::boot
