// The hierarchy: which ranks share which level of the machine, innermost level first.
//
// A hierarchy is a tree. Level-0 groups partition the ranks (e.g. the ranks of one socket);
// each level-l group is a set of level-(l-1) groups (its children); the last level has one
// group holding every rank. Each rank has a coordinate per level:
//   coord[0]     = its position among the ranks of its level-0 group (in rank order),
//   coord[l > 0] = the position of its level-(l-1) group among the children of its level-l
//                  group (children ordered by their lowest rank).
// A regular hierarchy (every group of a level has the same number of children) is the mixed
// radix of the topology file: coord[l] = (rank / prod(size[0..l-1])) % size[l].
//
// width[l] is the fewest children any level-l group has. The decomposition only gives shards to
// units whose coordinate is below the width, which is what keeps irregular trees correct.
#pragma once

#include <string>
#include <utility>
#include <vector>

#include "common/status.h"
#include "topology/node_topology.h"

namespace strata::topo {

struct Level {
  Level() = default;
  Level(std::string n, std::string f, LinkModel l = {}, int sharing = 1)
      : name(std::move(n)), fabric(std::move(f)), link(std::move(l)), linkSharing(sharing) {}

  std::string name;    // what one group of this level spans: "socket", "node", "rack", ...
  std::string fabric;  // the fabric that runs this level's stages: "mpi", ...
  LinkModel link;      // what this level's groups talk over (kind unknown when not known)
  // How many of this level's stage groups run at once over one shared link (e.g. the ranks of
  // a node that each drive a network-level group through the node's NICs); they split its
  // bandwidth.
  int linkSharing = 1;
};

class Hierarchy {
 public:
  // Levels innermost first; sizes[l] is the number of children of every level-l group. The
  // sizes must be positive and multiply to the number of ranks.
  static StatusOr<Hierarchy> regular(std::vector<Level> levels, const std::vector<int>& sizes);

  // keys[r][l] names rank r's level-l group; ranks with equal keys at level l share that group.
  // Groups must nest (equal keys at level l imply equal keys at level l+1) and the last level's
  // keys must all be equal.
  static StatusOr<Hierarchy> fromKeys(std::vector<Level> levels,
                                      const std::vector<std::vector<std::string>>& keys);

  int numRanks() const { return static_cast<int>(coords_.size()); }
  int numLevels() const { return static_cast<int>(levels_.size()); }
  const Level& level(int l) const { return levels_[l]; }
  const std::vector<Level>& levels() const { return levels_; }

  int coord(int rank, int l) const { return coords_[rank][l]; }
  int group(int rank, int l) const { return groups_[rank][l]; }  // dense id of its level-l group
  int numGroups(int l) const { return numGroups_[l]; }
  int width(int l) const { return width_[l]; }
  // Most children of any level-l group (equals width(l) when the level is regular).
  int maxChildren(int l) const { return maxChildren_[l]; }
  // Children of one level-l group.
  int numChildren(int l, int group) const { return children_[l][group]; }
  bool isRegular() const;

  // The same tree with other level descriptions (names, fabrics, links); one per level.
  StatusOr<Hierarchy> withLevels(std::vector<Level> levels) const;

  // Drops levels whose every group has a single child (their stages would move nothing), but
  // keeps at least one level.
  Hierarchy withoutTrivialLevels() const;

  // The hierarchy of some of the ranks (strataCommSplit): rank i of the result is rank
  // ranks[i] of this one; each keeps its groups at every level (so the levels, their links and
  // fabrics carry over), and levels left trivial are dropped. `ranks` must be distinct and in
  // range.
  StatusOr<Hierarchy> subset(const std::vector<int>& ranks) const;

  // "socket(2) x node(2) x rack(2)"; irregular levels show their range, e.g. "node(3..4)".
  std::string describe() const;

 private:
  std::vector<Level> levels_;
  std::vector<std::vector<int>> coords_;  // [rank][level]
  std::vector<std::vector<int>> groups_;  // [rank][level]
  std::vector<int> numGroups_, width_, maxChildren_;
  std::vector<std::vector<int>> children_;  // [level][group]

  void computeStats();
};

// The group a rank talks in at one level's stage: the ranks of its level-l group whose lower
// coordinates equal its own. A rank is a member only if every lower coordinate is below that
// level's width (otherwise it holds no shard above level l-1).
struct StageGroup {
  bool member = false;
  int color = -1;  // a value shared by exactly this group's members (its lowest rank)
  int index = -1;  // this rank's position in the group: its coordinate at level l
  int size = 0;    // number of members: the children of its level-l group
};

StageGroup stageGroup(const Hierarchy& h, int level, int rank);

// Whether some stage group of `level` holds ranks on different hosts: its stage then moves data
// over the links between hosts. hostOf[r] names rank r's host (equal exactly for the ranks of
// one host); it has numRanks() entries. The same on every rank that passes the same hostOf.
bool levelCrossesHosts(const Hierarchy& h, int level, const std::vector<int>& hostOf);

}  // namespace strata::topo
