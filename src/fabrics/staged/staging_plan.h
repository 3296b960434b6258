// How a staged collective cuts a call on device buffers into chunks that fit a pinned host
// slot (staged_fabric.h runs them). Pure: no CUDA, no MPI, so it is unit-tested anywhere.
//
// A chunk is one host collective on the slot, with the copies that fill the slot from the
// device (in) and empty it back (out). Offsets and counts are in elements:
//   allreduce:      chunk k covers elements [k*cols, (k+1)*cols) of the range;
//   broadcast:      the same elements; only the root's go in, everyone's come back;
//   reduce:         the same elements; everyone's go in, only the root's come back;
//   reduce-scatter: chunk k covers columns [k*cols, (k+1)*cols) of every member's block, packed
//                   in member order in the slot (block j's piece at hostDispls[j]); the slot
//                   is reduce-scattered in place, and this member's piece goes back;
//   all-gather:     the same columns; this member's piece goes in, every piece comes back;
//   scatter:        the same columns; the root's every piece goes in, this member's comes back;
//   gather:         the same columns; this member's piece goes in, the root gets every piece.
// Pieces of short blocks may be empty (count 0) in later chunks. The chunks of a call cover
// every element of every block exactly once, and a chunk never needs more than the slot.
#pragma once

#include <cstddef>
#include <vector>

#include "common/collective.h"

namespace strata::fabric::staging {

// The call: for the allreduce `count` elements; for the others the fabric layout contract's
// per-member counts and displacements (fabrics/fabric.h), `me` this member's position.
struct Layout {
  // allreduce, broadcast, reduce (a range), reduce-scatter, all-gather, scatter, gather (blocks)
  Collective kind = Collective::kAllReduce;
  size_t count = 0;
  int members = 1;
  int me = 0;
  const size_t* counts = nullptr;
  const size_t* displs = nullptr;
  int root = -1;  // broadcast, reduce, scatter, gather: the root's position
};

struct Copy {
  // Element offset in the device buffer the copy touches: the whole range (allreduce; the
  // reduce-scatter's input; the all-gather's output) or this member's block (the
  // reduce-scatter's output; the all-gather's input).
  size_t device = 0;
  size_t host = 0;  // element offset in the slot
  size_t count = 0;
};

struct Chunk {
  std::vector<size_t> hostCounts, hostDispls;  // the host collective's layout (not allreduce)
  size_t hostCount = 0;                        // elements of the slot in use
  std::vector<Copy> in, out;                   // device -> slot, slot -> device
};

// Columns per chunk for a slot of `slotElements`. The slot must hold at least one element per
// member (the staged fabric sizes it so).
size_t columnsPerChunk(const Layout& l, size_t slotElements);
// Number of chunks with `cols` columns each (0 for an empty call).
size_t numChunks(const Layout& l, size_t cols);
// Chunk k into `out` (its vectors are reused, so a call allocates once).
void makeChunk(const Layout& l, size_t cols, size_t k, Chunk* out);

}  // namespace strata::fabric::staging
