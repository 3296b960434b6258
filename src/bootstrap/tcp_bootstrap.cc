#include "bootstrap/tcp_bootstrap.h"

#include <algorithm>
#include <cstring>

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
    const std::vector<TcpWorld::Send> sends{
        {next, group_, tag | static_cast<uint64_t>(s), out + static_cast<size_t>(sendBlock) * bytes,
         bytes}};
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
      STRATA_RETURN_IF_ERROR(failed(world_->exchange(
          {}, {{member(rel - mask), group_, tag, &got}}, "bootstrap broadcast")));
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

}  // namespace strata::boot
