// Hierarchies the cost-model tests share (test_cost_model.cc, test_pipeline_cost.cc,
// test_rooted_cost.cc, test_blocks_cost.cc, test_cost_step_overhead.cc, test_compress_cost.cc):
// links given by hand, so each test's arithmetic can be worked from the numbers here, and the
// small helpers they use.
#pragma once

#include <catch2/catch.hpp>
#include <string>
#include <utility>
#include <vector>

#include "decompose/cost_model.h"
#include "topology/hierarchy.h"

namespace strata::plan::test {

inline topo::LinkModel link(topo::LinkKind kind, double gbps, double us) {
  return topo::LinkModel{kind, gbps, us, "test"};
}

inline topo::Hierarchy regular(std::vector<topo::Level> levels, const std::vector<int>& sizes) {
  auto h = topo::Hierarchy::regular(std::move(levels), sizes);
  REQUIRE(h.isOk());
  return h.value();
}

// 2 hosts of 2 ranks on mpi: "node" over PCIe at nodeGBps and nodeUs, "network" over Ethernet
// at netGBps and netUs, `sharing` ranks of a host per NIC. The defaults, 10 GB/s and 1 us
// (beta 1e-4 us/B) inside a host and 1 GB/s and 10 us (beta 1e-3) between hosts, are what most
// cases work with.
inline topo::Hierarchy twoByTwo(int sharing = 1, double nodeGBps = 10, double nodeUs = 1,
                                double netGBps = 1, double netUs = 10) {
  return regular(
      {topo::Level("node", "mpi", link(topo::LinkKind::kPcie, nodeGBps, nodeUs)),
       topo::Level("network", "mpi", link(topo::LinkKind::kEthernet, netGBps, netUs), sharing)},
      {2, 2});
}

// The local reduction at 5 GB/s: 2e-4 us per combined byte.
inline CostParams gamma5() {
  CostParams p;
  p.reduceGBps = 5;
  return p;
}

// A prediction's stage labels, in order.
inline std::vector<std::string> labels(const Prediction& p) {
  std::vector<std::string> out;
  for (const StageCost& s : p.stages) out.push_back(s.label);
  return out;
}

}  // namespace strata::plan::test
