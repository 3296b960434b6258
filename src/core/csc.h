// Coarse-grained sparse communication (CSC, after GradientFlow): the state of one
// strataCsc_t and the call that runs on a communicator. The pure steps are in core/csc_select.h.
//
// One call, on every rank (collective; include/strata/strata.h strataCscAllReduce):
//   1. g = buff + r, kept in the residual r; the L1 norm of each chunk of g;
//   2. one float32 sum allreduce of the nchunks norms: every rank holds the same summed norms
//      (strata's allreduce leaves the same bytes on every rank), so
//   3. every rank selects the same k chunks (csc::selectTopK is a function of the norms alone)
//      and packs them in the same order, so the packs line up element for element;
//   4. one allreduce of the pack with the caller's op; r = 0 in the selected chunks;
//   5. buff = the reduced pack in the selected chunks, zero elsewhere.
// Buffers (residual, norms, selection scratch, pack) are allocated once, at creation.
#pragma once

#include <cstddef>
#include <cstdint>
#include <memory>
#include <vector>

#include "common/status.h"
#include "core/comm.h"
#include "core/csc_select.h"
#include "strata/strata.h"

namespace strata::core {

class Csc {
 public:
  // The arguments were validated at the C boundary: a supported type, count > 0,
  // chunkElems > 0, 0 < density <= 1, at most 2^32 chunks.
  Csc(size_t count, strataDataType_t type, size_t chunkElems, float density);

  // The collective step above, in place on `buff` (host memory, count elements of the type).
  // Device memory is refused (strataInvalidUsage). When one of the two allreduces fails, buff
  // and the residual are unspecified (the communicator is in its error state by then, unless
  // STRATA_CHECK refused a call that ranks disagree on before it ran).
  Status allReduce(Comm& c, void* buff, strataRedOp_t op);

  // For tests and tools (internal): the residual (count elements of the type), the chunks the
  // last call selected (ascending), their number k, and the chunking.
  const void* residual() const { return residual_.data(); }
  const uint32_t* selected() const { return selected_.data(); }
  size_t kept() const { return selected_.size(); }
  const csc::Chunking& chunking() const { return chunking_; }
  strataDataType_t type() const { return type_; }

 private:
  csc::Chunking chunking_;
  strataDataType_t type_;
  size_t typeSize_;
  std::vector<unsigned char> residual_;  // r: zero at creation
  std::vector<float> norms_;             // nchunks
  std::vector<uint32_t> order_;          // nchunks: selection scratch
  std::vector<uint32_t> selected_;       // k
  std::vector<unsigned char> pack_;      // the largest pack possible: min(k chunks, count)
};

}  // namespace strata::core
