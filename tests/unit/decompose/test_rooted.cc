// Broadcast and reduce schedules (decompose/rooted.h): every form, root and count on flat,
// regular and irregular hierarchies, run through the simulator of rooted_simulator.h; the
// forms' shapes; and that the simulator fails schedules with a bug.
#include <catch2/catch.hpp>
#include <set>
#include <string>
#include <vector>

#include "decompose/rooted.h"
#include "decompose/schedule.h"
#include "topology/hierarchy.h"
#include "unit/decompose/rooted_simulator.h"

namespace strata::plan {
namespace {

using testing::allSteps;
using testing::simulate;
using topo::Hierarchy;
using topo::Level;

Hierarchy regular(const std::vector<int>& sizes) {
  std::vector<Level> levels;
  for (size_t l = 0; l < sizes.size(); ++l) levels.push_back(Level{"l" + std::to_string(l), "mpi"});
  auto h = Hierarchy::regular(levels, sizes);
  REQUIRE(h.isOk());
  return h.value();
}

// keys[r] names rank r's group per level, innermost first; the top level holds everyone.
Hierarchy fromKeys(const std::vector<std::vector<std::string>>& keys) {
  std::vector<Level> levels;
  for (size_t l = 0; l <= keys[0].size(); ++l)
    levels.push_back(Level{"k" + std::to_string(l), "mpi"});
  std::vector<std::vector<std::string>> full = keys;
  for (auto& k : full) k.push_back("");
  auto h = Hierarchy::fromKeys(levels, full);
  REQUIRE(h.isOk());
  return h.value();
}

// Two levels: node (by host) and network.
Hierarchy byHost(const std::vector<std::string>& hosts) {
  std::vector<std::vector<std::string>> keys;
  for (const auto& host : hosts) keys.push_back({host});
  return fromKeys(keys);
}

// Every hierarchy the sweeps run on: flat, regular, with trivial levels, and irregular.
std::vector<Hierarchy> hierarchies() {
  std::vector<Hierarchy> out;
  for (int p = 1; p <= 8; ++p) out.push_back(regular({p}));
  for (auto sizes : std::vector<std::vector<int>>{
           {2, 2}, {2, 3}, {3, 2}, {4, 2}, {1, 4}, {2, 2, 2}, {3, 2, 2}, {2, 1, 3}}) {
    out.push_back(regular(sizes));
  }
  for (auto hosts : std::vector<std::vector<std::string>>{
           {"a", "a", "a", "b", "b", "b", "b"},       // 3 + 4: width 3
           {"a", "b", "b", "b", "b"},                 // 1 + 4: width 1
           {"a", "a", "a", "b", "b", "b", "c", "c"},  // 3 + 3 + 2
           {"a", "b", "a", "b", "a", "b"},            // interleaved ranks
           {"x", "y", "y", "x", "z", "y", "z"},       // scattered ranks, 2 + 3 + 2
       }) {
    out.push_back(byHost(hosts));
  }
  // Three irregular levels: sockets of 2 and 1 ranks in host a, of 2, 2 and 1 in host b.
  out.push_back(fromKeys({{"a0", "a"},
                          {"a0", "a"},
                          {"a1", "a"},
                          {"b0", "b"},
                          {"b1", "b"},
                          {"b0", "b"},
                          {"b1", "b"},
                          {"b2", "b"}}));
  return out;
}

std::vector<size_t> countsFor(int p) {
  std::set<size_t> counts{0, 1, 2, 3, static_cast<size_t>(p), static_cast<size_t>(p) + 1, 13, 1021};
  if (p > 1) counts.insert(p - 1);
  return {counts.begin(), counts.end()};
}

constexpr RootedForm kForms[] = {RootedForm::kFlat, RootedForm::kTree, RootedForm::kSharded};
constexpr Collective kRooted[] = {Collective::kBroadcast, Collective::kReduce};

}  // namespace

TEST_CASE("rooted: every form, root and count is a correct broadcast and reduce", "[rooted]") {
  for (const Hierarchy& h : hierarchies()) {
    REQUIRE(h.numRanks() <= 12);  // the contribution digits
    for (Collective coll : kRooted) {
      for (RootedForm form : kForms) {
        for (int root = 0; root < h.numRanks(); ++root) {
          for (size_t count : countsFor(h.numRanks())) {
            INFO(h.describe() << " " << collectiveName(coll) << " " << rootedFormName(coll, form)
                              << " root " << root << " count " << count);
            const auto steps = allSteps(h, coll, form, root, count);
            CHECK(simulate(h, coll, steps, root, count) == "");
            if (count == 0) {
              for (const auto& s : steps) CHECK(s.empty());
            }
          }
        }
      }
    }
  }
}

TEST_CASE("rooted: the forms' shapes", "[rooted]") {
  const Hierarchy h = regular({2, 2});
  // Flat: one step over the communicator, the root named by its rank.
  auto flat = rootedSteps(h, Collective::kReduce, RootedForm::kFlat, 1, 3, 10);
  REQUIRE(flat.size() == 1);
  CHECK(flat[0].kind == Collective::kReduce);
  CHECK(flat[0].level == kFlatLevel);
  CHECK(flat[0].count == 10);
  CHECK(flat[0].root == 3);
  CHECK(flat[0].index == 1);
  // Tree broadcast from rank 3: the network stage group of coordinate 1 at the node level
  // (ranks 1 and 3) first, then every node.
  auto tree = rootedSteps(h, Collective::kBroadcast, RootedForm::kTree, 1, 3, 10);
  REQUIRE(tree.size() == 2);
  CHECK(tree[0].level == 1);
  CHECK(tree[0].root == 1);
  CHECK(tree[1].level == 0);
  CHECK(tree[1].root == 1);
  // Rank 0 sits out the network stage: its node coordinate differs from the root's.
  CHECK(rootedSteps(h, Collective::kBroadcast, RootedForm::kTree, 0, 3, 10).size() == 1);
  // Sharded reduce to rank 3 on rank 0: reduce-scatters up, then only the network gather (its
  // node is not the root's).
  auto sharded = rootedSteps(h, Collective::kReduce, RootedForm::kSharded, 0, 3, 10);
  REQUIRE(sharded.size() == 3);
  CHECK(sharded[0].kind == Collective::kReduceScatter);
  CHECK(sharded[1].kind == Collective::kReduceScatter);
  CHECK(sharded[1].count == 5);
  CHECK(sharded[2].kind == Collective::kGather);
  CHECK(sharded[2].level == 1);
  CHECK(sharded[2].root == 1);
  CHECK(sharded[2].counts == std::vector<size_t>{3, 2});
  CHECK(rootedFormName(Collective::kBroadcast, RootedForm::kSharded) ==
        std::string("scatter-allgather"));
  CHECK(rootedFormName(Collective::kReduce, RootedForm::kSharded) ==
        std::string("reducescatter-gather"));
}

TEST_CASE("rooted: the tree reaches a root past the width through the effective root", "[rooted]") {
  // Hosts of 3 and 4 ranks: rank 6 is host b's fourth rank, past width(0) = 3, so E is rank 3
  // (host b's first); the broadcast starts with 6 -> 3 and the reduce ends with 3 -> 6.
  const Hierarchy h = byHost({"a", "a", "a", "b", "b", "b", "b"});
  auto bcast6 = rootedSteps(h, Collective::kBroadcast, RootedForm::kTree, 6, 6, 5);
  REQUIRE(bcast6.size() == 2);
  CHECK(bcast6[0].kind == Collective::kSend);
  CHECK(bcast6[0].root == 3);
  auto bcast3 = rootedSteps(h, Collective::kBroadcast, RootedForm::kTree, 3, 6, 5);
  REQUIRE(bcast3.size() == 3);
  CHECK(bcast3[0].kind == Collective::kRecv);
  CHECK(bcast3[0].root == 6);
  auto reduce3 = rootedSteps(h, Collective::kReduce, RootedForm::kTree, 3, 6, 5);
  REQUIRE(reduce3.size() == 3);
  CHECK(reduce3.back().kind == Collective::kSend);
  CHECK(reduce3.back().root == 6);
  // A root within the width needs no hop.
  for (int r = 0; r < h.numRanks(); ++r) {
    for (const Step& s : rootedSteps(h, Collective::kReduce, RootedForm::kTree, r, 4, 5)) {
      CHECK(s.kind == Collective::kReduce);
    }
  }
}

TEST_CASE("rooted: the simulator catches broken schedules", "[rooted]") {
  const Hierarchy h = byHost({"a", "a", "a", "b", "b", "b", "b"});
  const size_t n = 13;
  for (Collective coll : kRooted) {
    for (RootedForm form : {RootedForm::kTree, RootedForm::kSharded}) {
      INFO(collectiveName(coll) << " " << rootedFormName(coll, form));
      const auto good = allSteps(h, coll, form, 5, n);
      REQUIRE(simulate(h, coll, good, 5, n) == "");
      // One member that names another root.
      auto badRoot = good;
      bool changed = false;
      for (auto& steps : badRoot) {
        for (Step& s : steps) {
          if (!changed && s.level == 0 && s.root >= 0) {
            s.root = (s.root + 1) % 3;
            changed = true;
          }
        }
      }
      REQUIRE(changed);
      CHECK(simulate(h, coll, badRoot, 5, n) != "");
      // A rank that leaves out its last step: its group never gathers, or a result is missing.
      auto missing = good;
      missing[0].pop_back();
      CHECK(simulate(h, coll, missing, 5, n) != "");
      // The same schedule judged against another root.
      CHECK(simulate(h, coll, good, 4, n) != "");
    }
  }
  // A reduce that counts rank 2's input twice: a second level-0 reduce in host a.
  auto twice = allSteps(h, Collective::kReduce, RootedForm::kTree, 0, n);
  for (int r = 0; r < 3; ++r) twice[r].insert(twice[r].begin() + 1, twice[r][0]);
  CHECK(simulate(h, Collective::kReduce, twice, 0, n) != "");
  // The level-0 all-gathers' first two blocks moved by one element on every member: the blocks
  // still tile the range, but member 1 sends an element it never received.
  auto shifted = allSteps(h, Collective::kBroadcast, RootedForm::kSharded, 0, n);
  for (auto& steps : shifted) {
    for (Step& s : steps) {
      if (s.kind != Collective::kAllGather || s.level != 0) continue;
      s.counts[0] -= 1;
      s.counts[1] += 1;
      s.displs[1] -= 1;
    }
  }
  CHECK(simulate(h, Collective::kBroadcast, shifted, 0, n) != "");
}

}  // namespace strata::plan
