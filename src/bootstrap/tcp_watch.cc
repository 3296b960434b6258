// The TCP control plane's watching (tcp_world.h, "Watching"): the watcher thread, the notices
// that tell every member of a lost one, and the subscribers told of each.
#include <chrono>
#include <cstring>

#include "bootstrap/tcp_world.h"
#include "common/deadline.h"
#include "common/log.h"

namespace strata::boot {

void TcpWorld::startWatcher() {
  watcher_ = std::thread([this] { watchLoop(); });
}

TcpWorld::~TcpWorld() {
  {
    std::lock_guard<std::mutex> lock(stopMu_);
    stop_ = true;
  }
  stopCv_.notify_all();
  if (!watcher_.joinable()) return;  // join() failed before it started: nobody to tell
  watcher_.join();
  sayGoodbye();
}

void TcpWorld::sayGoodbye() {
  std::lock_guard<std::mutex> lock(mu_);
  const wire::FrameHeader bye{kNoticeGroup, kByeTag, 0};
  const auto* bp = reinterpret_cast<const char*>(&bye);
  for (int p = 0; p < size_; ++p) {
    if (from_[p].fd.valid()) (void)net::writeSome(from_[p].fd.get(), &kByeByte, 1);
    if (to_[p].fd.valid()) to_[p].out.insert(to_[p].out.end(), bp, bp + sizeof(bye));
  }
  // Best effort, briefly: a peer that does not read is not waited for.
  for (int round = 0; round < 20; ++round) {
    bool flushed = true;
    for (int p = 0; p < size_; ++p) {
      if (to_[p].fd.valid() && to_[p].outOff < to_[p].out.size()) flushed = false;
    }
    if (flushed) return;
    (void)pollOnce(10);
  }
}

void TcpWorld::left(int peer) {
  if (!gone_[peer].empty()) return;
  gone_[peer] = "it left: its communicators of this control plane were destroyed or aborted";
  STRATA_INFO(kSubsysInit, "tcp bootstrap (rank %d): rank %d %s", rank_, peer, gone_[peer].c_str());
  // Frames it sent before its goodbye may still be on their way over our incoming connection,
  // which its close ends: only the outgoing one goes now.
  to_[peer] = Conn();
}

void TcpWorld::watchLoop() {
  std::unique_lock<std::mutex> stopLock(stopMu_);
  while (
      !stopCv_.wait_for(stopLock, std::chrono::milliseconds(kWatchMs), [this] { return stop_; })) {
    stopLock.unlock();
    {
      std::lock_guard<std::mutex> lock(mu_);
      // Two rounds: the first finds what closed and queues the notices, the second sends them.
      for (int round = 0; round < 2; ++round) {
        const Status st = pollOnce(0);
        if (!st.isOk()) {
          STRATA_INFO(kSubsysInit, "tcp bootstrap (rank %d): watcher: %s", rank_,
                      st.message().c_str());
        }
      }
    }
    stopLock.lock();
  }
}

void TcpWorld::announceLost() {
  // Under the world's lock: a connect to a peer that does not answer must not hold every
  // other waiter for long.
  deadline::Scope bounded(1.0);
  // Not a range loop: a connect refused while announcing loses that peer too, which queues
  // one more notice.
  for (size_t k = 0; k < toAnnounce_.size(); ++k) {
    const int lost = toAnnounce_[k].first;
    const std::string why = toAnnounce_[k].second;
    for (int q = 0; q < size_; ++q) {
      if (q == rank_ || q == lost || !gone_[q].empty()) continue;
      if (!to_[q].fd.valid() && !openTo(q).isOk()) continue;  // openTo lost it: noticed above
      const wire::FrameHeader h{kNoticeGroup, static_cast<uint64_t>(lost), why.size()};
      const auto* hp = reinterpret_cast<const char*>(&h);
      std::vector<char>& out = to_[q].out;
      out.insert(out.end(), hp, hp + sizeof(h));
      out.insert(out.end(), why.begin(), why.end());
    }
  }
  toAnnounce_.clear();
}

uint64_t TcpWorld::subscribe(LostFn fn) {
  std::lock_guard<std::mutex> lock(mu_);
  for (int r = 0; r < size_; ++r) {
    if (lost_[r]) fn(r, gone_[r]);  // not those that said goodbye
  }
  const uint64_t id = ++nextSubscriber_;
  subscribers_.emplace(id, std::move(fn));
  return id;
}

void TcpWorld::unsubscribe(uint64_t id) {
  std::lock_guard<std::mutex> lock(mu_);
  subscribers_.erase(id);
}

bool TcpWorld::take(int from, uint64_t group, uint64_t tag, std::vector<char>* out) {
  std::lock_guard<std::mutex> lock(mu_);
  auto it = mailbox_.find(Key{group, from, tag});
  if (it == mailbox_.end() || it->second.empty()) return false;
  *out = std::move(it->second.front());
  it->second.pop_front();
  if (it->second.empty()) mailbox_.erase(it);
  return true;
}

bool TcpWorld::isGone(int peer, std::string* why) {
  std::lock_guard<std::mutex> lock(mu_);
  if (gone_[peer].empty()) return false;
  if (why != nullptr) *why = gone_[peer];
  return true;
}

Status TcpWorld::progress(int ms) {
  std::lock_guard<std::mutex> lock(mu_);
  return pollOnce(ms);
}

}  // namespace strata::boot
