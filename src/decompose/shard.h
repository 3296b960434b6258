// Shard arithmetic: how a range of elements is cut into near-equal blocks.
#pragma once

#include <cstddef>

namespace strata::plan {

struct Block {
  size_t offset = 0;  // in elements
  size_t count = 0;
};

// Block j of `parts` near-equal blocks of [offset, offset + count): every block gets
// count / parts elements and the first count % parts blocks one more, in order, so the blocks
// tile the range exactly. Requires parts > 0 and 0 <= j < parts.
inline Block splitBlock(size_t offset, size_t count, int parts, int j) {
  const size_t p = static_cast<size_t>(parts), jj = static_cast<size_t>(j);
  const size_t base = count / p, rem = count % p;
  return Block{offset + jj * base + (jj < rem ? jj : rem), base + (jj < rem ? 1 : 0)};
}

}  // namespace strata::plan
