// Element offsets into untyped buffers: `at(base, i, ts)` is the address of element i of a
// buffer of ts-byte elements.
#pragma once

#include <cstddef>

namespace strata {

inline char* at(void* base, size_t elements, size_t ts) {
  return static_cast<char*>(base) + elements * ts;
}
inline const char* at(const void* base, size_t elements, size_t ts) {
  return static_cast<const char*>(base) + elements * ts;
}

}  // namespace strata
