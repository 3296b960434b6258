// Sizes and names of strata's element types and reduction ops.
#pragma once

#include <cstddef>

#include "strata/strata.h"

namespace strata {

inline bool validDataType(int t) { return t >= 0 && t < strataNumTypes; }
inline bool validRedOp(int op) { return op >= 0 && op < strataNumOps; }

// Bytes per element; 0 for an invalid type.
size_t dataTypeSize(strataDataType_t t);
// "float32", "bfloat16", ...; "unknown" for an invalid type. The names strata-perf's -d accepts.
const char* dataTypeName(strataDataType_t t);
// "sum", "prod", "max", "min", "avg"; "unknown" for an invalid op.
const char* redOpName(strataRedOp_t op);

bool isFloatType(strataDataType_t t);

}  // namespace strata
