#include "bootstrap/tcp_bootstrap.h"

#include <algorithm>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "common/deadline.h"

namespace strata::boot {
namespace {

// The group id of a split: the same on every member (parent group, the parent's split count,
// color), and unlikely to meet another group's (FNV-1a over the three).
uint64_t childGroup(uint64_t parent, uint64_t split, int color) {
  uint64_t h = 0xcbf29ce484222325ull;
  const uint64_t parts[3] = {parent, split, static_cast<uint64_t>(static_cast<uint32_t>(color))};
  for (uint64_t v : parts) {
    for (int b = 0; b < 8; ++b) h = (h ^ ((v >> (8 * b)) & 0xff)) * 0x100000001b3ull;
  }
  return h == 0 ? 1 : h;  // 0 is the world's group
}

}  // namespace

StatusOr<std::unique_ptr<TcpBootstrap>> TcpBootstrap::create(const UniqueId& id, int rank,
                                                             int nranks) {
  STRATA_ASSIGN_OR_RETURN(std::shared_ptr<TcpWorld> world, TcpWorld::join(id, rank, nranks));
  std::vector<int> members(static_cast<size_t>(nranks));
  for (int r = 0; r < nranks; ++r) members[r] = r;
  return std::unique_ptr<TcpBootstrap>(new TcpBootstrap(std::move(world), 0, members, rank));
}

Status TcpBootstrap::usable() const {
  return failed_ ? Status(Code::kRemoteError,
                          "the control plane failed earlier (a member timed out or left); it "
                          "cannot be used again")
                 : Status::ok();
}

Status TcpBootstrap::allGather(const void* mine, void* all, size_t bytes) {
  STRATA_RETURN_IF_ERROR(usable());
  const int n = size();
  auto* out = static_cast<char*>(all);
  if (bytes > 0) std::memmove(out + static_cast<size_t>(me_) * bytes, mine, bytes);
  const uint64_t tag = nextTag();
  const int next = members_[(me_ + 1) % n], prev = members_[(me_ + n - 1) % n];
  std::vector<char> got;
  // Step s: pass on block (me - s), receive block (me - s - 1) from the left neighbour. After
  // n - 1 steps every block has travelled round the ring to every member.
  for (int s = 0; s + 1 < n; ++s) {
    const int sendBlock = (me_ - s + n) % n, recvBlock = (me_ - s - 1 + 2 * n) % n;
    const std::vector<TcpWorld::Send> sends{{next, group_, tag | static_cast<uint64_t>(s),
                                             out + static_cast<size_t>(sendBlock) * bytes, bytes}};
    const std::vector<TcpWorld::Recv> recvs{{prev, group_, tag | static_cast<uint64_t>(s), &got}};
    STRATA_RETURN_IF_ERROR(failed(world_->exchange(sends, recvs, "bootstrap allgather")));
    if (got.size() != bytes) {
      return failed(internalError("bootstrap allgather: a block of " + std::to_string(got.size()) +
                                  " bytes, expected " + std::to_string(bytes)));
    }
    if (bytes > 0) std::memcpy(out + static_cast<size_t>(recvBlock) * bytes, got.data(), bytes);
  }
  return Status::ok();
}

Status TcpBootstrap::broadcast(void* buf, size_t bytes, int root) {
  STRATA_RETURN_IF_ERROR(usable());
  const int n = size();
  if (root < 0 || root >= n) return internalError("bootstrap broadcast from a root out of range");
  const uint64_t tag = nextTag();
  const int rel = (me_ - root + n) % n;
  auto member = [&](int r) { return members_[(r + root) % n]; };
  // Binomial tree over positions relative to the root: a member receives from the member that
  // differs in its lowest set bit, then sends to rel + m for every smaller power of two m.
  int mask = 1;
  while (mask < n) {
    if ((rel & mask) != 0) {
      std::vector<char> got;
      STRATA_RETURN_IF_ERROR(failed(
          world_->exchange({}, {{member(rel - mask), group_, tag, &got}}, "bootstrap broadcast")));
      if (got.size() != bytes) {
        return failed(invalidUsage("bootstrap broadcast: " + std::to_string(got.size()) +
                                   " bytes from the root, expected " + std::to_string(bytes)));
      }
      if (bytes > 0) std::memcpy(buf, got.data(), bytes);
      break;
    }
    mask <<= 1;
  }
  std::vector<TcpWorld::Send> sends;
  for (mask >>= 1; mask > 0; mask >>= 1) {
    if (rel + mask < n) sends.push_back({member(rel + mask), group_, tag, buf, bytes});
  }
  if (sends.empty()) return Status::ok();
  return failed(world_->exchange(sends, {}, "bootstrap broadcast"));
}

Status TcpBootstrap::barrier() { return allGather(nullptr, nullptr, 0); }

StatusOr<std::unique_ptr<Bootstrap>> TcpBootstrap::split(int color, int key) {
  const int n = size();
  const int32_t mine[2] = {color, key};
  std::vector<int32_t> all(2 * static_cast<size_t>(n));
  STRATA_RETURN_IF_ERROR(allGather(mine, all.data(), sizeof(mine)));
  const uint64_t split = ++splits_;
  if (color < 0) return std::unique_ptr<Bootstrap>();
  std::vector<int> order;  // positions in this group with my color, by (key, position)
  for (int r = 0; r < n; ++r) {
    if (all[2 * r] == color) order.push_back(r);
  }
  std::stable_sort(order.begin(), order.end(),
                   [&](int a, int b) { return all[2 * a + 1] < all[2 * b + 1]; });
  std::vector<int> members;
  int me = -1;
  for (int r : order) {
    if (r == me_) me = static_cast<int>(members.size());
    members.push_back(members_[r]);
  }
  return std::unique_ptr<Bootstrap>(
      new TcpBootstrap(world_, childGroup(group_, split, color), std::move(members), me));
}

// --- Recovery: watching members and strataCommShrink's agreement. ---
//
// The agreement (every survivor must build the same communicator, whatever failures each saw):
// rounds, tagged with a round count that goes on across shrink calls of this bootstrap. In a
// round every member sends its excluded set S to every other member (an excluded one that
// calls anyway so learns that it is out), then takes the sets of every member outside S, in
// whatever order they come. A member's next set is the union of
// S, every set it took and the members it found lost meanwhile (and it stops waiting for a
// member that someone else's set excludes). A member decides S when its next set equals S and
// every set it took equals S.
//
// Why two deciders agree: a member decides S only if every member outside S sent it S in
// that round, and a member sends one set to all; so every other member outside S that got all
// its sets took the same ones and decides S too. The one way to differ is a member lost during
// the round: one member took its set, another found it lost and goes on to a next round. The
// member that decided then builds a communicator with a lost member, which fails (the lost
// member cannot take part, and the watcher ends every wait on it); core/split.cc's shrink
// then agrees again, in the next round, where the other member waits for it. A rank lost
// after the new communicator is built is the new communicator's failure, as any other.
namespace {

constexpr uint64_t kAgreeSalt = 0x5348524bull;  // "SHRK"

std::string listText(const std::vector<int>& ranks) {
  std::string s;
  for (int r : ranks) s += (s.empty() ? "" : ", ") + std::to_string(r);
  return s;
}

class TcpWatch final : public Bootstrap::Watch {
 public:
  TcpWatch(std::shared_ptr<TcpWorld> world, uint64_t id) : world_(std::move(world)), id_(id) {}
  ~TcpWatch() override { world_->unsubscribe(id_); }

 private:
  std::shared_ptr<TcpWorld> world_;
  uint64_t id_;
};

}  // namespace

std::unique_ptr<Bootstrap::Watch> TcpBootstrap::watchMembers(LostFn onLost) {
  std::vector<int> index(static_cast<size_t>(world_->size()), -1);
  for (int i = 0; i < size(); ++i) index[members_[i]] = i;
  const uint64_t id = world_->subscribe([index, onLost](int rank, const std::string& why) {
    if (index[rank] >= 0) onLost(index[rank], why);
  });
  return std::make_unique<TcpWatch>(world_, id);
}

StatusOr<Bootstrap::Shrunk> TcpBootstrap::shrink(const std::vector<bool>& exclude) {
  deadline::DefaultScope scope;
  const int n = size();
  const uint64_t agreeGroup = childGroup(group_, kAgreeSalt, -1);
  std::vector<bool> set = exclude;
  set.resize(static_cast<size_t>(n), false);
  const auto noteLost = [&](std::vector<bool>& s) {
    for (int i = 0; i < n; ++i) {
      if (i != me_ && !s[i] && world_->isGone(members_[i], nullptr)) s[i] = true;
    }
  };
  noteLost(set);
  uint64_t round = 0;
  for (;;) {
    if (set[me_]) {
      return invalidUsage("strataCommShrink: this rank (" + std::to_string(me_) +
                          ") is in its own excludeRanksList: an excluded rank does not call it");
    }
    round = ++agreeRounds_;
    std::vector<char> mine(static_cast<size_t>(n));
    std::vector<TcpWorld::Send> sends;
    std::vector<int> pending;
    for (int i = 0; i < n; ++i) {
      mine[i] = set[i] ? 1 : 0;
      if (i != me_ && !set[i]) pending.push_back(i);
    }
    // To every member, the excluded ones too: one that calls anyway learns that it is out.
    for (int i = 0; i < n; ++i) {
      if (i != me_)
        sends.push_back({members_[i], agreeGroup, round, mine.data(), mine.size(), true});
    }
    STRATA_RETURN_IF_ERROR(world_->exchange(sends, {}, "strataCommShrink's agreement"));
    std::vector<bool> next = set;
    bool same = true;
    int excludedBy = -1;
    std::vector<char> got;
    while (!pending.empty()) {
      for (size_t k = 0; k < pending.size();) {
        const int i = pending[k];
        bool done = true;
        if (world_->take(members_[i], agreeGroup, round, &got)) {
          if (got.size() != static_cast<size_t>(n)) {
            return internalError("strataCommShrink's agreement: a set of " +
                                 std::to_string(got.size()) + " members from rank " +
                                 std::to_string(i) + ", expected " + std::to_string(n));
          }
          for (int j = 0; j < n; ++j) {
            if ((got[j] != 0) != set[j]) same = false;
            if (got[j] != 0) next[j] = true;
          }
          if (got[me_] != 0) excludedBy = i;
        } else if (world_->isGone(members_[i], nullptr) || next[i]) {
          next[i] = true;  // lost, or excluded by a set taken meanwhile: not waited for
          same = false;
        } else {
          done = false;
        }
        if (done) {
          pending.erase(pending.begin() + static_cast<long>(k));
        } else {
          ++k;
        }
      }
      if (pending.empty()) break;
      if (deadline::Scope::expired()) {
        return deadline::expiredError(
            "in strataCommShrink's agreement, waiting for rank(s) " + listText(pending) +
            " (every rank that is not excluded must call strataCommShrink; a rank that is alive "
            "but will not call must be in excludeRanksList)");
      }
      STRATA_RETURN_IF_ERROR(world_->progress(10));
    }
    if (excludedBy >= 0) {
      return invalidUsage(
          "strataCommShrink: rank " + std::to_string(excludedBy) + " excludes this rank (" +
          std::to_string(me_) +
          "): its list or the failures it saw name it; the others go on without it");
    }
    noteLost(next);
    if (same && next == set) break;
    set = std::move(next);
  }
  Shrunk out;
  out.excluded = set;
  std::vector<int> members;
  int me = -1;
  uint64_t setHash = 0xcbf29ce484222325ull;
  for (int i = 0; i < n; ++i) {
    setHash = (setHash ^ (set[i] ? 1u : 0u)) * 0x100000001b3ull;
    if (set[i]) continue;
    if (i == me_) me = static_cast<int>(members.size());
    members.push_back(members_[i]);
  }
  const uint64_t group =
      childGroup(childGroup(group_, kAgreeSalt, static_cast<int>(round)), setHash, 0);
  out.boot.reset(new TcpBootstrap(world_, group, std::move(members), me));
  return out;
}

}  // namespace strata::boot
