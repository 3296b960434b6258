#include "common/datatype.h"

namespace strata {

size_t dataTypeSize(strataDataType_t t) {
  switch (t) {
    case strataInt8:
    case strataUint8:
      return 1;
    case strataFloat16:
    case strataBfloat16:
      return 2;
    case strataInt32:
    case strataUint32:
    case strataFloat32:
      return 4;
    case strataInt64:
    case strataUint64:
    case strataFloat64:
      return 8;
    case strataNumTypes:
      break;
  }
  return 0;
}

const char* dataTypeName(strataDataType_t t) {
  switch (t) {
    case strataInt8:
      return "int8";
    case strataUint8:
      return "uint8";
    case strataInt32:
      return "int32";
    case strataUint32:
      return "uint32";
    case strataInt64:
      return "int64";
    case strataUint64:
      return "uint64";
    case strataFloat16:
      return "float16";
    case strataFloat32:
      return "float32";
    case strataFloat64:
      return "float64";
    case strataBfloat16:
      return "bfloat16";
    case strataNumTypes:
      break;
  }
  return "unknown";
}

const char* redOpName(strataRedOp_t op) {
  switch (op) {
    case strataSum:
      return "sum";
    case strataProd:
      return "prod";
    case strataMax:
      return "max";
    case strataMin:
      return "min";
    case strataAvg:
      return "avg";
    case strataNumOps:
      break;
  }
  return "unknown";
}

bool isFloatType(strataDataType_t t) {
  return t == strataFloat16 || t == strataFloat32 || t == strataFloat64 || t == strataBfloat16;
}

}  // namespace strata
