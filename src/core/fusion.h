// Lazy allreduce (GradientFlow's, Horovod's tensor fusion): the allreduces of a group are
// packed into one buffer of at most theta bytes (STRATA_FUSION_BYTES) and reduced by one
// hierarchical allreduce, so a model's hundreds of small gradients pay each level's latency
// once per pack instead of once per tensor.
//
// The invariant that makes it safe: every rank must cut the same packs, or the packs' bytes do
// not line up and the sums mix unrelated tensors. So the cut depends only on the sequence of
// calls (their collectives, counts, types and ops, which every rank must issue identically
// anyway), never on timing, buffer addresses or anything else that may differ between ranks.
// fusePlan() is a pure function of exactly that.
#pragma once

#include <cstddef>
#include <vector>

#include "common/collective.h"

namespace strata::core {

// One unit of a group's run: a call alone (one member), or a pack of allreduces of one type
// and op whose members are copied into a fusion buffer, reduced together and copied out.
struct FusionUnit {
  std::vector<size_t> members;  // indices into the calls, ascending
  size_t bytes = 0;             // a pack's total bytes (members' count * type size)
  bool pack() const { return members.size() > 1; }
};

// The units of `calls` (a group's calls on one communicator, in call order), in the order they
// run. Rules, in call order:
// - An allreduce of count > 0 joins the open pack of its (type, op) when the pack stays within
//   `thetaBytes`; otherwise that pack is closed and the call opens a new one. A call of
//   `thetaBytes` or more is never packed: it runs alone, on the user's buffers, with no copy.
// - Any other call (another collective, a point-to-point call, an allreduce of count 0) closes
//   every open pack first, then runs alone: calls that are not allreduces keep their order
//   relative to the packs around them.
// - A pack is placed where its first member was; a pack of one member is that call alone.
// thetaBytes 0 turns fusion off (every call alone, in call order).
std::vector<FusionUnit> fusePlan(const std::vector<Call>& calls, size_t thetaBytes);

}  // namespace strata::core
