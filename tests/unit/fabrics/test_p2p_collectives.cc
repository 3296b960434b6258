// The transport-neutral collectives of fabrics/p2p/ between threads of one process, over an
// in-memory Link that keeps p2p_link.h's contract (channels apart, in-order matching per
// channel and pair, lengths checked): irregular blocks with zeros, every root, the large and
// small forms, exchanges with oneself, the started ring in flight across blocking calls, and a
// count disagreement reported as strataInvalidUsage.
#include <catch2/catch.hpp>
#include <cstdint>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "fabrics/p2p/p2p_collectives.h"
#include "fabrics/p2p/p2p_ring.h"

namespace {

using strata::Code;
using strata::Status;
using strata::fabric::PeerOp;
using strata::fabric::p2p::Channel;
using strata::fabric::p2p::Collectives;
using strata::fabric::p2p::Link;
using strata::fabric::p2p::RingAllReduce;

// Queues of sent messages per (channel, from, to): a send is copied at once (eager).
struct Mailboxes {
  explicit Mailboxes(int members)
      : p(members), queues(strata::fabric::p2p::kChannels * members * members) {}
  std::deque<std::vector<char>>& at(Channel ch, int from, int to) {
    return queues[(static_cast<int>(ch) * p + from) * p + to];
  }
  int p;
  std::mutex mutex;
  std::vector<std::deque<std::vector<char>>> queues;
};

class MemLink final : public Link {
 public:
  MemLink(Mailboxes& m, int rank) : m_(m), rank_(rank) {}
  int rank() const override { return rank_; }
  int size() const override { return m_.p; }
  Status postSend(Channel ch, int peer, const void* buf, size_t bytes) override {
    std::lock_guard<std::mutex> lock(m_.mutex);
    const char* b = static_cast<const char*>(buf);
    m_.at(ch, rank_, peer).emplace_back(b, b + bytes);
    return Status::ok();
  }
  Status postRecv(Channel ch, int peer, void* buf, size_t bytes) override {
    pending_[static_cast<int>(ch)].push_back({peer, buf, bytes});
    return Status::ok();
  }
  // Receives complete in posting order per peer: the first pending one from each peer takes
  // that peer's oldest message.
  Status test(Channel ch, bool* done) override {
    std::vector<Recv>& pending = pending_[static_cast<int>(ch)];
    std::lock_guard<std::mutex> lock(m_.mutex);
    for (size_t i = 0; i < pending.size();) {
      std::deque<std::vector<char>>& q = m_.at(ch, pending[i].peer, rank_);
      bool earlier = false;  // an older receive from the same peer is still waiting
      for (size_t k = 0; k < i; ++k) earlier |= pending[k].peer == pending[i].peer;
      if (earlier || q.empty()) {
        ++i;
        continue;
      }
      if (q.front().size() != pending[i].bytes) {
        pending.clear();
        return strata::invalidUsage("length mismatch");
      }
      if (!q.front().empty()) std::memcpy(pending[i].buf, q.front().data(), q.front().size());
      q.pop_front();
      pending.erase(pending.begin() + static_cast<long>(i));
    }
    *done = pending.empty();
    return Status::ok();
  }
  Status wait(Channel ch, const char* what) override {
    for (long spins = 0; spins < 20000000; ++spins) {
      bool done = false;
      STRATA_RETURN_IF_ERROR(test(ch, &done));
      if (done) return Status::ok();
      std::this_thread::yield();
    }
    return Status(Code::kRemoteError, std::string("stuck in ") + what);
  }

 private:
  struct Recv {
    int peer;
    void* buf;
    size_t bytes;
  };
  Mailboxes& m_;
  int rank_;
  std::vector<Recv> pending_[strata::fabric::p2p::kChannels];
};

// Runs body(rank, link) on p threads; returns each rank's failures (empty: all checks held).
std::vector<std::string> onThreads(int p, const std::function<std::string(int, Link&)>& body) {
  Mailboxes m(p);
  std::vector<std::string> errors(p);
  std::vector<std::thread> threads;
  for (int r = 0; r < p; ++r) {
    threads.emplace_back([&, r] {
      MemLink link(m, r);
      errors[r] = body(r, link);
    });
  }
  for (std::thread& t : threads) t.join();
  return errors;
}

// Member j's value of element i.
int32_t value(int j, size_t i) { return static_cast<int32_t>(j * 1000 + i % 97); }
int32_t sumOver(int p, size_t i) {
  int32_t s = 0;
  for (int j = 0; j < p; ++j) s += value(j, i);
  return s;
}

std::string everyCollective(int r, Link& link) {
  const int p = link.size();
  Collectives c(link);
  std::string err;
  auto expect = [&](bool ok, const std::string& what) {
    if (!ok && err.empty()) err = "rank " + std::to_string(r) + ": " + what;
  };
  auto ok = [&](const Status& st, const std::string& what) {
    expect(st.isOk(), what + ": " + st.message());
  };
  // Irregular blocks, a zero among them.
  std::vector<size_t> counts(p), displs(p);
  size_t total = 0;
  for (int j = 0; j < p; ++j) {
    counts[j] = j == 1 ? 0 : 3 + 5 * j;
    displs[j] = total;
    total += counts[j];
  }
  std::vector<int32_t> in(total), out(total);
  for (size_t i = 0; i < total; ++i) in[i] = value(r, i);
  ok(c.reduceScatter(in.data(), out.data(), counts.data(), displs.data(), strataInt32, strataSum),
     "reduceScatter");
  for (size_t i = 0; i < counts[r]; ++i) expect(out[i] == sumOver(p, displs[r] + i), "rs value");

  std::vector<int32_t> mine(counts[r]);
  for (size_t i = 0; i < counts[r]; ++i) mine[i] = value(r, displs[r] + i);
  ok(c.allGather(mine.data(), out.data(), counts.data(), displs.data(), strataInt32), "allGather");
  for (int j = 0; j < p; ++j) {
    for (size_t i = 0; i < counts[j]; ++i) {
      expect(out[displs[j] + i] == value(j, displs[j] + i), "ag value");
    }
  }
  // Small and large (past kDirectBytes) allreduce, broadcast and reduce from every root.
  for (size_t n : {size_t{0}, size_t{7}, size_t{20011}}) {
    std::vector<int32_t> a(n), b(n);
    for (size_t i = 0; i < n; ++i) a[i] = value(r, i);
    ok(c.allReduce(a.data(), b.data(), n, strataInt32, strataSum), "allReduce");
    for (size_t i = 0; i < n; ++i) expect(b[i] == sumOver(p, i), "ar value");
    for (int root = 0; root < p; ++root) {
      std::vector<int32_t> x(n);
      for (size_t i = 0; i < n; ++i) x[i] = r == root ? value(root, i) : -1;
      ok(c.broadcast(x.data(), x.data(), n, strataInt32, root), "broadcast");
      for (size_t i = 0; i < n; ++i) expect(x[i] == value(root, i), "bcast value");
      std::vector<int32_t> y(n, -1);
      ok(c.reduce(a.data(), y.data(), n, strataInt32, strataSum, root), "reduce");
      for (size_t i = 0; r == root && i < n; ++i) expect(y[i] == sumOver(p, i), "reduce value");
    }
  }
  // Scatter and gather from every root.
  for (int root = 0; root < p; ++root) {
    std::vector<int32_t> block(counts[r], -1);
    ok(c.scatter(in.data(), block.data(), counts.data(), displs.data(), strataInt32, root),
       "scatter");
    for (size_t i = 0; i < counts[r]; ++i) expect(block[i] == value(root, displs[r] + i), "sc");
    std::vector<int32_t> all(total, -1);
    ok(c.gather(mine.data(), all.data(), counts.data(), displs.data(), strataInt32, root),
       "gather");
    for (int j = 0; r == root && j < p; ++j) {
      for (size_t i = 0; i < counts[j]; ++i) {
        expect(all[displs[j] + i] == value(j, displs[j] + i), "gather value");
      }
    }
  }
  // An exchange: two messages to the right neighbour (matched in order) and one to oneself,
  // receives listed before the sends.
  int32_t s1 = r, s2 = 100 + r, self = 7 * r, g1 = -1, g2 = -1, gs = -1;
  const int right = (r + 1) % p, left = (r + p - 1) % p;
  const PeerOp ops[] = {{false, &g1, 1, strataInt32, left}, {false, &gs, 1, strataInt32, r},
                        {false, &g2, 1, strataInt32, left}, {true, &s1, 1, strataInt32, right},
                        {true, &self, 1, strataInt32, r},   {true, &s2, 1, strataInt32, right}};
  ok(c.exchange(ops, 6), "exchange");
  expect(g1 == left && g2 == 100 + left && gs == 7 * r, "exchange values");

  // The started ring stays in flight across a blocking allreduce on the call channel.
  RingAllReduce ring(link, Channel::kRing);
  std::vector<int32_t> big(30001);
  for (size_t i = 0; i < big.size(); ++i) big[i] = value(r, i);
  ok(ring.start(big.data(), big.data(), big.size(), strataInt32, strataSum), "ring start");
  ok(ring.test(), "ring test");
  std::vector<int32_t> a(9), b(9);
  for (size_t i = 0; i < 9; ++i) a[i] = value(r, i);
  ok(c.allReduce(a.data(), b.data(), 9, strataInt32, strataSum), "allReduce beside the ring");
  ok(ring.wait(), "ring wait");
  for (size_t i = 0; i < big.size(); ++i) expect(big[i] == sumOver(p, i), "ring value");
  return err;
}

}  // namespace

TEST_CASE("p2p collectives: every operation over an in-memory link", "[p2p]") {
  for (int p : {1, 2, 3, 4}) {
    INFO(p << " members");
    for (const std::string& e : onThreads(p, everyCollective)) CHECK(e.empty());
  }
}

TEST_CASE("p2p collectives: members that disagree on a count fail with invalid usage", "[p2p]") {
  std::vector<std::string> errors = onThreads(2, [](int r, Link& link) {
    Collectives c(link);
    std::vector<int32_t> a(r == 0 ? 5 : 6), b(a.size());
    const Status st = c.allReduce(a.data(), b.data(), a.size(), strataInt32, strataSum);
    return st.code() == Code::kInvalidUsage ? std::string() : "got: " + st.message();
  });
  for (const std::string& e : errors) CHECK(e.empty());
}
