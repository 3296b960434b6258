#include "bootstrap/tcp_root.h"

#include <poll.h>

#include <algorithm>
#include <cstring>
#include <memory>
#include <set>
#include <thread>
#include <vector>

#include "bootstrap/tcp_wire.h"
#include "common/deadline.h"
#include "common/log.h"

namespace strata::boot {
namespace {

constexpr size_t kRegisterBytes = sizeof(wire::Hello) + sizeof(wire::AddrWire);

struct Registered {
  net::Fd fd;
  net::SockAddr peer;
  wire::AddrWire listen;
};

class Root {
 public:
  Root(net::Fd listener, net::SockAddr addr, const Secret& secret)
      : listener_(std::move(listener)), addr_(addr), secret_(secret) {}

  void run() {
    const double budget = deadline::configuredSeconds();
    double until = budget > 0 ? wire::nowSeconds() + budget : 0;
    while (nranks_ == 0 || count_ < nranks_) {
      if (until > 0 && wire::nowSeconds() > until) {
        if (failure_.empty()) timedOut(budget);
        return;
      }
      if (!failure_.empty() && everyRankTold()) return;
      pollOnce();
      if (count_ == 1 && !restarted_) {  // the first rank is here: the rest have budget from now
        restarted_ = true;
        until = budget > 0 ? wire::nowSeconds() + budget : 0;
      }
    }
    std::vector<wire::AddrWire> table(static_cast<size_t>(nranks_));
    for (int r = 0; r < nranks_; ++r) table[r] = ranks_[r].listen;
    wire::ReplyHeader h;
    h.bytes = static_cast<uint32_t>(table.size() * sizeof(wire::AddrWire));
    for (Registered& r : ranks_) {
      reply(r.fd, h, table.data());
    }
    STRATA_INFO(kSubsysInit, "rendezvous root %s: %d ranks registered, addresses sent",
                addr_.str().c_str(), nranks_);
  }

 private:
  void pollOnce() {
    std::vector<pollfd> fds;
    fds.push_back({listener_.get(), POLLIN, 0});
    for (const wire::Pending& p : pending_) fds.push_back({p.fd.get(), POLLIN, 0});
    if (::poll(fds.data(), fds.size(), 100) <= 0) {
      dropStale();
      return;
    }
    if (fds[0].revents != 0) acceptAll();
    // Walk backwards: finished or dropped connections leave the list.
    for (size_t k = pending_.size(); k-- > 0;) {
      if (k + 1 >= fds.size() || fds[k + 1].revents == 0) continue;
      readPending(k);
    }
    dropStale();
  }

  void acceptAll() {
    for (;;) {
      wire::Pending p;
      p.fd = net::acceptOne(listener_.get(), &p.peer);
      if (!p.fd.valid()) return;
      p.since = wire::nowSeconds();
      if (pending_.size() >= wire::kMaxPending) {
        drop(0, "too many connections that sent no registration");
      }
      pending_.push_back(std::move(p));
    }
  }

  void readPending(size_t k) {
    wire::Pending& p = pending_[k];
    StatusOr<bool> full = p.fill(kRegisterBytes);
    if (!full.isOk()) return drop(k, "closed before registering (a port scan?)");
    if (!full.value()) return;
    wire::Hello hello;
    std::memcpy(&hello, p.buf.data(), sizeof(hello));
    const std::string problem =
        wire::helloProblem(hello, secret_, wire::Kind::kRegister, 0);
    if (!problem.empty()) return drop(k, problem);
    const std::string who = "rank " + std::to_string(hello.rank) + " (" + p.peer.str() + ")";
    told_.insert(hello.rank);
    claimed_ = std::max(claimed_, static_cast<int>(hello.nranks));
    if (!failure_.empty()) return refuse(k, failure_);
    if (nranks_ == 0) {
      nranks_ = hello.nranks;
      ranks_.resize(static_cast<size_t>(nranks_));
      first_ = who;
    }
    if (hello.nranks != nranks_) {
      return fail(k, "the ranks disagree on the job size: " + who + " says " +
                         std::to_string(hello.nranks) + " ranks, " + first_ + " said " +
                         std::to_string(nranks_) +
                         ": every rank must pass the same nranks (WORLD_SIZE under torchrun-style "
                         "launchers)");
    }
    Registered& slot = ranks_[static_cast<size_t>(hello.rank)];
    if (slot.fd.valid()) {
      return fail(k, who + " registered twice: rank " + std::to_string(hello.rank) +
                         " already came from " + slot.peer.str() +
                         " (two processes were given the same rank)");
    }
    slot.fd = std::move(p.fd);
    slot.peer = p.peer;
    std::memcpy(&slot.listen, p.buf.data() + sizeof(hello), sizeof(slot.listen));
    ++count_;
    pending_.erase(pending_.begin() + static_cast<long>(k));
  }

  void dropStale() {
    const double now = wire::nowSeconds();
    for (size_t k = pending_.size(); k-- > 0;) {
      if (now - pending_[k].since > wire::kHelloSeconds) drop(k, "sent no registration in 30 s");
    }
  }

  // A stranger: logged and closed; the job never sees it.
  void drop(size_t k, const std::string& why) {
    STRATA_WARN(kSubsysInit, "rendezvous root %s: dropped a connection from %s: %s",
                addr_.str().c_str(), pending_[k].peer.str().c_str(), why.c_str());
    pending_.erase(pending_.begin() + static_cast<long>(k));
  }

  // A rank of this job that made a launch mistake: it gets the message and fails. Logged at
  // INFO here: the rank logs it at WARN (in the same process when the root's is a rank).
  void refuse(size_t k, const std::string& why) {
    STRATA_INFO(kSubsysInit, "rendezvous root %s: %s", addr_.str().c_str(), why.c_str());
    sendError(pending_[k].fd, why);
    pending_.erase(pending_.begin() + static_cast<long>(k));
  }

  // A launch mistake dooms the job: the rank that made it, every rank already registered (it
  // would otherwise wait for the whole timeout for a job that cannot form) and every rank that
  // registers later get the same message at once.
  void fail(size_t k, const std::string& why) {
    failure_ = why;
    refuse(k, why);
    for (Registered& r : ranks_) {
      if (!r.fd.valid()) continue;
      sendError(r.fd, why);
      r.fd = net::Fd();
    }
  }

  // After a failure: every rank any registration implied (up to the largest job size claimed)
  // has been told; the root then ends instead of waiting out the timeout.
  bool everyRankTold() const {
    for (int r = 0; r < claimed_; ++r) {
      if (told_.count(r) == 0) return false;
    }
    return true;
  }

  void timedOut(double budget) {
    std::string missing;
    int shown = 0;
    for (int r = 0; r < nranks_ && shown < 16; ++r) {
      if (ranks_[r].fd.valid()) continue;
      missing += (missing.empty() ? "" : ", ") + std::to_string(r);
      ++shown;
    }
    if (nranks_ - count_ > shown) missing += ", ...";
    char what[128];
    std::snprintf(what, sizeof(what), "the rendezvous timed out after %g s (STRATA_TIMEOUT): ",
                  budget);
    const std::string msg =
        nranks_ == 0 ? std::string(what) + "no rank registered"
                     : what + std::to_string(count_) + " of " + std::to_string(nranks_) +
                           " ranks registered; missing: " + missing;
    // Every registered rank gets the message and logs it; with none, the root is the only
    // one that can say it.
    if (count_ > 0) {
      STRATA_INFO(kSubsysInit, "rendezvous root %s: %s", addr_.str().c_str(), msg.c_str());
    } else if (nranks_ > 0) {
      STRATA_WARN(kSubsysInit, "rendezvous root %s: %s", addr_.str().c_str(), msg.c_str());
    }
    for (Registered& r : ranks_) {
      if (r.fd.valid()) sendError(r.fd, msg, 2);
    }
  }

  void sendError(const net::Fd& fd, const std::string& msg, uint32_t status = 1) {
    wire::ReplyHeader h;
    h.status = status;
    h.bytes = static_cast<uint32_t>(msg.size());
    reply(fd, h, msg.data());
  }

  // Best effort within a few seconds: a rank that stopped reading fails on its own deadline.
  void reply(const net::Fd& fd, const wire::ReplyHeader& h, const void* body) {
    deadline::Scope scope(10);
    if (net::writeAll(fd.get(), &h, sizeof(h), "reply").isOk()) {
      (void)net::writeAll(fd.get(), body, h.bytes, "reply");
    }
  }

  net::Fd listener_;
  net::SockAddr addr_;
  Secret secret_;
  std::vector<wire::Pending> pending_;
  std::vector<Registered> ranks_;
  int nranks_ = 0, count_ = 0;
  bool restarted_ = false;
  std::string first_;    // the first registration: "rank r (address)", named in a size mismatch
  std::string failure_;  // set by fail(): the job cannot form, every rank gets this
  std::set<int> told_;   // ranks that registered (answered or still waiting)
  int claimed_ = 0;      // the largest job size a registration claimed
};

}  // namespace

Status startRoot(net::SockAddr* addr, const Secret& secret) {
  StatusOr<net::Fd> listener = net::listenOn(addr);
  if (!listener.isOk()) {
    return Status(listener.status().code(),
                  "the rendezvous root cannot listen: " + listener.status().message());
  }
  auto root = std::make_shared<Root>(listener.take(), *addr, secret);
  // Detached: the process that made the id need not wait for the job to form; the thread ends
  // when every rank has its table or the rendezvous timed out.
  std::thread([root] { root->run(); }).detach();
  STRATA_INFO(kSubsysInit, "rendezvous root listening on %s", addr->str().c_str());
  return Status::ok();
}

}  // namespace strata::boot
