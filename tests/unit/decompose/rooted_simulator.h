// A simulator of broadcast and reduce schedules (decompose/rooted.h) for the unit tests: every
// rank's steps run in one process with the dispatcher's semantics, matched the way the stage
// groups of a real run match them (a group's step runs once all its members have reached it; a
// group that never gathers is a deadlock). The values identify contributions, so an input counted
// twice or missed shows.
#pragma once

#include <cstdint>
#include <map>
#include <sstream>
#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "decompose/rooted.h"
#include "decompose/schedule.h"
#include "topology/hierarchy.h"

namespace strata::plan::testing {

using Buffers = std::vector<std::vector<int64_t>>;

// A reduce input that identifies its rank and element: rank r adds 1 to the 4-bit digit r, and
// the element index sits above bit 48, so a sum shows how often each rank was counted (up to
// 12 ranks) and that the element came from the right place.
inline int64_t contribution(int rank, size_t i) {
  return (int64_t{1} << (4 * rank)) + (static_cast<int64_t>(i + 1) << 48);
}
inline int64_t bcastValue(int root, size_t i) {
  return 1000003LL * (root + 1) + 7 * static_cast<int64_t>(i);
}
inline constexpr int64_t kPoison = -(int64_t{1} << 61);  // scratch nobody should read

inline std::string describe(const Step& s) {
  std::ostringstream o;
  o << collectiveName(s.kind) << "@" << s.level << " [" << s.offset << "+" << s.count << ") index "
    << s.index << " root " << s.root;
  return o.str();
}

// Runs the steps of every rank with the dispatcher semantics of rooted.h on per-rank working
// buffers. Returns "" when every step ran, or what went wrong.
class Simulator {
 public:
  Simulator(const topo::Hierarchy& h, std::vector<std::vector<Step>> steps, Buffers work,
            Buffers src)
      : h_(h), steps_(std::move(steps)), work_(std::move(work)), src_(std::move(src)) {
    pc_.assign(h.numRanks(), 0);
    started_.assign(h.numRanks(), false);
  }

  std::string run() {
    for (;;) {
      // Group the ranks by the group their next step runs in.
      std::map<std::tuple<int, int, int>, std::vector<int>> waiting;
      bool pending = false;
      for (int r = 0; r < h_.numRanks(); ++r) {
        if (pc_[r] >= steps_[r].size()) continue;
        pending = true;
        std::tuple<int, int, int> key;
        std::string error = groupKey(r, step(r), &key);
        if (!error.empty()) return error;
        waiting[key].push_back(r);
      }
      if (!pending) return "";
      bool progressed = false;
      for (auto& [key, ranks] : waiting) {
        if (static_cast<int>(ranks.size()) < groupSize(key)) continue;
        std::string error = execute(key, ranks);
        if (!error.empty()) return error;
        for (int r : ranks) {
          ++pc_[r];
          started_[r] = true;
        }
        progressed = true;
      }
      if (!progressed) {
        std::ostringstream o;
        o << "deadlock: no group has all its members at a step; waiting:";
        for (auto& [key, ranks] : waiting)
          o << " rank " << ranks[0] << " " << describe(step(ranks[0]));
        return o.str();
      }
    }
  }

  const Buffers& work() const { return work_; }

 private:
  static constexpr int kP2p = -2;

  const Step& step(int r) const { return steps_[r][pc_[r]]; }

  // (level, group color, 0) for a stage group or the whole communicator, (kP2p, from, to) for a
  // send and its receive.
  std::string groupKey(int r, const Step& s, std::tuple<int, int, int>* key) const {
    if (s.kind == Collective::kSend || s.kind == Collective::kRecv) {
      if (s.level != kFlatLevel) return "rank " + std::to_string(r) + ": p2p off the flat level";
      if (s.root < 0 || s.root >= h_.numRanks()) return "rank " + std::to_string(r) + ": bad peer";
      *key = s.kind == Collective::kSend ? std::make_tuple(kP2p, r, s.root)
                                         : std::make_tuple(kP2p, s.root, r);
      return "";
    }
    if (s.level == kFlatLevel) {
      if (s.index != r)
        return "rank " + std::to_string(r) + ": flat index " + std::to_string(s.index);
      *key = {kFlatLevel, 0, 0};
      return "";
    }
    if (s.level < 0 || s.level >= h_.numLevels()) return "bad level in " + describe(s);
    const topo::StageGroup g = topo::stageGroup(h_, s.level, r);
    if (!g.member) return "rank " + std::to_string(r) + " is in no stage group: " + describe(s);
    if (g.index != s.index) return "rank " + std::to_string(r) + " index mismatch: " + describe(s);
    *key = {s.level, g.color, 0};
    return "";
  }

  int groupSize(const std::tuple<int, int, int>& key) const {
    const int level = std::get<0>(key);
    if (level == kP2p) return 2;
    if (level == kFlatLevel) return h_.numRanks();
    return topo::stageGroup(h_, level, std::get<1>(key)).size;  // the color is a member's rank
  }

  // A member's input to a reduction: `src` before its first step, `work` after.
  int64_t input(int r, size_t i) const { return started_[r] ? work_[r][i] : src_[r][i]; }

  std::string execute(const std::tuple<int, int, int>& key, const std::vector<int>& ranks) {
    const Step& first = step(ranks[0]);
    const size_t n = work_[0].size();
    if (first.count == 0) return "an empty step: " + describe(first);
    if (first.offset + first.count > n) return "a step past the buffer: " + describe(first);
    if (first.finishesReduction) return "a rooted step finishing a reduction: " + describe(first);
    if (std::get<0>(key) == kP2p) return exchange(ranks);
    // member[j]: the rank at position j of the group.
    std::vector<int> member(ranks.size(), -1);
    for (int r : ranks) {
      const Step& s = step(r);
      if (s.kind != first.kind || s.offset != first.offset || s.count != first.count ||
          s.counts != first.counts || s.displs != first.displs || s.root != first.root) {
        return "members disagree: rank " + std::to_string(ranks[0]) + " " + describe(first) +
               ", rank " + std::to_string(r) + " " + describe(s);
      }
      if (s.index < 0 || s.index >= static_cast<int>(ranks.size()) || member[s.index] != -1) {
        return "bad member index: " + describe(s);
      }
      member[s.index] = r;
    }
    const size_t off = first.offset, count = first.count;
    const bool blocks = first.kind == Collective::kScatter || first.kind == Collective::kGather ||
                        first.kind == Collective::kReduceScatter ||
                        first.kind == Collective::kAllGather;
    const bool rooted = first.kind == Collective::kBroadcast || first.kind == Collective::kReduce ||
                        first.kind == Collective::kScatter || first.kind == Collective::kGather;
    if (rooted != (first.root >= 0 && first.root < static_cast<int>(ranks.size()))) {
      return "root out of place: " + describe(first);
    }
    if (blocks) {
      // Blocks tile the range in member order.
      if (first.counts.size() != ranks.size() || first.displs.size() != ranks.size()) {
        return "counts for another group size: " + describe(first);
      }
      size_t next = 0;
      for (size_t j = 0; j < ranks.size(); ++j) {
        if (first.displs[j] != next) return "blocks do not tile: " + describe(first);
        next += first.counts[j];
      }
      if (next != count) return "blocks do not cover the range: " + describe(first);
    }
    const int root = rooted ? member[first.root] : -1;
    switch (first.kind) {
      case Collective::kBroadcast:
        for (int r : ranks) {
          for (size_t i = off; i < off + count; ++i) work_[r][i] = work_[root][i];
        }
        break;
      case Collective::kReduce: {
        std::vector<int64_t> sum(count, 0);
        for (int r : ranks) {
          for (size_t i = 0; i < count; ++i) sum[i] += input(r, off + i);
        }
        for (size_t i = 0; i < count; ++i) work_[root][off + i] = sum[i];
        break;
      }
      case Collective::kScatter:
      case Collective::kGather:
        for (size_t j = 0; j < ranks.size(); ++j) {
          const bool scatter = first.kind == Collective::kScatter;
          const int from = scatter ? root : member[j], to = scatter ? member[j] : root;
          const size_t b = off + first.displs[j];
          for (size_t i = b; i < b + first.counts[j]; ++i) work_[to][i] = work_[from][i];
        }
        break;
      case Collective::kReduceScatter: {
        Buffers blocksum(ranks.size());
        for (size_t j = 0; j < ranks.size(); ++j) {
          const size_t b = off + first.displs[j];
          for (size_t i = b; i < b + first.counts[j]; ++i) {
            int64_t sum = 0;
            for (int r : ranks) sum += input(r, i);
            blocksum[j].push_back(sum);
          }
        }
        for (size_t j = 0; j < ranks.size(); ++j) {
          const size_t b = off + first.displs[j];
          for (size_t i = 0; i < first.counts[j]; ++i) work_[member[j]][b + i] = blocksum[j][i];
        }
        break;
      }
      case Collective::kAllGather:
        for (size_t j = 0; j < ranks.size(); ++j) {
          const size_t b = off + first.displs[j];
          for (int r : ranks) {
            for (size_t i = b; i < b + first.counts[j]; ++i) work_[r][i] = work_[member[j]][i];
          }
        }
        break;
      default:
        return "a step of an unexpected kind: " + describe(first);
    }
    return "";
  }

  // A send and its receive: the whole work range from one rank to the other.
  std::string exchange(const std::vector<int>& ranks) {
    const Step& a = step(ranks[0]);
    const Step& b = step(ranks[1]);
    const Step& send = a.kind == Collective::kSend ? a : b;
    const Step& recv = a.kind == Collective::kSend ? b : a;
    if (send.kind != Collective::kSend || recv.kind != Collective::kRecv ||
        send.offset != recv.offset || send.count != recv.count) {
      return "send and receive do not pair: " + describe(a) + " / " + describe(b);
    }
    const int from = recv.root, to = send.root;
    for (size_t i = send.offset; i < send.offset + send.count; ++i) work_[to][i] = work_[from][i];
    return "";
  }

  const topo::Hierarchy& h_;
  std::vector<std::vector<Step>> steps_;
  Buffers work_, src_;
  std::vector<size_t> pc_;
  std::vector<bool> started_;
};

inline std::vector<std::vector<Step>> allSteps(const topo::Hierarchy& h, Collective coll,
                                               RootedForm form, int root, size_t count) {
  std::vector<std::vector<Step>> steps(h.numRanks());
  for (int r = 0; r < h.numRanks(); ++r) steps[r] = rootedSteps(h, coll, form, r, root, count);
  return steps;
}

// Runs `steps` as a broadcast or reduce from/to `root` and checks the result; "" when right.
inline std::string simulate(const topo::Hierarchy& h, Collective coll,
                            const std::vector<std::vector<Step>>& steps, int root, size_t count) {
  const int p = h.numRanks();
  const bool bcast = coll == Collective::kBroadcast;
  Buffers work(p, std::vector<int64_t>(count, kPoison)), src = work;
  for (int r = 0; r < p; ++r) {
    for (size_t i = 0; i < count; ++i) {
      if (bcast && r == root) work[r][i] = bcastValue(root, i);  // the root fills recvbuff first
      if (!bcast) src[r][i] = contribution(r, i);
    }
  }
  Simulator sim(h, steps, std::move(work), std::move(src));
  const std::string error = sim.run();
  if (!error.empty()) return error;
  for (size_t i = 0; i < count; ++i) {
    if (bcast) {
      for (int r = 0; r < p; ++r) {
        if (sim.work()[r][i] != bcastValue(root, i)) {
          return "rank " + std::to_string(r) + " element " + std::to_string(i) + " wrong";
        }
      }
    } else {
      int64_t expect = 0;
      for (int r = 0; r < p; ++r) expect += contribution(r, i);
      if (sim.work()[root][i] != expect) {
        return "root's element " + std::to_string(i) + " is not each input once";
      }
    }
  }
  return "";
}

}  // namespace strata::plan::testing
