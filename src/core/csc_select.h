// The pure steps of coarse-grained sparse communication (CSC, GradientFlow; strataCscAllReduce):
// chunking, the number of chunks kept, the chunk norms of g = buff + r, the top-k selection and
// the pack/unpack with the residual update. No communicator, no MPI: core/csc.h runs these
// around two allreduces, and the unit tests (tests/unit/core/test_csc_select.cc) run them alone.
//
// Types: float32, float16 and bfloat16 only (cscTypeSupported). Arithmetic is in float: each
// element of g is float(buff) + float(r) rounded once to the buffer's type, and the L1 norm of
// a chunk is a float sum of |g| in element order.
#pragma once

#include <cstddef>
#include <cstdint>

#include "strata/strata.h"

namespace strata::core::csc {

bool cscTypeSupported(strataDataType_t type);

// How `count` elements are cut: chunks of `chunkElems`, the last one short when chunkElems does
// not divide count. Invariant: count > 0, chunkElems > 0, nchunks = ceil(count / chunkElems).
struct Chunking {
  size_t count = 0;
  size_t chunkElems = 0;
  size_t nchunks = 0;

  static Chunking of(size_t count, size_t chunkElems);
  size_t begin(size_t chunk) const { return chunk * chunkElems; }
  size_t size(size_t chunk) const {
    const size_t b = begin(chunk);
    return count - b < chunkElems ? count - b : chunkElems;
  }
};

// k = ceil(density * nchunks), for 0 < density <= 1, so 1 <= k <= nchunks. The product is
// taken in double and reduced by a relative 2^-23 before the ceiling: a float density is the
// decimal the caller wrote up to a relative 2^-24 (0.1f is 0.100000001...), and without the
// margin density 0.1 of 10 chunks would keep 2 chunks. A genuine fraction that small above an
// integer needs more than 2^23 chunks.
size_t keptChunks(float density, size_t nchunks);

// g = buff + r, written into `residual` (count elements of `type`), and norms[i] = the L1 norm
// of chunk i of g (float accumulation). `buff` is only read.
void accumulate(strataDataType_t type, const Chunking& ch, const void* buff, void* residual,
                float* norms);

// The `k` chunks with the largest norm, ties to the lower chunk index, written to `selected`
// in ascending chunk order (the order they are packed in, on every rank). A NaN norm ranks as
// +infinity, so a chunk holding a NaN or an infinity is sent (and shows in the result) rather
// than kept in the residual for ever. `order` is scratch of nchunks entries. Allocates nothing.
void selectTopK(const float* norms, size_t nchunks, size_t k, uint32_t* order, uint32_t* selected);

// Copies the selected chunks of `residual` (g) into `pack`, back to back in the order of
// `selected`, and zeroes them in `residual`. Returns the number of elements packed.
size_t pack(size_t typeSize, const Chunking& ch, const uint32_t* selected, size_t k, void* residual,
            void* packed);

// buff = the packed (reduced) values in the selected chunks, zero elsewhere. `selected` is in
// ascending order (as selectTopK writes it), so one pass writes every element of buff once.
void unpack(size_t typeSize, const Chunking& ch, const uint32_t* selected, size_t k,
            const void* packed, void* buff);

}  // namespace strata::core::csc
